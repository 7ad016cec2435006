"""Go: methods qualified by their receiver's type, packages named by their package clause."""
from __future__ import annotations

import re

from codevouch.syntax.spec import LEAF, DefRule, Language, LanguageSpec

GO = Language(
    name="go",
    grammar=("tree_sitter_go", "language"),
    extensions={".go": "go"},
    syntax=LanguageSpec(
        definitions={
            "function_declaration": LEAF,
            "method_declaration": DefRule(name="go_receiver"),
            "type_spec": LEAF,
            "type_alias": LEAF,
            "short_var_declaration": DefRule(name="go_closure"),
        },
        # `type X ...` / `type ( A ...; B ... )`
        wrappers=frozenset({"type_declaration"}),
        blocks=frozenset(
            {"source_file", "block", "statement_list", "field_declaration_list", "interface_type"}
        ),
    ),
    keywordless=True,       # a name in a `type (...)` group
    keywords=("func", "type", "struct", "interface"),
    fences=("go",),
    package_clause=re.compile(r"^[ \t]*package[ \t]+([A-Za-z_]\w*)", re.MULTILINE),
)
