"""Indexer: git tree -> classify -> tree-sitter chunks -> embed (cached) -> store."""
