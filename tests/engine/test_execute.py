"""Every read command answers with the same bytes and exit code through the engine as in-process,
text and --json alike; and the engine sees edits and other processes' builds at the next call."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.enginehelp import FAKE, Engines
from tests.gitrepo import Repo

ORDERS = "def cancel_order(order):\n    order.cancel()\n    return order\n"
REFUND = "def refund_order(order):\n    return order.refund()\n"


def shop(repo: Repo) -> str:
    repo.commit_files({"src/orders.py": ORDERS, "src/refund.py": REFUND, "README.md": "# shop\n\nSee `cancel_order`.\n"})
    return repo.commit_files({"src/refund.py": REFUND.replace("()", "(True)"), "src/gone.py": "def gone():\n    return 0\n"})


def snippets(head: str) -> str:
    return "\n".join(json.dumps(s) for s in [
        {"path": "src/orders.py", "commit": head, "start_line": 1, "end_line": 3, "text": ORDERS},
        {"path": "src/refund.py", "commit": head, "start_line": 1, "end_line": 2, "text": REFUND},
        {"path": "src/nowhere.py", "commit": head, "start_line": 1, "end_line": 2},
    ]) + "\n"


ANSWER = "`cancel_order` in src/orders.py:1-3 and `vanished()` in src/refund.py; see ../../etc/passwd.\n"

# (name, argv, stdin): every read command, text and JSON, and a few errors.
CALLS: list[tuple[str, list[str], str | None]] = [
    ("search", ["search", "cancel order"], None),
    ("search --json", ["search", "cancel order", "--json"], None),
    ("search brief", ["search", "refund", "--format", "brief", "--all"], None),
    ("search context", ["search", "cancel order", "--format", "context"], None),
    ("search lexical", ["search", "cancel_order", "--mode", "lexical", "--no-validate"], None),
    ("context", ["context", "cancel order", "--budget", "800"], None),
    ("context --json", ["context", "cancel order", "--budget", "800", "--json"], None),
    ("validate", ["validate", "-"], "SNIPPETS"),
    ("validate --json", ["validate", "--json", "-"], "SNIPPETS"),
    ("validate FILE", ["validate", "../snippets.jsonl", "--format", "context"], None),
    ("check-refs", ["check-refs", "-"], ANSWER),
    ("check-refs --json", ["check-refs", "--json", "--strict", "-"], ANSWER),
    ("review", ["review", "--no-related"], None),
    ("review --json", ["review", "--json"], None),
    ("show", ["show", "cancel_all"], None),
    ("show --json", ["show", "cancel_order", "--json"], None),
    ("show by lines", ["show", "orders.py:1-3"], None),
    ("show gone", ["show", "gone"], None),
    ("references", ["references", "cancel_order"], None),
    ("references --json", ["references", "cancel_order", "--json"], None),
    ("outline", ["outline", "orders.py"], None),
    ("outline --json", ["outline", ".", "--json"], None),
    ("drift", ["drift"], None),
    ("drift --json", ["drift", "--json"], None),
    ("index status", ["index", "status"], None),
    ("index status --json", ["index", "status", "--json"], None),
    ("index health", ["index", "health"], None),
    ("index health --json", ["index", "health", "--json"], None),
    ("usage error", ["search", "x", "--format", "yaml"], None),
    ("bad option", ["search", "x", "--no-such-option"], None),
    ("never indexed", ["search", "x", "--branch", "nope"], None),
    ("outside every repository", ["search", "x", "--repo", "/"], None),
    ("empty query", ["context", "  "], None),
]


@pytest.fixture
def built(engine: Engines, repo: Repo, tmp_path: Path) -> tuple[Engines, Repo, str]:
    head = shop(repo)
    done = engine.cv("index", "build", *FAKE, cwd=repo.root)
    assert done.returncode == 0, done.stderr
    # Work since the build: an edit, a new file, a deletion (the overlay and drift have something).
    repo.write("src/orders.py", ORDERS + "\n\ndef cancel_all(orders):\n    return [cancel_order(o) for o in orders]\n")
    repo.write("src/new.py", "def brand_new():\n    return 2\n")
    repo.remove("src/gone.py")
    (tmp_path / "snippets.jsonl").write_text(snippets(head))
    engine.start(repo.root)             # running, so every call of a test goes to it
    return engine, repo, head


# Timing fields: how long the overlay took, and when a working-tree file was read (a warm process,
# the engine or the MCP server, keeps what it read while the file is unchanged).
TIMINGS = ((re.compile(rb'"seconds": [0-9.]+'), b'"seconds": 0'),
           (re.compile(rb'"indexed_at": "[^"]*"'), b'"indexed_at": ""'))


def untimed(data: bytes) -> bytes:
    for pattern, value in TIMINGS:
        data = pattern.sub(value, data)
    return data


def test_every_read_command_answers_the_same_with_and_without_the_engine(built: tuple[Engines, Repo, str]) -> None:
    engine, repo, head = built
    # The first search embeds the overlay's chunks into its cache file; every later call finds them.
    assert engine.cv("search", "cancel order", cwd=repo.root, server="off").returncode == 0
    differ = []
    for name, argv, stdin in CALLS:
        text = snippets(head) if stdin == "SNIPPETS" else stdin
        here = engine.cv(*argv, cwd=repo.root / "src", stdin=text, server="off")
        there = engine.cv(*argv, cwd=repo.root / "src", stdin=text)
        if (here.returncode, untimed(here.stdout), untimed(here.stderr)) != (
                there.returncode, untimed(there.stdout), untimed(there.stderr)):
            differ.append((name, here.returncode, there.returncode, here.stdout, there.stdout,
                           here.stderr, there.stderr))
    assert differ == []
    # They went through the engine: it ran every call (and the outputs are not all empty).
    assert engine.log().count(" call ") == len(CALLS)
    codes = {name: engine.cv(*argv, cwd=repo.root / "src", stdin=snippets(head) if s == "SNIPPETS" else s,
                             server="off").returncode for name, argv, s in CALLS[:12]}
    assert codes["validate"] == 3 and codes["check-refs --json"] == 3 and codes["search"] == 0


def test_an_edit_is_seen_by_the_very_next_call(built: tuple[Engines, Repo, str]) -> None:
    engine, repo, _ = built
    first = engine.cv("search", "refund everything at once", "--json", "--all", cwd=repo.root)
    assert first.returncode == 0 and "refund_everything" not in first.stdout.decode()
    repo.write("src/refund.py", REFUND + "\n\ndef refund_everything(orders):\n    return [o.refund() for o in orders]\n")
    second = engine.cv("search", "refund everything at once", "--json", "--all", cwd=repo.root)
    symbols = [h["symbol"] for h in json.loads(second.stdout)]
    assert any("refund_everything" in s for s in symbols), symbols
    assert engine.log().count(" call ") == 2


def test_a_build_by_another_process_is_seen_by_the_next_call(built: tuple[Engines, Repo, str]) -> None:
    engine, repo, head = built
    before = json.loads(engine.cv("index", "status", "--json", cwd=repo.root).stdout)
    assert before["branches"][0]["commit"] == head
    pid = engine.only()
    new = repo.commit_files({"src/late.py": "def arrived_late():\n    return 3\n"})
    assert engine.cv("index", "build", *FAKE, cwd=repo.root).returncode == 0     # the engine's build thread
    after = json.loads(engine.cv("index", "status", "--json", cwd=repo.root).stdout)
    assert after["branches"][0]["commit"] == new
    hits = json.loads(engine.cv("search", "arrived late", "--json", "--no-overlay", "--all", cwd=repo.root).stdout)
    assert any("arrived_late" in h["symbol"] and h["commit"] == new for h in hits), hits
    assert engine.only() == pid          # the same warm engine answered every call
    assert engine.log().count(" call ") == 3


@pytest.mark.parametrize("change", [
    {"argv": "search x"}, {"argv": [1]}, {"cwd": "relative"}, {"env": {"A": 1}}, {"tty": [True]},
    {"encoding": ["utf-8", "utf-8", "no-such-codec"]},
    # Only read commands and one repository's build: a peer's own socket client cannot have the
    # engine build a batch, repair the store, install hooks, serve MCP or start a reviewer program.
    {"argv": ["index", "build", "--repos", "x.toml"]}, {"argv": ["index", "build", "--repair"]},
    {"argv": ["hooks", "install"]}, {"argv": ["mcp"]},
    {"argv": ["review", "--exec", "sh"]}, {"argv": ["serve"]}, {"argv": []},
])
def test_a_malformed_request_is_refused_before_anything_runs(change: dict) -> None:
    from codevouch.engine import execute, protocol

    frame = {"op": "run", "argv": ["search", "x"], "cwd": "/", "env": {}, "tty": [False, False, False],
             "encoding": ["utf-8", "utf-8", "utf-8"], "pid": 1}
    assert execute.Request.of(frame).argv == ("search", "x")
    with pytest.raises(protocol.PeerError):
        execute.Request.of({**frame, **change})


def test_a_request_keeps_the_callers_environment_as_its_own() -> None:
    from codevouch.engine import execute

    frame = {"op": "run", "argv": ["search", "x"], "cwd": "/", "tty": [False, True, True],
             "encoding": ["utf-8", "utf-8", "utf-8"], "env": {"CODEVOUCH_INDEX": "/i", "LD_PRELOAD": "/evil.so"}}
    assert execute.Request.of(frame).env == {"CODEVOUCH_INDEX": "/i", "LD_PRELOAD": "/evil.so"}


def test_team_mode_through_the_engine(engine: Engines, repo: Repo, tmp_path: Path) -> None:
    from tests import storehelp

    with storehelp.chroma_server(tmp_path / "server", pytest.skip) as (url, _):
        builder = {"CODEVOUCH_CHROMA_URL": url, "CODEVOUCH_INDEX": str(tmp_path / "builder")}
        reader = {"CODEVOUCH_CHROMA_URL": url, "CODEVOUCH_INDEX": str(tmp_path / "reader")}
        repo.commit_files({"src/orders.py": ORDERS})
        assert engine.cv("index", "build", *FAKE, cwd=repo.root, env=builder).returncode == 0
        engine.start(repo.root, env=reader)
        here = engine.cv("search", "cancel order", "--json", cwd=repo.root, env=reader, server="off")
        there = engine.cv("search", "cancel order", "--json", cwd=repo.root, env=reader)
        assert here.returncode == 0 and b"cancel_order" in here.stdout
        assert (there.returncode, untimed(there.stdout), untimed(there.stderr)) == (
            here.returncode, untimed(here.stdout), untimed(here.stderr))
        # The builder publishes a new snapshot: the reader's engine answers from it at the next call.
        new = repo.commit_files({"src/late.py": "def arrived_late():\n    return 3\n"})
        assert engine.cv("index", "build", *FAKE, cwd=repo.root, env=builder).returncode == 0
        hits = json.loads(engine.cv("search", "arrived late", "--json", "--no-overlay", "--all", cwd=repo.root,
                                    env=reader).stdout)
        assert any("arrived_late" in h["symbol"] and h["commit"] == new for h in hits), hits
        assert engine.log().count(" call ") == 2


def test_the_engine_embeds_the_rest_of_a_big_overlay_after_answering(built: tuple[Engines, Repo, str]) -> None:
    """A search embeds what its time budget allows; the engine embeds the rest after answering,
    so the next search ranks every changed chunk by its own vector (no word-only ranks left)."""
    from tests.enginehelp import wait_until

    engine, repo, _ = built
    repo.write("src/many.py", "".join(f"def handler_{i}(request):\n    return request.reply({i})\n\n\n"
                                      for i in range(12)))
    one_at_a_time = {"CODEVOUCH_OVERLAY_LIMIT": "1"}
    first = engine.cv("search", "reply to the request", "--json", cwd=repo.root, env=one_at_a_time)
    assert first.returncode == 0, first.stderr
    before = [json.loads(line)["overlay"] for line in first.stderr.splitlines() if line.startswith(b'{"overlay"')][-1]
    assert before["not_embedded"] > 0, before
    assert wait_until(lambda: "in the background" in engine.log(), timeout=120), engine.log()[-2000:]
    second = engine.cv("search", "reply to the request", "--json", cwd=repo.root, env=one_at_a_time)
    after = [json.loads(line)["overlay"] for line in second.stderr.splitlines() if line.startswith(b'{"overlay"')][-1]
    assert after["not_embedded"] == 0 and after["embedded"] == 0, after     # every vector was cached


class _Untouchable:
    """A stand-in for sys.stdout / sys.stderr during a call: any write to it is a swap missed."""
    def __init__(self) -> None:
        self.writes: list[str] = []

    def write(self, text: str) -> int:
        self.writes.append(text)
        return len(text)

    def flush(self) -> None:
        pass


_WATCHED: list[tuple[str, tuple]] = []
_WATCHING: list[bool] = [False]


def _audit(event: str, args: tuple) -> None:
    if _WATCHING[0] and event in ("os.chdir", "os.putenv", "os.unsetenv"):
        _WATCHED.append((event, args))


def test_the_engine_runs_a_call_without_changing_its_own_process(repo: Repo, index_dir: Path,
                                                                   tmp_path: Path) -> None:
    """The server side of a call: no environment write, no chdir, no sys.std* in use (CPython's
    audit events see every chdir and putenv), and the answer is the caller's."""
    import os
    import socket
    import sys

    import typer.main

    from codevouch.api import Index
    from codevouch.commands.app import build_app
    from codevouch.engine import execute

    shop(repo)
    Index(repo.root, index_dir, embedder="fake-bow-64").build()
    (tmp_path / "elsewhere").mkdir()
    command = typer.main.get_command(build_app())
    frame = {"op": "run", "argv": ["search", "cancel order", "--format", "brief"], "cwd": str(repo.root / "src"),
             "tty": [False, False, False], "encoding": ["utf-8", "utf-8", "utf-8"], "pid": 1,
             "env": {"CODEVOUCH_INDEX": str(index_dir), "HOME": str(tmp_path), "PATH": os.environ["PATH"],
                     "CODEVOUCH_NO_RECORD": "1", "SOME_UNLISTED_VARIABLE": "x"}}
    request = execute.Request.of(frame)
    warm, cold = socket.socketpair(socket.AF_UNIX)
    with warm, cold:
        first, _ = execute.run(command, request, warm, request.call())
    # A warm engine: the libraries a first call imports (some of which set a variable of their
    # own as they load) were loaded by an earlier call, or by the engine's preload.
    assert any(fd == 1 for fd, _ in first)
    sys.addaudithook(_audit)
    before = (dict(os.environ), os.getcwd(), sys.argv)
    streams = (sys.stdin, sys.stdout, sys.stderr)
    out, err = _Untouchable(), _Untouchable()
    here, there = socket.socketpair(socket.AF_UNIX)
    os.chdir(tmp_path / "elsewhere")          # the engine's own directory is not the caller's
    try:
        sys.stdout, sys.stderr = out, err      # type: ignore[assignment]
        _WATCHING[0] = True
        record, code = execute.run(command, request, there, request.call())
    finally:
        _WATCHING[0] = False
        sys.stdin, sys.stdout, sys.stderr = streams
        os.chdir(before[1])
        here.close()
        there.close()
    assert _WATCHED == [] and out.writes == [] and err.writes == []
    assert (dict(os.environ), os.getcwd(), sys.argv) == before
    assert code == 0, record
    answer = b"".join(data for fd, data in record if fd == 1).decode()
    assert "src/orders.py:1-3" in answer and "cancel_order" in answer


