"""C++: C's tables plus namespaces and classes as containers, out-of-class methods named as
their class's members (`void Book::settle() {}` in `namespace billing` is
`billing.Book.settle`, as its declaration in the class is), templates as wrappers.

A `.h` is C++'s when its text uses syntax C does not have (a class, a namespace, a template,
an access label, `Name::member`), else C's: one rule per file, the same whichever command
reads it."""
from __future__ import annotations

import re

from codevouch.syntax.langs import c
from codevouch.syntax.spec import DefRule, Language, LanguageSpec

_CLASS_BODY = frozenset({"field_declaration_list"})
_CLASS = DefRule(container=True, name="scoped", value_field="body", value_types=_CLASS_BODY)

CPP_ONLY = re.compile(
    r"^[ \t]*(?:class[ \t]+\w+[ \t]*(?:final[ \t]*)?(?::[^:]|\{|;|$)|struct[ \t]+\w+[ \t]*(?:final[ \t]*)?:[^:]"
    r"|namespace\b|template[ \t]*<"
    r"|(?:public|private|protected)[ \t]*:|using[ \t]+(?:namespace\b|\w+[ \t]*=))"
    r"|\b[A-Za-z_]\w*::~?[A-Za-z_]\w*", re.MULTILINE)

# `class LEVELDB_EXPORT DB {`, `struct GTEST_API_ TestInfo :`: an upper-case word between the
# keyword and the name is a macro (an export or visibility attribute); the grammar reads the
# whole head as a function's, so the macro is blanked before the parse.
EXPORT_MACRO = re.compile(r"\b(?:class|struct|union)[ \t]+([A-Z][A-Z0-9_]*[A-Z0-9_])[ \t]+"
                          r"(?=(?!final\b)[A-Za-z_][\w:]*[ \t]*(?:final\b[ \t]*)?[:{;\n])")

CPP = Language(
    name="cpp",
    grammar=("tree_sitter_cpp", "language"),
    extensions={".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".c++": "cpp", ".hpp": "cpp", ".hh": "cpp",
                ".hxx": "cpp", ".h++": "cpp", ".h": "cpp"},
    syntax=LanguageSpec(
        definitions={
            **c.DEFINITIONS,
            "struct_specifier": _CLASS,
            "class_specifier": _CLASS,
            "union_specifier": _CLASS,
            "enum_specifier": DefRule(name="scoped", value_field="body", value_types=frozenset({"enumerator_list"})),
            # A method declared in its class: `void settle(int n);`
            "field_declaration": DefRule(name="declarator", nested=False),
            "namespace_definition": DefRule(container=True, name="scoped"),
            "linkage_specification": DefRule(container=True),   # extern "C" { ... }: no name
            "alias_declaration": DefRule(),
            "concept_definition": DefRule(),
        },
        wrappers=c.WRAPPERS | {"field_declaration", "template_declaration"},
        transparent=c.TRANSPARENT,
        anonymous=frozenset({"type_definition", "lambda_expression"}),
        blocks=c.BLOCKS,
        blank=EXPORT_MACRO,
    ),
    keywordless=True,       # a function or method has no keyword before its name
    keywords=("class", "struct", "union", "enum"),   # not `namespace`: `using namespace std`
    fences=("cpp", "c++", "cc", "cxx", "hpp"),
    declarations=(".h", ".hh", ".hpp", ".hxx", ".h++"),
    claims=CPP_ONLY,
    tests=("*_test.cc", "*_test.cpp", "*_unittest.cc", "*_unittest.cpp", "test_*.cpp", "*Test.cpp", "*Tests.cpp"),
    generated=("moc_*.cpp", "qrc_*.cpp", "*.pb.cpp"),
)
