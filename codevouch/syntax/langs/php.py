"""PHP: classes, interfaces, traits and enums as containers; a file's namespace is its package
(`namespace App\\Billing;` qualifies `Billing.Invoice`), never part of a symbol."""
from __future__ import annotations

import re

from codevouch.syntax.spec import CONTAINER, LEAF, Imports, Language, LanguageSpec

PHP = Language(
    name="php",
    # `language_php` reads a file with its HTML around `<?php ... ?>`; `language_php_only` reads
    # PHP alone and fails on the HTML.
    grammar=("tree_sitter_php", "language_php"),
    extensions={".php": "php"},
    syntax=LanguageSpec(
        definitions={
            "class_declaration": CONTAINER,
            "interface_declaration": CONTAINER,
            "trait_declaration": CONTAINER,
            "enum_declaration": CONTAINER,
            "function_definition": LEAF,
            "method_declaration": LEAF,
        },
        prefix=frozenset({"comment", "attribute_list"}),
        blocks=frozenset({"program", "compound_statement", "declaration_list", "enum_declaration_list",
                          "switch_block"}),
    ),
    keywords=("function", "class", "interface", "trait"),
    fences=("php",),
    # The last name of `namespace App\Billing;` (a qualifier names it as `Billing`).
    package_clause=re.compile(r"^[ \t]*namespace[ \t]+(?:\\?\w+\\)*(\w+)[ \t]*[;{]", re.MULTILINE),
    # `use App\Models\Customer;`, `use function App\Util\helper;`, `use App\{A, B as C};`: checked
    # against the namespaces the repository's files declare (`namespace App\Models;`, or a
    # `namespace App\Models { ... }` block); `require_once __DIR__ . '/x.php'` is a file beside this one.
    imports=Imports(
        re.compile(r"""[ \t]*(?:use[ \t]+(?:function[ \t]+|const[ \t]+)?(?P<names>[\w\\][^;]*);"""
                   r"""|(?:require|include)(?:_once)?[ \t(]*__DIR__[ \t]*\.[ \t]*["']/(?P<here>[^"'\n]+)["'])"""),
        separator="\\",
        declares=re.compile(r"^[ \t]*namespace[ \t]+([A-Za-z_]\w*(?:\\\w+)*)[ \t]*[;{]", re.MULTILINE),
        vendors=True),
)
