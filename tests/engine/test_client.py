"""The CLI's side of the engine: what goes to it, what it imports, and every fault answered as
in-process (same exit code, same bytes, stdin not lost)."""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

from codevouch.engine import client, paths
from tests.engine.conftest import same, snippet_lines
from tests.enginehelp import FAKE, Engines, alive, wait_until
from tests.gitrepo import Repo

HEAVY = ("chromadb", "numpy", "torch", "tantivy", "sentence_transformers", "typer")


def test_only_read_commands_are_forwarded() -> None:
    assert client.command_of(["search", "x"]) == "search"
    assert client.command_of(["index", "status", "--json"]) == "index status"
    assert client.command_of(["index", "health"]) == "index health"
    assert client.command_of(["review", "--staged"]) == "review"
    for argv in (["index", "build"], ["hooks", "install"], ["mcp"], ["serve"], ["search", "--help"],
                 ["review", "--exec", "cat"], ["review", "--exec=cat"], [], ["index"]):
        assert client.command_of(argv) is None, argv
    assert client.command_of(["search", "--", "--help"]) == "search"    # a query, after --


def test_a_search_through_a_running_engine_imports_no_heavy_module(engine: Engines, indexed: Repo) -> None:
    # The first call answers in-process and starts it.
    assert engine.cv("search", "cancel order", cwd=indexed.root).returncode == 0
    pid = engine.only()
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "codevouch", "search", "cancel order"],
                          cwd=indexed.root, env=engine.env, capture_output=True, timeout=300)
    assert done.returncode == 0 and b"cancel_order" in done.stdout
    imported = {line.split("|")[-1].strip() for line in done.stderr.decode().splitlines() if line.startswith("import time:")}
    assert "codevouch.engine.client" in imported          # the client ran ...
    assert not {m for m in imported if m.split(".")[0] in HEAVY}, sorted(imported)
    assert "codevouch.api" not in imported                # ... and nothing of the stack behind it
    # nor `dataclasses` (with the `inspect` it imports): ~7 ms of every warm call's ~75 (environment.py)
    assert not imported & {"dataclasses", "inspect"}, sorted(imported & {"dataclasses", "inspect"})
    assert engine.only() == pid and engine.log().count(" call ") == 1


def test_off_switches_run_in_process_and_start_nothing(engine: Engines, indexed: Repo) -> None:
    plain = engine.cv("search", "cancel order", cwd=indexed.root, server="off")
    assert plain.returncode == 0 and engine.running() == {}
    ci = engine.cv("search", "cancel order", cwd=indexed.root, server="auto", env={"CI": "true"})
    assert ci.returncode == 0 and engine.running() == {}
    built = engine.cv("index", "build", *FAKE, cwd=indexed.root)          # a build never starts one
    assert built.returncode == 0 and engine.running() == {}
    # The repository may turn it off, never on.
    indexed.write(".codevouch.toml", "[server]\nauto = false\n")
    assert engine.cv("search", "cancel order", cwd=indexed.root).returncode == 0 and engine.running() == {}
    indexed.write(".codevouch.toml", "[server]\nauto = true\n")
    assert engine.cv("search", "cancel order", cwd=indexed.root, server="off").returncode == 0
    assert engine.running() == {}
    assert engine.log() == ""
    # CI=true with the user's CODEVOUCH_SERVER=on: the engine.
    assert engine.cv("search", "cancel order", cwd=indexed.root, env={"CI": "true"}).returncode == 0
    assert wait_until(lambda: len(engine.running()) == 1, 60)


def test_a_status_call_starts_no_engine_but_one_running_serves_it(engine: Engines, indexed: Repo) -> None:
    """One `index status` started an engine that then idled for its whole timeout."""
    for argv in (["index", "status"], ["index", "health"]):
        assert engine.cv(*argv, cwd=indexed.root).returncode == 0
    # An engine's start makes its log first, before the process: none was made.
    assert list(engine.runtime.rglob("engine.log")) == [] and engine.running() == {}
    assert engine.cv("search", "cancel order", cwd=indexed.root).returncode == 0    # this one starts it
    pid = engine.only()
    calls = engine.log().count(" call ")
    status = engine.cv("index", "status", cwd=indexed.root)
    assert status.returncode == 0 and engine.only() == pid and engine.log().count(" call ") == calls + 1


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().split(b"\0")[0].decode(errors="replace")
    except OSError:
        return ""


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    if int(handle.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, ValueError, IndexError):
                continue
    return found


def test_the_engine_and_its_git_watchdog_have_names_a_user_recognises(engine: Engines, indexed: Repo) -> None:
    """Both showed in `ps` as `python3 -c import sys; sys.path.insert(0, ...)`."""
    assert engine.cv("search", "cancel order", cwd=indexed.root).returncode == 0    # starts it
    pid = engine.only()
    assert _cmdline(pid) == f"codevouch serve --index {engine.env['CODEVOUCH_INDEX']}", _cmdline(pid)
    assert engine.cv("search", "cancel order", cwd=indexed.root).returncode == 0    # served: git runs there
    assert [_cmdline(p) for p in _children(pid)].count("codevouch serve: git watchdog") == 1