def test_a_caller_that_leaves_cancels_its_own_call(repo: Repo, index_dir: Path) -> None:
    """The engine's watcher sees the caller close its end and sets the call's cancel event; a
    cancelled call stops before its next git process (call.check) and writes nothing."""
    import socket
    import threading

    import typer.main

    from codevouch.api import Index
    from codevouch.commands.app import build_app
    from codevouch.engine import execute
    from codevouch.worktree.git import _process

    here, there = socket.socketpair(socket.AF_UNIX)
    cancel, done = threading.Event(), threading.Event()
    watcher = threading.Thread(target=execute.watch, args=(there, cancel, done, 0.01))
    watcher.start()
    assert not cancel.wait(0.1)               # a caller that waits is not gone
    here.close()
    watcher.join(5)
    assert cancel.is_set() and not watcher.is_alive()
    there.close()

    shop(repo)
    Index(repo.root, index_dir, embedder="fake-bow-64").build()
    frame = {"op": "run", "argv": ["search", "cancel order"], "cwd": str(repo.root), "pid": 1,
             "tty": [False, False, False], "encoding": ["utf-8", "utf-8", "utf-8"],
             "env": {"CODEVOUCH_INDEX": str(index_dir), "CODEVOUCH_NO_RECORD": "1", "PATH": "/usr/bin:/bin"}}
    before = sum(_process.PROCESSES.values())
    a, b = socket.socketpair(socket.AF_UNIX)
    with a, b:
        request = execute.Request.of(frame)
        record, code = execute.run(typer.main.get_command(build_app()), request, b, request.call(cancel))
    assert (record, code) == ([], 130)
    assert sum(_process.PROCESSES.values()) == before     # no git process started after the cancel
