"""One hit per definition: pure logic over records."""
from __future__ import annotations

from codevouch.retriever.collapse import collapse
from codevouch.store import ChunkRecord


def rec(path: str, symbol: str, start: int, end: int, blob: str = "b1") -> ChunkRecord:
    return ChunkRecord(f"{path}:{start}", "/r", path, "main", "c", "d", symbol, start, end, "t", blob, "h",
                       "source", "python", "live")


def test_windows_of_one_definition_become_one_hit_spanning_them() -> None:
    items = [(rec("a.py", "Big.run", 40, 60), 0.9), (rec("b.py", "other", 1, 5), 0.8),
             (rec("a.py", "Big.run", 20, 39), 0.7), (rec("a.py", "<module>", 1, 3), 0.6),
             (rec("a.py", "<module>", 90, 95), 0.5), (rec("a.py", "Big.run", 20, 39, blob="b2"), 0.4)]
    out = collapse(items)
    assert [(r.path, r.symbol, r.start_line, r.end_line, r.blob_sha, s) for r, s in out] == [
        ("a.py", "Big.run", 20, 60, "b1", 0.9),      # best rank and score, lines of both windows
        ("b.py", "other", 1, 5, "b1", 0.8),
        ("a.py", "<module>", 1, 3, "b1", 0.6),       # top-level code is no one definition
        ("a.py", "<module>", 90, 95, "b1", 0.5),
        ("a.py", "Big.run", 20, 39, "b2", 0.4)]      # another version of the file stays apart
