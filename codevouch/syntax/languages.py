"""Language detection and lazy tree-sitter grammar loading.

Grammars come only from the per-language ``tree-sitter-*`` wheels installed
in the environment (never downloaded).  Everything the chunker and the definition
finder need to know about a language's syntax is kept as plain data in
:data:`LANGUAGE_SPECS`, so supporting another language means adding one table entry
(plus its grammar loader in :data:`_GRAMMAR_LOADERS`, and its grammar in the extension table,
syntax/extensions.py).
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache

import tree_sitter

from codevouch import caches
from codevouch.syntax.extensions import LANGUAGE_BY_EXTENSION

__all__ = [
    "DefRule",
    "LanguageSpec",
    "LANGUAGE_BY_EXTENSION",
    "LANGUAGE_SPECS",
    "SUPPORTED_LANGUAGES",
    "detect_language",
    "get_language",
    "get_parser",
    "get_spec",
]


# Language name -> (wheel module, function returning the grammar pointer).
_GRAMMAR_LOADERS: Mapping[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    # The JavaScript grammar also parses JSX.
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
}

SUPPORTED_LANGUAGES: frozenset[str] = frozenset(_GRAMMAR_LOADERS)


@dataclass(frozen=True)
class DefRule:
    """How a node type that defines a symbol is treated.

    container:   members declared in its ``body`` field are definitions of
                 their own (qualified as ``Container.member``) and it may be
                 split into a header piece plus its members.
    name:        how the symbol name is read:
                 "field"          text of the ``name`` field
                 "string"         ``name`` field with string quotes removed
                 "go_receiver"    ``Recv.Name`` from a Go method receiver
                 "impl_type"      base type name of a Rust ``impl`` block
                 "go_closure"     ``inner`` of ``inner := func() {...}`` (only ever
                                  inside a function, so only a nested definition)
                 "js_member"      ``Obj.name`` of ``Obj.name = function () {...}``,
                                  ``Obj.prototype.name = ...`` and ``exports.name = ...``
                                  (the object a chain of plain names; ``prototype``
                                  dropped from it)
    value_types: when set, the node only counts as a definition if its
                 ``value_field`` field has one of these types (used for
                 ``const f = () => ...`` style bindings).
    value_field: the field ``value_types`` is read from (``value``; ``right``
                 for an assignment).
    """

    container: bool = False
    name: str = "field"
    value_types: frozenset[str] | None = None
    value_field: str = "value"


_LEAF = DefRule()
_CONTAINER = DefRule(container=True)


@dataclass(frozen=True)
class LanguageSpec:
    """Syntax tables for one language (see module docstring).

    definitions: node type -> rule, for nodes that define a symbol.  The chunker
                 cuts at those at module level or directly in a container body;
                 ``find_definitions`` also lists the ones nested anywhere else
                 (a function in a function, a class in a method).
    wrappers:    node types that are a definition iff one of their direct
                 named children is (decorators, ``export``, declarations that
                 hold ``const f = () => {}`` declarators ...).  The wrapper's
                 full range belongs to the definition.
    transparent: node types inside a container body whose children are
                 members of that container (e.g. Java ``enum_body_declarations``).
    prefix:      node types that belong to the *next* sibling when directly
                 above it without a blank line (comments, attributes,
                 sibling decorators).
    blocks:      node types whose direct children are statement-like; their
                 end lines are preferred cut points when a definition has to
                 be split into line windows.
    anonymous:   node types whose members have no name to qualify them by (a
                 Java anonymous class): definitions inside are not listed.
    """

    definitions: Mapping[str, DefRule]
    wrappers: frozenset[str] = frozenset()
    transparent: frozenset[str] = frozenset()
    prefix: frozenset[str] = frozenset({"comment"})
    blocks: frozenset[str] = frozenset()
    anonymous: frozenset[str] = frozenset()


_JS_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)

_JS_DEFINITIONS: Mapping[str, DefRule] = {
    "class_declaration": _CONTAINER,
    "function_declaration": _LEAF,
    "generator_function_declaration": _LEAF,
    "method_definition": _LEAF,
    # `const f = () => ...` / `let g = function () {...}`
    "variable_declarator": DefRule(value_types=_JS_FUNCTION_VALUES),
    # `options._root = (vnode) => {...}`, `Suspense.prototype.render = function () {...}`,
    # `exports.parse = function parse() {...}`: how much JavaScript defines its functions
    "assignment_expression": DefRule(name="js_member", value_types=_JS_FUNCTION_VALUES, value_field="right"),
}

_TS_DEFINITIONS: Mapping[str, DefRule] = {
    **_JS_DEFINITIONS,
    "abstract_class_declaration": _CONTAINER,
    "interface_declaration": _CONTAINER,
    "internal_module": _CONTAINER,  # namespace N.M { ... }
    "module": DefRule(container=True, name="string"),  # declare module "x" { ... }
    "type_alias_declaration": _LEAF,
    "enum_declaration": _LEAF,
    "function_signature": _LEAF,  # overloads / declare function
    "method_signature": _LEAF,
    "abstract_method_signature": _LEAF,
}

# An expression statement holds `X.y = function () {}` (and, in TypeScript, `namespace X {}`).
_JS_WRAPPERS = frozenset({"export_statement", "lexical_declaration", "variable_declaration", "expression_statement"})
# `declare ...` is ambient.
_TS_WRAPPERS = _JS_WRAPPERS | {"ambient_declaration"}
_JS_PREFIX = frozenset({"comment", "decorator"})
_JS_BLOCKS = frozenset(
    {"program", "statement_block", "class_body", "switch_body", "switch_case",
     "interface_body", "enum_body", "object_type"}
)

_TS_SPEC = LanguageSpec(
    definitions=_TS_DEFINITIONS,
    wrappers=_TS_WRAPPERS,
    prefix=_JS_PREFIX,
    blocks=_JS_BLOCKS,
)

LANGUAGE_SPECS: Mapping[str, LanguageSpec] = {
    "python": LanguageSpec(
        definitions={
            "class_definition": _CONTAINER,
            "function_definition": _LEAF,
        },
        wrappers=frozenset({"decorated_definition"}),
        blocks=frozenset({"module", "block"}),
    ),
    "javascript": LanguageSpec(
        definitions=_JS_DEFINITIONS,
        wrappers=_JS_WRAPPERS,
        prefix=_JS_PREFIX,
        blocks=_JS_BLOCKS,
    ),
    "typescript": _TS_SPEC,
    "tsx": _TS_SPEC,  # the same node types; only the grammar differs
    "go": LanguageSpec(
        definitions={
            "function_declaration": _LEAF,
            "method_declaration": DefRule(name="go_receiver"),
            "type_spec": _LEAF,
            "type_alias": _LEAF,
            "short_var_declaration": DefRule(name="go_closure"),
        },
        # `type X ...` / `type ( A ...; B ... )`
        wrappers=frozenset({"type_declaration"}),
        blocks=frozenset(
            {"source_file", "block", "statement_list", "field_declaration_list", "interface_type"}
        ),
    ),
    "rust": LanguageSpec(
        definitions={
            "function_item": _LEAF,
            "function_signature_item": _LEAF,
            "struct_item": _LEAF,
            "enum_item": _LEAF,
            "union_item": _LEAF,
            "type_item": _LEAF,
            "macro_definition": _LEAF,
            "trait_item": _CONTAINER,
            "impl_item": DefRule(container=True, name="impl_type"),
            "mod_item": _CONTAINER,
        },
        prefix=frozenset({"line_comment", "block_comment", "attribute_item"}),
        blocks=frozenset(
            {"source_file", "block", "declaration_list", "match_block",
             "field_declaration_list", "enum_variant_list"}
        ),
    ),
    "java": LanguageSpec(
        definitions={
            "class_declaration": _CONTAINER,
            "interface_declaration": _CONTAINER,
            "enum_declaration": _CONTAINER,
            "record_declaration": _CONTAINER,
            "annotation_type_declaration": _CONTAINER,
            "method_declaration": _LEAF,
            "constructor_declaration": _LEAF,
            "compact_constructor_declaration": _LEAF,
        },
        transparent=frozenset({"enum_body_declarations"}),
        anonymous=frozenset({"object_creation_expression"}),
        prefix=frozenset({"line_comment", "block_comment"}),
        blocks=frozenset(
            {"program", "block", "class_body", "constructor_body", "interface_body",
             "enum_body", "enum_body_declarations", "switch_block",
             "switch_block_statement_group"}
        ),
    ),
}


def detect_language(path: str) -> str | None:
    """Language name for a file path by its extension, or None if unsupported."""
    ext = os.path.splitext(path)[1].lower()
    return LANGUAGE_BY_EXTENSION.get(ext)


def get_spec(name: str) -> LanguageSpec:
    """Syntax tables for a supported language (KeyError otherwise)."""
    return LANGUAGE_SPECS[name]


@caches.clearable
@cache
def get_language(name: str) -> tree_sitter.Language:
    """The tree-sitter Language for ``name``; loaded once from its wheel."""
    try:
        module_name, func_name = _GRAMMAR_LOADERS[name]
    except KeyError:
        raise ValueError(f"unsupported language: {name!r}") from None
    loader: Callable[[], object] = getattr(importlib.import_module(module_name), func_name)
    return tree_sitter.Language(loader())


# Parsers hold mutable state, so each thread gets its own cached set. Clearing (caches.py) moves
# to a new generation: every thread's set is made anew on its next use.
_parsers = threading.local()
_generation = [0]


def get_parser(name: str) -> tree_sitter.Parser:
    """A cached tree-sitter Parser for ``name`` (one per thread)."""
    cache = _thread_parsers()
    if cache is None:
        cache = _parsers.cache = {}
        _parsers.generation = _generation[0]
    parser = cache.get(name)
    if parser is None:
        parser = cache[name] = tree_sitter.Parser(get_language(name))
    return parser


def _thread_parsers() -> dict[str, tree_sitter.Parser] | None:
    cache: dict[str, tree_sitter.Parser] | None = getattr(_parsers, "cache", None)
    return cache if cache is not None and getattr(_parsers, "generation", None) == _generation[0] else None


def _clear_parsers() -> None:
    _generation[0] += 1
    _parsers.cache = None


caches.register("codevouch.syntax.languages.get_parser", _clear_parsers, lambda: len(_thread_parsers() or ()))
