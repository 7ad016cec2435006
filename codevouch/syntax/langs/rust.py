"""Rust: `impl` blocks qualify their methods by the type; `mod.rs`, `lib.rs` and `main.rs` name
their directory."""
from __future__ import annotations

from codevouch.syntax.spec import CONTAINER, LEAF, DefRule, Language, LanguageSpec

RUST = Language(
    name="rust",
    grammar=("tree_sitter_rust", "language"),
    extensions={".rs": "rust"},
    syntax=LanguageSpec(
        definitions={
            "function_item": LEAF,
            "function_signature_item": LEAF,
            "struct_item": LEAF,
            "enum_item": LEAF,
            "union_item": LEAF,
            "type_item": LEAF,
            "macro_definition": LEAF,
            "trait_item": CONTAINER,
            "impl_item": DefRule(container=True, name="impl_type"),
            "mod_item": CONTAINER,
        },
        prefix=frozenset({"line_comment", "block_comment", "attribute_item"}),
        blocks=frozenset(
            {"source_file", "block", "declaration_list", "match_block",
             "field_declaration_list", "enum_variant_list"}
        ),
    ),
    keywords=("fn", "struct", "enum", "trait", "type", "macro_rules"),
    fences=("rust", "rs"),
    directory_stems=("mod", "lib", "main"),
)
