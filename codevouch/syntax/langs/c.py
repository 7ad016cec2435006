"""C: functions by their declarator's name, prototypes in headers as declarations (`.h` ranks
after the `.c` that defines the same name), structs, unions, enums and typedefs; `#if` blocks
and include guards are transparent. A `.h` is C++'s when its text uses C++ (langs/cpp.py)."""
from __future__ import annotations

from collections.abc import Mapping

from codevouch.syntax.spec import DefRule, Language, LanguageSpec

# `struct s { ... }` defines s; `struct s *p` only names it.
_WITH_FIELDS = DefRule(value_field="body", value_types=frozenset({"field_declaration_list"}))

DEFINITIONS: Mapping[str, DefRule] = {
    "function_definition": DefRule(name="declarator"),
    # A prototype `int settle(struct invoice *inv);`, at top level only: inside a function the
    # same syntax may declare a variable.
    "declaration": DefRule(name="declarator", nested=False),
    "struct_specifier": _WITH_FIELDS,
    "union_specifier": _WITH_FIELDS,
    "enum_specifier": DefRule(value_field="body", value_types=frozenset({"enumerator_list"})),
    "type_definition": DefRule(name="declared_type"),
    "preproc_function_def": DefRule(),
}

# `struct s {...} x;` is a declaration holding a definition; `typedef struct {...} t;` names the
# struct by its typedef (the struct inside is not listed again: `anonymous`).
WRAPPERS = frozenset({"declaration"})
TRANSPARENT = frozenset({"preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef"})
BLOCKS = frozenset({"translation_unit", "compound_statement", "field_declaration_list", "enumerator_list",
                    "case_statement", "declaration_list", *TRANSPARENT})

C = Language(
    name="c",
    grammar=("tree_sitter_c", "language"),
    extensions={".c": "c", ".h": "c"},
    syntax=LanguageSpec(
        definitions=DEFINITIONS,
        wrappers=WRAPPERS,
        transparent=TRANSPARENT,
        anonymous=frozenset({"type_definition"}),
        blocks=BLOCKS,
    ),
    keywordless=True,       # a function has no keyword before its name
    keywords=("struct", "union", "enum"),
    fences=("c", "h"),
    declarations=(".h",),
    tests=("*_test.c", "test_*.c", "*_unittest.c"),
    generated=("*.pb-c.c", "*.pb-c.h"),
)
