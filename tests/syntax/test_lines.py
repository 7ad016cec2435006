"""codevouch.syntax.lines: line numbering and decoding that the indexer and validator share."""
from __future__ import annotations

from codevouch.syntax.lines import BINARY_SNIFF, MODULE_SYMBOL, decode, split_lines


def test_lines_split_on_newline_only_so_numbers_match_tree_sitter() -> None:
    assert split_lines("a\nb") == ["a", "b"]
    assert split_lines("a\r\nb\n") == ["a\r", "b", ""]          # a carriage return stays in its line
    assert split_lines("one\x0btwo\u2028three") == ["one\x0btwo\u2028three"]   # not str.splitlines
    assert split_lines("") == [""]
    text = "x = 1\ndef f():\n    return 2\n"
    assert "\n".join(split_lines(text)[1:3]) == "def f():\n    return 2"


def test_decode_is_utf8_when_it_can_be_and_latin1_otherwise_losing_no_byte() -> None:
    assert decode("café ✓".encode()) == "café ✓"
    raw = b"caf\xe9 \xff\x00"
    assert decode(raw) == "café ÿ\x00"
    assert decode(raw).encode("latin-1") == raw


def test_shared_constants() -> None:
    assert MODULE_SYMBOL == "<module>"
    assert BINARY_SNIFF == 8000          # git's own "binary" heuristic
