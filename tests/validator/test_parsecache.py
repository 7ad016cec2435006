"""validator/parsecache.py: definitions kept by content across validate() calls."""
from __future__ import annotations

from pathlib import Path

from codevouch.validator import clear_caches, to_json, validate
from codevouch.validator.parsecache import CACHE, ParseCache
from tests.validator_helpers import Repo, find_line, snippet


def test_a_text_is_computed_once_and_a_changed_text_again() -> None:
    cache, calls = ParseCache(), []

    def compute(text: str) -> dict[str, list[tuple[int, int]]]:
        calls.append(text)
        return {text: [(1, 1)]}

    first = cache.get("piece", "python", "def f(): pass", lambda: compute("def f(): pass"))
    assert cache.get("piece", "python", "def f(): pass", lambda: compute("def f(): pass")) is first
    cache.get("piece", "python", "def g(): pass", lambda: compute("def g(): pass"))
    cache.get("file", "python", "def f(): pass", lambda: compute("def f(): pass"))     # another kind
    cache.get("piece", "javascript", "def f(): pass", lambda: compute("def f(): pass"))  # another language
    assert calls == ["def f(): pass", "def g(): pass", "def f(): pass", "def f(): pass"]
    cache.clear()
    cache.get("piece", "python", "def f(): pass", lambda: compute("def f(): pass"))
    assert len(calls) == 5 and len(cache) == 1


def test_the_least_recently_used_texts_leave_first_and_a_huge_one_is_never_held() -> None:
    cache = ParseCache(max_chars=10, max_entry_chars=6)
    for text in ("aaaa", "bbbb"):
        cache.get("file", "python", text, lambda text=text: text)
    cache.get("file", "python", "aaaa", lambda: "recomputed")   # used again: now the newest
    cache.get("file", "python", "cccc", lambda: "cccc")         # 12 chars held > 10: bbbb leaves
    assert cache.get("file", "python", "aaaa", lambda: "recomputed") == "aaaa"
    assert cache.get("file", "python", "bbbb", lambda: "recomputed") == "recomputed"
    assert cache.get("file", "python", "x" * 7, lambda: "huge") == "huge"
    assert cache.get("file", "python", "x" * 7, lambda: "again") == "again"


SOURCE = ("import os\n\n\nclass Store:\n    def load(self, key):\n        value = os.environ.get(key)\n"
          "        return value or ''\n\n    def save(self, key, value):\n        os.environ[key] = value\n")


def test_verdicts_are_the_same_with_the_cache_cold_warm_and_emptied(tmp_path: Path) -> None:
    repo = Repo.create(tmp_path / "repo")
    repo.commit_files({"store.py": SOURCE}, "store")
    start = find_line(SOURCE, "def load")
    items = [snippet(repo, "store.py", start, start + 2, symbol="Store.load"),
             snippet(repo, "store.py", start + 4, start + 5, symbol="Store.save")]
    # Code pushed down one line (named by a parse of its block) and a changed body (the
    # symbol's code now, found by a parse).
    repo.write("store.py", "# header\n" + SOURCE.replace("os.environ[key] = value", "os.environ[key] = str(value)"))
    clear_caches()
    cold = [to_json(v) for v in validate(repo.root, items)]
    assert len(CACHE) > 0
    warm = [to_json(v) for v in validate(repo.root, items)]
    clear_caches()
    assert len(CACHE) == 0
    again = [to_json(v) for v in validate(repo.root, items)]
    assert cold == warm == again
    assert [(v["reason"], v["current"]["symbol"], v["current"]["start_line"]) for v in cold] == \
        [("chunk-moved", "Store.load", start + 1), ("content-changed", "Store.save", start + 5)]
