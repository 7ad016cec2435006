"""TypeScript and TSX: the same node types, two grammars of one wheel; `.d.ts` declarations."""
from __future__ import annotations

from collections.abc import Mapping

from codevouch.syntax.langs import javascript
from codevouch.syntax.spec import CONTAINER, LEAF, DefRule, Language, LanguageSpec

DEFINITIONS: Mapping[str, DefRule] = {
    **javascript.DEFINITIONS,
    "abstract_class_declaration": CONTAINER,
    "interface_declaration": CONTAINER,
    "internal_module": CONTAINER,  # namespace N.M { ... }
    "module": DefRule(container=True, name="string"),  # declare module "x" { ... }
    "type_alias_declaration": LEAF,
    "enum_declaration": LEAF,
    "function_signature": LEAF,  # overloads / declare function
    "method_signature": LEAF,
    "abstract_method_signature": LEAF,
}

SYNTAX = LanguageSpec(
    definitions=DEFINITIONS,
    wrappers=javascript.WRAPPERS | {"ambient_declaration"},     # `declare ...` is ambient
    prefix=javascript.PREFIX,
    blocks=javascript.BLOCKS,
    # What declares and does nothing: an interface, a type alias, an overload's or an abstract
    # method's signature, a `declare ...` (a chunk of these alone ranks after bodies)
    bodiless=frozenset({"interface_declaration", "type_alias_declaration", "function_signature", "method_signature",
                        "abstract_method_signature", "ambient_declaration"}),
)

TYPESCRIPT = Language(
    name="typescript",
    grammar=("tree_sitter_typescript", "language_typescript"),
    extensions={".ts": "typescript", ".mts": "typescript", ".cts": "typescript"},
    syntax=SYNTAX,
    keywordless=True,
    keywords=("function", "class", "interface", "type", "enum"),
    fences=("ts", "typescript"),
    declarations=(".d.ts", ".d.mts", ".d.cts"),
    directory_stems=("index",),
    relative_specifiers=True,
)

TSX = Language(
    name="tsx",
    grammar=("tree_sitter_typescript", "language_tsx"),
    extensions={".tsx": "tsx"},
    syntax=SYNTAX,
    keywordless=True,
    keywords=TYPESCRIPT.keywords,
    fences=("tsx",),
    directory_stems=("index",),
    relative_specifiers=True,
)
