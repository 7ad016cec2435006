"""decide() over hand-built facts: the pure core, one case per reason code, no repository.

The facts factory below stands in for gather(): what git would have said (HEAD, the blob
each snippet's commit holds, the working tree's files and blob ids) is written down by hand.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import pytest

from codevouch.validator.decide import decide
from codevouch.validator.facts import Facts, WorkFile
from codevouch.validator.model import MALFORMED, NOT_HERE, REASONS, Snippet
from codevouch.worktree import gitio
from codevouch.worktree.files import TooLarge
from codevouch.worktree.paths import Located
from codevouch.worktree.rules import load_rules_text

HEAD, OLD, GONE = "a" * 40, "b" * 40, "c" * 40
B_NOW, B_OLD = "1" * 40, "2" * 40
HELPER = "def helper(x):\n    return x * 2"
ORDERS = f"import os\n\n\n{HELPER}\n\n\ndef other():\n    return 0\n"


def facts(files: Mapping[str, str] | None = None, *, blobs: Mapping[str, str] | None = None,
          at: Mapping[tuple[str, str], str] | None = None, dirty: tuple[str, ...] = (),
          outside: Mapping[str, str] | None = None, **extra: object) -> Facts:
    """files: working tree (path -> text); blobs: their blob ids as git would hash them;
    at: (commit, path) -> blob id in that commit; outside: given path -> why it is outside."""
    files = dict(files or {})
    known = set(files) | {p for _, p in (at or {})}
    located = {p: Located(p, p, p, None, p in files) for p in known}
    located |= {p: Located(p, None, None, why) for p, why in (outside or {}).items()}
    objects = {"HEAD": (HEAD, "commit"), HEAD: (HEAD, "commit"), OLD: (OLD, "commit")}
    objects |= {f"{c}:{p}": (b, "blob") for (c, p), b in (at or {}).items()}
    work = {p: WorkFile(t, (blobs or {}).get(p)) for p, t in files.items()}
    return Facts(Path("/repo"), HEAD, gitio.WorktreeStatus(frozenset(dirty), frozenset()),
                 load_rules_text(None, None), located, work, objects, **extra)  # type: ignore[arg-type]


def helper_snippet(commit: str | None = OLD, path: str = "orders.py", **kw: object) -> Snippet:
    fields: dict[str, object] = {"path": path, "commit": commit, "text": HELPER, "symbol": "helper",
                                 "start_line": 4, "end_line": 5}
    fields.update(kw)
    return Snippet(**fields)  # type: ignore[arg-type]


CASES: dict[str, tuple[Snippet, Facts]] = {
    "same-commit": (helper_snippet(HEAD), facts({"orders.py": ORDERS}, at={(HEAD, "orders.py"): B_NOW})),
    "same-worktree": (helper_snippet(None, origin="uncommitted", blob_sha=B_NOW),
                      facts({"orders.py": ORDERS}, blobs={"orders.py": B_NOW}, dirty=("orders.py",))),
    "same-content": (helper_snippet(), facts({"orders.py": ORDERS}, blobs={"orders.py": B_OLD},
                                             at={(OLD, "orders.py"): B_OLD}, dirty=("orders.py",))),
    "chunk-moved": (helper_snippet(), facts({"orders.py": "# new line\n" + ORDERS}, blobs={"orders.py": B_NOW},
                                            at={(OLD, "orders.py"): B_OLD})),
    "text-found": (helper_snippet(None), facts({"orders.py": ORDERS})),
    "moved-elsewhere": (helper_snippet(), facts(
        {"orders.py": "import os\n", "util.py": "X = 1\n\n" + HELPER + "\n"}, blobs={"orders.py": B_NOW},
        at={(OLD, "orders.py"): B_OLD}, elsewhere={"def helper(x):": ("util.py",)})),
    "content-changed": (helper_snippet(), facts({"orders.py": ORDERS.replace("x * 2", "x * 3")},
                                                blobs={"orders.py": B_NOW}, at={(OLD, "orders.py"): B_OLD})),
    "moved-and-changed": (helper_snippet(), facts(
        {"orders.py": "import os\n", "util.py": HELPER.replace("2", "4") + "\n"}, blobs={"orders.py": B_NOW},
        at={(OLD, "orders.py"): B_OLD}, elsewhere={"def helper(x):": ("util.py",)})),
    "symbol-removed": (helper_snippet(), facts({"orders.py": "import os\n"}, blobs={"orders.py": B_NOW},
                                               at={(OLD, "orders.py"): B_OLD})),
    "text-mismatch": (helper_snippet(HEAD, text="def helper(x):\n    return 'forged'"),
                      facts({"orders.py": ORDERS}, at={(HEAD, "orders.py"): B_NOW})),
    "commit-gone": (helper_snippet(GONE, text=None), facts({"orders.py": ORDERS}, blobs={"orders.py": B_NOW})),
    "file-deleted": (helper_snippet(), facts({}, at={(OLD, "orders.py"): B_OLD})),
    # The same blob id at the new path: the same code, renamed.
    "file-renamed": (helper_snippet(), facts({"shop/orders.py": ORDERS}, blobs={"shop/orders.py": B_OLD},
                                             at={(OLD, "orders.py"): B_OLD},
                                             renames={(OLD, "orders.py"): "shop/orders.py"})),
    # Changed where the snippet's text was: a rename that changed only other lines is the
    # window rule's (stale-but-ok by its text, validator/verbatim.py).
    "renamed-and-changed": (helper_snippet(), facts({"shop/orders.py": ORDERS.replace("x * 2", "x * 3")},
                                                    blobs={"shop/orders.py": B_NOW},
                                                    at={(OLD, "orders.py"): B_OLD},
                                                    renames={(OLD, "orders.py"): "shop/orders.py"})),
    # Not in the snippet's commit (nor in the working tree): a path its version never had.
    "path-never-existed": (helper_snippet(path="retry.py"),
                           replace(facts(), located={"retry.py": Located("retry.py", "retry.py", "retry.py",
                                                                         None, False)})),
    "no-version-metadata": (helper_snippet(None, text="def helper(x):\n    return 'elsewhere'"),
                            facts({"orders.py": ORDERS})),
    "generated": (helper_snippet(None, path="api_pb2.py"), facts({"api_pb2.py": ORDERS})),
    "vendored": (helper_snippet(None, path="vendor/orders.py"), facts({"vendor/orders.py": ORDERS})),
    "backup": (helper_snippet(None, path="orders.py.orig"), facts({"orders.py.orig": ORDERS})),
    "fixture": (helper_snippet(None, path="tests/fixtures/orders.py"), facts({"tests/fixtures/orders.py": ORDERS})),
    # Even with the file's own text at HEAD and clean: git ignores it, so it is never looked at.
    "ignored": (helper_snippet(HEAD, path=".env.py"),
                facts({".env.py": ORDERS}, at={(HEAD, ".env.py"): B_NOW}, blobs={".env.py": B_NOW},
                      ignored={".env.py": ".gitignore:1: .env*"})),
    "outside-repo": (helper_snippet(None, path="../orders.py"),
                     facts(outside={"../orders.py": "the path has '..' components"})),
    "unknown-blob": (helper_snippet(HEAD, blob_sha="9" * 40),
                     facts({"orders.py": ORDERS}, blobs={"orders.py": B_NOW}, at={(HEAD, "orders.py"): B_NOW},
                           dirty=("orders.py",))),
    "lines-out-of-range": (helper_snippet(HEAD, start_line=40, end_line=44),
                           facts({"orders.py": ORDERS}, at={(HEAD, "orders.py"): B_NOW})),
    "too-large": (helper_snippet(HEAD), replace(facts(at={(HEAD, "orders.py"): B_NOW}),
                                                located={"orders.py": Located("orders.py", "orders.py", "orders.py",
                                                                              None, True)},
                                                too_large={"orders.py": TooLarge(2 << 30, 1_000_000)})),
    "not-a-file": (helper_snippet(None, path="orders"),
                   replace(facts(), located={"orders": Located("orders", "orders", "orders", None, False,
                                                               "a directory")})),
}


def test_every_reason_has_a_case() -> None:
    # malformed-input is given before decide, to an item that cannot be read (test_shapes.py); the
    # not-on-this-machine reasons with no working tree to decide on (tests/validator/test_validator.py).
    assert set(CASES) == set(REASONS) - {MALFORMED, *NOT_HERE}


@pytest.mark.parametrize("reason", sorted(CASES))
def test_reason(reason: str) -> None:
    snippet, given = CASES[reason]
    d = decide(snippet, given)
    assert (d.reason, d.verdict) == (reason, REASONS[reason].verdict.value), d.detail
    assert d.detail


def test_current_points_at_the_code_now() -> None:
    moved = decide(*CASES["chunk-moved"]).current
    assert moved is not None and (moved.start_line, moved.end_line, moved.symbol, moved.text) == (5, 6, "helper", HELPER)
    elsewhere = decide(*CASES["moved-elsewhere"]).current
    assert elsewhere is not None and (elsewhere.path, elsewhere.start_line, elsewhere.symbol) == ("util.py", 3, "helper")
    changed = decide(*CASES["content-changed"]).current
    assert changed is not None and "x * 3" in changed.text
    assert decide(*CASES["symbol-removed"]).current is None