def test_a_bad_switch_is_an_error_that_names_it(engine: Engines, indexed: Repo) -> None:
    done = engine.cv("search", "cancel order", cwd=indexed.root, server="sometimes")
    assert done.returncode == 1 and b"CODEVOUCH_SERVER='sometimes' is not on, off or auto" in done.stderr
    assert engine.running() == {}


def test_an_engine_killed_mid_call_loses_nothing(engine: Engines, indexed: Repo) -> None:
    lines = snippet_lines(indexed)
    expected = engine.cv("validate", "-", cwd=indexed.root, stdin=lines, server="off")
    assert expected.returncode == 3                                   # one snippet is historical-only
    assert engine.cv("validate", "-", cwd=indexed.root, stdin=lines).returncode == 3    # warm
    pid = engine.only()
    full = {**engine.env, "CODEVOUCH_SERVER": "on"}
    proc = subprocess.Popen([sys.executable, "-m", "codevouch", "validate", "-"], cwd=indexed.root, env=full,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # The engine has the call (it is waiting for the caller's stdin) when it is killed.
    assert wait_until(lambda: f"from pid {proc.pid}" in engine.log(), 120), engine.log()
    os.kill(pid, signal.SIGKILL)
    out, err = proc.communicate(lines.encode(), timeout=300)
    assert (proc.returncode, out, err) == (expected.returncode, expected.stdout, expected.stderr)
    assert not alive(pid)


def test_a_hung_engine_is_killed_and_the_call_answered_in_process(engine: Engines, indexed: Repo) -> None:
    expected = engine.cv("search", "cancel order", cwd=indexed.root, server="off")
    assert engine.cv("search", "cancel order", cwd=indexed.root).returncode == 0
    pid = engine.only()
    os.kill(pid, signal.SIGSTOP)          # alive, listening (the kernel queues connections), silent
    try:
        done = engine.cv("search", "cancel order", cwd=indexed.root, env={"CODEVOUCH_SERVER_TIMEOUT": "3"})
    finally:
        if alive(pid):
            os.kill(pid, signal.SIGCONT)
    assert same(done, expected)
    assert wait_until(lambda: not alive(pid), 30)        # the client ended it
    # The next call starts a fresh engine.
    assert same(engine.cv("search", "cancel order", cwd=indexed.root), expected)
    assert engine.only() != pid


def test_an_engine_of_another_version_is_replaced(engine: Engines, indexed: Repo, tmp_path: Path) -> None:
    # An install of its own (a copy of the package), upgraded in place while its engine runs.
    site = tmp_path / "site"
    shutil.copytree(Path(paths.__file__).parents[1], site / "codevouch",
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = {"PYTHONPATH": os.pathsep.join([str(site), *os.environ.get("PYTHONPATH", "").split(os.pathsep)])}
    expected = engine.cv("search", "cancel order", cwd=indexed.root, server="off", env=env)
    assert same(engine.cv("search", "cancel order", cwd=indexed.root, env=env), expected)
    old = engine.only()
    init = site / "codevouch" / "__init__.py"
    init.write_text(init.read_text().replace('__version__ = "0.1.0"', '__version__ = "0.1.1"'))
    assert same(engine.cv("search", "cancel order", cwd=indexed.root, env=env), expected)
    assert wait_until(lambda: not alive(old), 30)        # told to stop
    assert "mismatch" not in engine.log() and "asked to stop" in engine.log()
    assert wait_until(lambda: len(engine.running()) == 1 and engine.only() != old, 60)   # this version's
    assert same(engine.cv("search", "cancel order", cwd=indexed.root, env=env), expected)
    assert "0.1.1" in engine.log()


def test_a_stale_socket_is_replaced_by_a_live_engine(engine: Engines, indexed: Repo) -> None:
    index_dir = Path(engine.env["CODEVOUCH_INDEX"]).resolve()
    place = paths.find(index_dir, engine.env, create=True)
    assert place is not None
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(place.socket))          # a socket file nobody listens on (an engine that died)
    dead.close()
    assert place.socket.is_socket() and not client.listening(place)
    expected = engine.cv("search", "cancel order", cwd=indexed.root, server="off")
    assert same(engine.cv("search", "cancel order", cwd=indexed.root), expected)     # in-process
    assert wait_until(lambda: client.listening(place), 60)                             # started after it
    assert same(engine.cv("search", "cancel order", cwd=indexed.root), expected)
    assert engine.log().count(" call ") == 1


def test_a_socket_path_too_long_falls_back_to_a_shorter_one_or_in_process(engine: Engines, repo: Repo,
                                                                          tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 120) / "index"
    long_runtime = tmp_path / ("r" * 120)
    long_runtime.mkdir(mode=0o700)
    repo.commit_files({"a.py": "def alpha():\n    return 1\n"})
    env = {"CODEVOUCH_INDEX": str(deep), "XDG_RUNTIME_DIR": str(long_runtime), "TMPDIR": str(engine.runtime)}
    assert engine.cv("index", "build", *FAKE, cwd=repo.root, env=env).returncode == 0
    expected = engine.cv("search", "alpha", cwd=repo.root, server="off", env=env)
    assert expected.returncode == 0
    assert same(engine.cv("search", "alpha", cwd=repo.root, env=env), expected)
    assert wait_until(lambda: len(engine.running()) == 1, 60)
    [sock] = engine.sockets()           # in the temporary directory: the others are too long
    assert sock.parent.parent == engine.runtime / f"codevouch-engine-{os.getuid()}"
    assert len(os.fsencode(str(sock))) <= paths.SOCKET_LIMIT
    engine.stop_all()
    # No candidate is short enough: in-process, and no engine.
    env["TMPDIR"] = str(long_runtime)
    assert same(engine.cv("search", "alpha", cwd=repo.root, env=env), expected)
    assert engine.running() == {}


def test_an_engine_runs_the_package_its_client_was_imported_from(engine: Engines, indexed: Repo,
                                                                  tmp_path: Path) -> None:
    # In a checkout of codevouch itself, `python -m codevouch` imports the checkout's package (the
    # current directory comes first on sys.path): the engine it starts must run that one too.
    checkout = tmp_path / "checkout"
    shutil.copytree(Path(paths.__file__).parents[1], checkout / "codevouch",
                    ignore=shutil.ignore_patterns("__pycache__"))
    expected = engine.cv("search", "cancel order", "--repo", str(indexed.root), cwd=checkout, server="off")
    assert same(engine.cv("search", "cancel order", "--repo", str(indexed.root), cwd=checkout), expected)
    engine.only()                       # started after that answer; this call goes to it
    assert same(engine.cv("search", "cancel order", "--repo", str(indexed.root), cwd=checkout), expected)
    assert engine.log().count(" call ") == 1 and f"{checkout / 'codevouch'} " in engine.log()


def test_a_call_queued_behind_another_falls_back_and_leaves_the_engine_running(engine: Engines, indexed: Repo) -> None:
    """The timeout counts from when the engine starts a call, not while it queues: a caller that
    waits past it in the queue answers in-process and never kills the engine, whose running call
    (another caller's) goes on and is answered; the engine skips the abandoned call."""
    lines = snippet_lines(indexed)
    expected_a = engine.cv("validate", "-", cwd=indexed.root, stdin=lines, server="off")
    expected_b = engine.cv("index", "status", cwd=indexed.root, server="off")
    pid = engine.start(indexed.root)
    full = {**engine.env, "CODEVOUCH_SERVER": "on"}
    # Caller A's call runs in the engine and waits there for A's stdin, which A holds open.
    a = subprocess.Popen([sys.executable, "-m", "codevouch", "validate", "-"], cwd=indexed.root, env=full,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert wait_until(lambda: f"from pid {a.pid}" in engine.log(), 120), engine.log()
        b = engine.cv("index", "status", cwd=indexed.root, env={"CODEVOUCH_SERVER_TIMEOUT": "2"})
        assert same(b, expected_b)                       # answered in-process after 2 s in the queue
        assert alive(pid) and engine.only() == pid       # the engine was not killed ...
        out, err = a.communicate(lines.encode(), timeout=300)
    finally:
        if a.poll() is None:
            a.kill()
    assert (a.returncode, out, err) == (expected_a.returncode, expected_a.stdout, expected_a.stderr)
    status = engine.cv("serve", "--status", "--json")
    assert json.loads(status.stdout)["calls"] == 1, (status.stdout, engine.log())   # A's call; B's skipped
    assert wait_until(lambda: "given up while it queued; skipped" in engine.log(), 30), engine.log()


def test_a_stopped_engine_is_replaced_at_once(engine: Engines, indexed: Repo) -> None:
    expected = engine.cv("search", "cancel order", cwd=indexed.root, server="off")
    assert engine.cv("search", "cancel order", cwd=indexed.root).returncode == 0
    pid = engine.only()
    os.kill(pid, signal.SIGSTOP)
    try:
        done = engine.cv("search", "cancel order", cwd=indexed.root)      # the default timeout: 120 s
    finally:
        if alive(pid):
            os.kill(pid, signal.SIGCONT)
    assert same(done, expected)
    assert wait_until(lambda: not alive(pid), 30)
    assert "is stopped (SIGSTOP)" in engine.log()


def test_a_stderr_whose_reader_left_never_costs_stdout_its_answer() -> None:
    """The engine's output goes on to stdout when stderr's reader has gone (`2> >(head -1)`):
    the JSON answer still arrives, the exit code is the command's, and the descriptor that broke
    writes to /dev/null from then on."""
    import os

    from codevouch.engine.client import _emit

    err_r, err_w = os.pipe()
    out_r, out_w = os.pipe()
    os.close(err_r)                                   # stderr's reader left
    gone: set[int] = set()
    try:
        assert _emit([(err_w, b"progress\n"), (out_w, b'{"ok": true}\n')], 0, gone) == 0
        assert gone == {err_w}
        assert os.read(out_r, 100) == b'{"ok": true}\n'
        assert os.write(err_w, b"more") == 4           # now /dev/null
    finally:
        for fd in (err_w, out_r, out_w):
            os.close(fd)
