"""A read command run in-process ends without the interpreter's teardown (codevouch.cli.exit_now),
and nothing anyone can see differs: the code, every byte written, the atexit handlers' work."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from codevouch.cli import exit_now
from codevouch.store.indexdir import IndexDir
from tests.clihelp import FAKE
from tests.gitrepo import Repo

# About the process itself: its exit and its start.
pytestmark = pytest.mark.process

_SCRIPT = """
import atexit, sys, threading
import pytest

from codevouch.cli import exit_now
atexit.register(lambda: sys.stdout.write(" atexit ran"))
sys.stdout.write("unflushed")
sys.stderr.write("err")
if sys.argv[1] == "thread":
    gate = threading.Event()
    threading.Thread(target=gate.wait, args=(2,)).start()     # not a daemon: the interpreter joins it
    exit_now(3)
    sys.stdout.write(" returned")
    gate.set()
    raise SystemExit(4)
exit_now(int(sys.argv[1]) if sys.argv[1].isdigit() else sys.argv[1])
sys.stdout.write(" returned")
"""


def _script(arg: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _SCRIPT, arg], capture_output=True, text=True, timeout=60)


def test_exit_now_flushes_runs_atexit_and_keeps_the_code() -> None:
    for code in ("0", "3", "130"):
        done = _script(code)
        assert (done.returncode, done.stdout, done.stderr) == (int(code), "unflushed atexit ran", "err")


def test_exit_now_leaves_the_exit_to_the_interpreter_when_it_must() -> None:
    # A message for a code (printed by the interpreter) and a thread it would join: it returns.
    message = _script("a message")
    assert message.stdout == "unflushed returned atexit ran" and message.returncode == 0
    threaded = _script("thread")
    assert threaded.stdout == "unflushed returned atexit ran" and threaded.returncode == 4
    assert exit_now(True) is None and exit_now(999) is None      # not an exit status: returns


def _usage_rows(index: Path) -> int:
    path = IndexDir(index).usage
    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT count(*) FROM usage").fetchone()[0])


def test_an_in_process_search_cleans_up_records_usage_and_answers_as_before(repo: Repo, tmp_path: Path) -> None:
    repo.commit(**{"src/orders.py": "def cancel_order(order):\n    order.cancel()\n    return order\n"})
    index, tmp = tmp_path / "index", tmp_path / "tmp"
    tmp.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("CODEVOUCH_NO_RECORD", "PYTHONDONTWRITEBYTECODE")}
    env.update({"CODEVOUCH_INDEX": str(index), "CODEVOUCH_SERVER": "off", "TMPDIR": str(tmp)})

    def cv(*args: str, boot: str = "from codevouch.cli import main; main()") -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", boot, *args], cwd=repo.root, env=env, capture_output=True,
                              text=True, timeout=300)
    assert cv("index", "build", *FAKE).returncode == 0
    repo.write("src/orders.py", "def cancel_order(order):\n    return order.cancel()\n")    # an overlay to derive
    # One search embeds the edit's chunk into the overlay's cache: both calls below find it there.
    assert cv("search", "cancel order").returncode == 0
    # The same call with the interpreter's own exit: exit_now turned into a no-op.
    slow = "import codevouch.cli as c; c.exit_now = lambda code: None; c.main()"
    before = _usage_rows(index)
    for boot in (slow, "from codevouch.cli import main; main()"):
        done = cv("search", "cancel order", boot=boot)
        assert done.returncode == 0 and "cancel_order" in done.stdout, done.stderr
        assert list(tmp.iterdir()) == []          # the private index copy was removed (atexit)
        assert _usage_rows(index) == before + 1   # the usage record is on disk
        before += 1
        if boot == slow:
            expected = done
    assert (done.stdout, done.stderr) == (expected.stdout, expected.stderr)
    missing = cv("search", "x", "--repo", str(tmp_path))
    assert missing.returncode == 1 and "git repository" in missing.stderr
    bad = cv("search", "x", "--format", "yaml")
    assert bad.returncode == 2 and bad.stderr
