"""Indexer: git tree -> classify -> tree-sitter chunks -> embed (cached) -> store."""
from collections.abc import Callable

# (done, total, what): called while a build reads, chunks and embeds; the CLI draws a progress
# bar from it. Here, not in build.py: the front door names it without loading a build.
Progress = Callable[[int, int, str], None]
