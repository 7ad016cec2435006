"""The syntax layer shared by the indexer, the validator, drift and review.

- :mod:`~codevouch.syntax.lines`: ``split_lines`` (how lines are numbered), ``decode`` (bytes
  to text) and ``MODULE_SYMBOL``;
- :mod:`~codevouch.syntax.languages`: languages by extension, grammars from local wheels;
- :mod:`~codevouch.syntax.tree`: definition items (qualified names) from a tree-sitter tree;
- :mod:`~codevouch.syntax.definitions`: ``find_definitions``: symbol -> line ranges.

Importing this package loads no grammar and not tree-sitter itself: ``lines`` is
dependency-free, and the rest is imported where it is used.
"""

from codevouch.syntax.lines import MODULE_SYMBOL, decode, split_lines

__all__ = ["MODULE_SYMBOL", "decode", "split_lines"]
