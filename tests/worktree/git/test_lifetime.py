"""Every git process codevouch starts dies with it: after SIGTERM or SIGKILL of codevouch, no git
child is left running. A tracked file replaced by a FIFO makes `git hash-object` block for ever
opening it (the overlay no longer hands git a FIFO, so the CLI case uses a slow filter the user
let run): a git child that would outlive its parent."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from codevouch import Index
from codevouch.worktree.git import _lifetime
from tests.gitrepo import Repo
from tests.procs import wait_until

# Real processes: git children outlive no parent.
pytestmark = [pytest.mark.process,
              pytest.mark.skipif(not _lifetime.AVAILABLE or not sys.platform.startswith("linux"),
                                 reason="the watchdog needs process groups and Python 3.11")]


def _state(pid: int) -> str | None:
    """The process's state letter (R, S, Z ...), None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


def _alive(pid: int) -> bool:
    return _state(pid) not in (None, "Z", "X")


def _children(pid: int) -> dict[int, str]:
    """pid -> command name of each live child of `pid`."""
    found: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                stat = handle.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid and fields[0] not in ("Z", "X"):
            found[int(entry)] = comm
    return found


def _hashing(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return b"\0hash-object\0" in handle.read()
    except OSError:
        return False


def _blocked_git(proc: subprocess.Popen[bytes]) -> dict[int, str]:
    """The children of `proc` once one of them is `git hash-object` (blocked on the FIFO); {} if
    `proc` ended first."""
    seen: dict[int, str] = {}

    def git_started() -> bool:
        seen.clear()
        seen.update(_children(proc.pid))
        return any(name == "git" and _hashing(pid) for pid, name in seen.items()) or proc.poll() is not None
    assert wait_until(git_started, timeout=120)
    return seen if proc.poll() is None else {}


@pytest.fixture
def fifo_repo(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path / "repo")
    repo.commit_files({"a.py": "def cancel_order(order):\n    return order\n", "b.py": "B = 1\n"})
    return repo


def _make_fifo(repo: Repo) -> None:
    (repo.root / "a.py").unlink()
    os.mkfifo(repo.root / "a.py")


PROBE = {
    "Pending": "from codevouch.worktree.git.runner import Pending\n"
               "Pending(sys.argv[1], 'hash-object', '--', 'a.py').result()\n",
    "run": "from codevouch.worktree.git.runner import run\nrun(sys.argv[1], 'hash-object', '--', 'a.py')\n",
}


@pytest.mark.parametrize("how", list(PROBE))
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_git_child_dies_with_the_process_that_started_it(fifo_repo: Repo, how: str, sig: int) -> None:
    _make_fifo(fifo_repo)
    proc = subprocess.Popen([sys.executable, "-c", "import sys\n" + PROBE[how], str(fifo_repo.root)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        children = _blocked_git(proc)
        assert children, f"git never started: {proc.stderr.read() if proc.stderr else b''!r}"
        _kill_and_expect_all_gone(proc, sig, children)
    finally:
        proc.kill()
        proc.wait()
        for pid in _children(proc.pid):
            os.kill(pid, signal.SIGKILL)


def _kill_and_expect_all_gone(proc: subprocess.Popen[bytes], sig: int, started: dict[int, str]) -> None:
    """Send `sig` to `proc`; the watchdog then kills git (and what git started) and ends itself:
    nothing of `started` is left."""
    os.kill(proc.pid, sig)
    proc.wait(timeout=60)
    wait_until(lambda: not any(_alive(pid) for pid in started), timeout=60)
    assert {pid: name for pid, name in started.items() if _alive(pid)} == {}


def _descendants(pid: int) -> dict[int, str]:
    found: dict[int, str] = {}
    todo = [pid]
    while todo:
        for child, name in _children(todo.pop()).items():
            found[child] = name
            todo.append(child)
    return found


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_killed_search_leaves_no_git_behind(fifo_repo: Repo, tmp_path: Path, sig: int) -> None:
    """`codevouch search`, killed while git hashes an edited file through a slow clean filter the
    user let run (CODEVOUCH_RUN_GIT_FILTERS=1): git, and the filter git started, go with it
    (they used to be orphaned and run on)."""
    index = tmp_path / "index"
    Index(fifo_repo.root, index, embedder="fake-bow-64").build()
    fifo_repo.git("config", "filter.slow.clean", "sleep 300; cat")
    fifo_repo.write(".gitattributes", "*.py filter=slow\n")
    fifo_repo.write("a.py", "def cancel_order(order):\n    return order.cancel()\n")
    proc = subprocess.Popen([sys.executable, "-m", "codevouch", "search", "cancel order", "--mode", "lexical"],
                            cwd=fifo_repo.root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "CODEVOUCH_INDEX": str(index), "CODEVOUCH_RUN_GIT_FILTERS": "1"})
    try:
        assert wait_until(lambda: "sleep" in _descendants(proc.pid).values() or proc.poll() is not None,
                          timeout=120)
        assert proc.poll() is None, "the search ended before git ran the filter"
        started = _descendants(proc.pid)        # git, the filter's shell and sleep, the watchdog
        _kill_and_expect_all_gone(proc, sig, started)
    finally:
        proc.kill()
        proc.wait()


def test_a_normal_exit_leaves_no_watchdog(fifo_repo: Repo) -> None:
    """The watchdog ends with the process it watches, whatever ended it."""
    proc = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom codevouch.worktree.git.runner import run\n"
                             "run(sys.argv[1], 'rev-parse', 'HEAD')\nprint('ok', flush=True)\ntime.sleep(60)",
                             str(fifo_repo.root)], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"ok\n"
        watchdogs = _children(proc.pid)
        assert len(watchdogs) == 1, watchdogs        # the one forked copy; git itself has ended
        proc.terminate()
        proc.wait(timeout=60)
        wait_until(lambda: not any(_alive(pid) for pid in watchdogs), timeout=60)
        assert [pid for pid in watchdogs if _alive(pid)] == []
    finally:
        proc.kill()
        proc.wait()
