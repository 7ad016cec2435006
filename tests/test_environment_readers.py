"""Nothing below the api reads the environment: the settings codevouch acts on come down from the
Call made at the door (the api's `Index`, a command's), as values; git's children get the
caller's variables from the git door's one function (worktree/git/_process.py `caller_env`).

The source walk holds codevouch/ to that; the calls below show a Call's setting applied while
the process's own environment does not have it."""
from __future__ import annotations

import ast
import fcntl
import io
import json
import os
import time
from pathlib import Path

import pytest
import typer.main

from codevouch import Index
from codevouch.call import Call
from codevouch.commands import runner
from codevouch.commands.app import build_app
from codevouch.embedding import FakeEmbedder
from codevouch.errors import IndexBusy, InputError
from codevouch.store import IndexDir
from tests.gitrepo import Repo

PACKAGE = Path(__file__).resolve().parents[1] / "codevouch"

# The doors, above the api: they make the Call (cli, engine, mcp_server, the api's Index), or run
# as one (commands/), or are the environment itself (environment, call).
DOORS = ("api.py", "callreads.py", "cli.py", "call.py", "environment.py", "mcp_server.py", "commands/", "engine/")
# Git's door: its one function that answers the running call's environment.
GIT_DOOR = "worktree/git/_process.py"
# The embedding package sets the Hugging Face libraries' offline switches in os.environ
# (os.environ.setdefault) before it loads a model: a process-wide write those libraries read at
# import, made once, never a read of a setting for a call.
EMBEDDING = "embedding/__init__.py"


def _reads(tree: ast.AST) -> list[tuple[int, str, ast.AST]]:
    """(line, what, node) for each reference to environment.current, os.environ or os.getenv."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if (node.value.id, node.attr) in (("environment", "current"), ("os", "environ"), ("os", "getenv"),
                                              ("os", "environb"), ("os", "getenvb")):
                found.append((node.lineno, f"{node.value.id}.{node.attr}", node))
        elif isinstance(node, ast.ImportFrom) and node.module in ("os", "codevouch.environment"):
            for alias in node.names:
                if alias.name in ("environ", "getenv", "environb", "current"):
                    found.append((node.lineno, f"from {node.module} import {alias.name}", node))
    return found


def _setdefaults(tree: ast.AST) -> set[int]:
    """The ids of the `os.environ` nodes that are `os.environ.setdefault(...)` calls."""
    return {id(node.func.value) for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "setdefault"}


def _enclosing(tree: ast.AST, line: int) -> str | None:
    """The name of the innermost function holding `line`."""
    name = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= (node.end_lineno or 0):
            if name is None or node.lineno >= name[0]:
                name = (node.lineno, node.name)
    return name[1] if name else None


def test_no_module_below_the_api_reads_the_environment() -> None:
    offenders, door = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(DOORS):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        reads = _reads(tree)
        if rel == EMBEDDING:
            writes = _setdefaults(tree)
            reads = [r for r in reads if id(r[2]) not in writes]
        if rel == GIT_DOOR:
            door = [(line, what, _enclosing(tree, line)) for line, what, _ in reads]
            continue
        offenders += [f"codevouch/{rel}:{line}: {what}" for line, what, _ in reads]
    assert offenders == [], "below the api, settings come down from the Call:\n" + "\n".join(offenders)
    assert [(what, fn) for _, what, fn in door] == [("environment.current", "caller_env")], door


def _no(*names: str) -> dict[str, str]:
    """This process's variables without `names` (PATH and HOME stay: git needs them)."""
    return {k: v for k, v in os.environ.items() if k not in names}


def test_a_calls_reference_cap_is_applied_not_the_processs(repo: Repo, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    repo.commit_files({"a.py": "A = 1\n", "b.py": "B = 2\n"})
    monkeypatch.delenv("CODEVOUCH_MAX_REFERENCES", raising=False)
    text = "see `a.py:1` and `b.py:1`"
    call = Call.of({**_no("CODEVOUCH_MAX_REFERENCES"), "CODEVOUCH_MAX_REFERENCES": "1"}, repo.root)
    with pytest.raises(InputError, match="over the cap of 1 "):
        Index(repo.root, tmp_path / "index", call=call).check_refs(text)
    assert len(Index(repo.root, tmp_path / "index").check_refs(text).results) == 2


def test_a_calls_snippet_cap_is_applied_not_the_processs(repo: Repo, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    repo.commit_files({"m.py": "def alpha():\n    return 1\n"})
    monkeypatch.delenv("CODEVOUCH_MAX_SNIPPETS", raising=False)
    snippets = json.dumps([{"path": "m.py", "start_line": 1, "end_line": 1}] * 2)
    env = {**_no("CODEVOUCH_MAX_SNIPPETS"), "CODEVOUCH_INDEX": str(tmp_path / "index"), "CODEVOUCH_NO_RECORD": "1"}
    for cap in ("1", "2"):
        out, err = io.StringIO(), io.StringIO()
        streams = runner.Streams(io.TextIOWrapper(io.BytesIO(snippets.encode())), out, err)
        done = runner.run(typer.main.get_command(build_app()), ["validate", "-"],
                          Call.of({**env, "CODEVOUCH_MAX_SNIPPETS": cap}, repo.root), streams)
        # Over the cap: exit 2 before any verdict; within it, the two verdicts (exit 0 or 3).
        assert (done == 2) == (cap == "1") and ("more than 1 snippets" in err.getvalue()) == (cap == "1"), \
            (done, err.getvalue())


def test_a_calls_busy_timeout_reaches_the_vector_store(repo: Repo, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A search waits the Call's CODEVOUCH_BUSY_TIMEOUT for a build's vector write, not the
    process's (unset here: 20 s)."""
    repo.commit_files({"a.py": "def alpha():\n    return 1\n"})
    index_dir = tmp_path / "index"
    monkeypatch.delenv("CODEVOUCH_BUSY_TIMEOUT", raising=False)
    call = Call.of({**_no("CODEVOUCH_BUSY_TIMEOUT"), "CODEVOUCH_BUSY_TIMEOUT": "0.3"}, repo.root)
    idx = Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False, call=call)
    idx.build()
    fd = os.open(IndexDir(index_dir).vectors_lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)      # as a build inside a write batch holds it
        started = time.monotonic()
        with pytest.raises(IndexBusy, match="within 0.3 s"):
            idx.search("alpha", mode="dense", overlay=False, validate=False)
        assert time.monotonic() - started < 10
    finally:
        os.close(fd)
