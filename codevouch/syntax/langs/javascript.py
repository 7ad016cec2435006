"""JavaScript, JSX included (the JavaScript grammar parses it). TypeScript builds on these
tables (langs/typescript.py)."""
from __future__ import annotations

from collections.abc import Mapping

from codevouch.syntax.spec import CONTAINER, LEAF, DefRule, Language, LanguageSpec

FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})

DEFINITIONS: Mapping[str, DefRule] = {
    "class_declaration": CONTAINER,
    "function_declaration": LEAF,
    "generator_function_declaration": LEAF,
    "method_definition": LEAF,
    # `const f = () => ...` / `let g = function () {...}`
    "variable_declarator": DefRule(value_types=FUNCTION_VALUES),
    # `options._root = (vnode) => {...}`, `Suspense.prototype.render = function () {...}`,
    # `exports.parse = function parse() {...}`: how much JavaScript defines its functions
    "assignment_expression": DefRule(name="js_member", value_types=FUNCTION_VALUES, value_field="right"),
}

# An expression statement holds `X.y = function () {}` (and, in TypeScript, `namespace X {}`).
WRAPPERS = frozenset({"export_statement", "lexical_declaration", "variable_declaration", "expression_statement"})
PREFIX = frozenset({"comment", "decorator"})
BLOCKS = frozenset(
    {"program", "statement_block", "class_body", "switch_body", "switch_case",
     "interface_body", "enum_body", "object_type"}
)

JAVASCRIPT = Language(
    name="javascript",
    grammar=("tree_sitter_javascript", "language"),
    extensions={".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "jsx"},
    syntax=LanguageSpec(definitions=DEFINITIONS, wrappers=WRAPPERS, prefix=PREFIX, blocks=BLOCKS),
    keywordless=True,       # `flush() {`, `get value() {`, `const f = () =>`
    keywords=("function", "class"),
    fences=("js", "javascript", "jsx"),
    directory_stems=("index",),
    relative_specifiers=True,
)
