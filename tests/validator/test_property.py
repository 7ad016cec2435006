"""Property: whatever edits happen, a snippet is never usable or stale-but-ok unless its text
is present, as whole lines, in the current working-tree file."""
from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codevouch.validator import to_json, validate
from tests.validator_helpers import Repo, lines_of

BASE = '''import os


class Cart:
    def __init__(self):
        self.items = []

    def add(self, item):
        self.items.append(item)
        return len(self.items)

    def total(self):
        return sum(i.price for i in self.items)


def helper(x):
    return x * 2


def other(y):
    return y + 1
'''
PATH = "shop/cart.py"
RANGES = [(4, 13, "Cart"), (8, 10, "Cart.add"), (12, 13, "Cart.total"), (16, 17, "helper"),
          (20, 21, "other"), (1, 1, "<module>"), (9, 12, "Cart.add, Cart.total")]
POOL = ["", "    return x * 2", "        return len(self.items)", "def helper(x):", "    pass",
        "# note", "        self.items.append(item)", "    def add(self, item):", "x = 1",
        "class Cart:", "\treturn y"]

Edit = tuple[str, int, str]
edits = st.lists(st.tuples(st.sampled_from(["insert", "delete", "modify"]), st.integers(0, 40),
                           st.sampled_from(POOL)), max_size=6)


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, str]:
    repo = Repo.create(tmp_path_factory.mktemp("prop") / "repo")
    repo.write(PATH, BASE)
    return repo, repo.commit("base")


def apply(text: str, changes: list[Edit]) -> str:
    lines = text.split("\n")
    for op, pos, line in changes:
        i = pos % (len(lines) + 1)
        if op == "insert":
            lines.insert(i, line)
        elif op == "delete" and lines and i < len(lines):
            del lines[i]
        elif op == "modify" and lines and i < len(lines):
            lines[i] = line
    return "\n".join(lines)


def present(text: str, content: str) -> bool:
    """An independent, naive whole-line search."""
    needle, hay = text.split("\n"), content.split("\n")
    return any(hay[i:i + len(needle)] == needle for i in range(len(hay) - len(needle) + 1))


def make_snippets(repo: Repo, base: str, head: str, head_text: str, poison: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    base_blob = repo.blob(base, PATH)
    head_blob = repo.blob(head, PATH)
    for n, (start, end, symbol) in enumerate(RANGES):
        text = lines_of(BASE, start, end)
        common = {"path": PATH, "start_line": start, "end_line": end, "symbol": symbol}
        items.append({**common, "commit": base, "blob_sha": base_blob, "text": text})
        items.append({**common, "commit": base})                             # text read from git
        items.append({**common, "text": text})                               # no version metadata
        items.append({**common, "commit": head, "text": text})               # claims HEAD
        items.append({**common, "commit": head, "blob_sha": head_blob,
                      "text": lines_of(head_text, start, end)})
        if n == poison % len(RANGES):                                         # a lying snippet
            items.append({**common, "commit": base, "blob_sha": base_blob, "text": text + "  # evil"})
            items.append({**common, "commit": head, "text": "import evil\n" + text})
    return items


# CODEVOUCH_PROP_EXAMPLES=1000 for a longer hunt; 40 keeps the suite fast.
@settings(max_examples=int(os.environ.get("CODEVOUCH_PROP_EXAMPLES", "40")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(committed=edits, uncommitted=edits, commit_first=st.booleans(), poison=st.integers(0, 100),
       strict=st.booleans())
def test_never_usable_unless_text_present(shop: tuple[Repo, str], committed: list[Edit],
                                          uncommitted: list[Edit], commit_first: bool, poison: int,
                                          strict: bool) -> None:
    repo, base = shop
    repo.write(PATH, apply(BASE, committed))
    if commit_first:
        repo.commit("edit")
    head = repo.head()
    head_text = repo.show(head, PATH)
    repo.write(PATH, apply(repo.read(PATH), uncommitted))
    current = repo.read(PATH)
    items = make_snippets(repo, base, head, head_text, poison)
    for item, result in zip(items, validate(repo.root, items, strict=strict)):
        out = to_json(result)
        text = item.get("text")
        if text is None:   # the snippet's text is what git holds at its commit
            text = lines_of(repo.show(item["commit"], PATH), item["start_line"], item["end_line"])
        if out["verdict"] in ("usable", "stale-but-ok") and text:   # "" is no text at all
            assert present(text, current), (item, out)
            cur = out["current"]
            assert cur is not None and cur["text"] == text
            assert lines_of(current, cur["start_line"], cur["end_line"]) == text
        if out["current"] is not None and out["current"]["path"] == PATH:
            cur = out["current"]
            assert lines_of(current, cur["start_line"], cur["end_line"]) == cur["text"]
        if "evil" in text:
            assert out["verdict"] not in ("usable", "stale-but-ok") or present(text, current)
