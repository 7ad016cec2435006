"""An index directory after a fault: a full disk, a corrupt ledger, a damaged or missing vector
store, a lock that is not a file. Each ends in a clear error that names the file and the command
that recovers (and that command recovers), never a traceback or a silent empty answer."""
from __future__ import annotations

import os
import resource
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from codevouch.store import migrations
from tests.clihelp import FAKE
from tests.gitrepo import Repo

SHOP = {
    "shop/cancel.py": "def cancel_order(order):\n    order.cancel()\n    return order\n",
    "shop/refund.py": "def refund_order(order):\n    return order.refund()\n",
}


def cv(*args: str, file_limit: int | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m codevouch ARGS`; with `file_limit`, no file may grow past that many bytes (RLIMIT_FSIZE:
    every write beyond it fails, as on a full disk, with no privileges needed)."""
    def limited() -> None:
        if file_limit is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))
    return subprocess.run([sys.executable, "-m", "codevouch", *args], capture_output=True, text=True, timeout=300,
                          preexec_fn=limited)


def no_crash(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode != 70, proc.stderr
    assert "Traceback" not in proc.stderr and "unexpected error" not in proc.stderr, proc.stderr


def test_a_first_build_stopped_by_a_full_disk_is_called_incomplete_and_a_build_fixes_it(
        repo: Repo, index_dir: Path) -> None:
    # The end state of a first build that the disk stopped inside its setup: a ledger with some
    # of the format steps and no branch. With the disk still full, status and search called it
    # "made by an older codevouch and must be upgraded", though nothing was ever built.
    repo.commit_files(SHOP)
    index_dir.mkdir()
    db = sqlite3.connect(index_dir / "state.sqlite", isolation_level=None)
    db.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    for step in migrations.MIGRATIONS[:3]:
        step.fn(db)
        db.execute("INSERT INTO _migrations VALUES (?, 'then')", (step.name,))
    db.close()
    where = ["--repo", str(repo.root), "--index", str(index_dir)]
    search = cv("search", "cancel order", *where, "--json", file_limit=1024)
    no_crash(search)
    assert search.returncode != 0 and "older codevouch" not in search.stderr
    assert "incomplete" in search.stderr and f"codevouch index build --index {index_dir}" in search.stderr
    status = cv("index", "status", *where, file_limit=1024)
    no_crash(status)
    assert "older codevouch" not in status.stdout + status.stderr
    assert "nothing indexed" in status.stdout + status.stderr
    # Space is back: the build the message names makes the index.
    build = cv("index", "build", *where, *FAKE)
    assert build.returncode == 0, build.stderr
    search = cv("search", "cancel order", *where, "--json")
    assert search.returncode == 0 and "shop/cancel.py" in search.stdout, search.stderr


def test_a_write_lock_that_is_a_directory_is_named_with_its_fix(repo: Repo, index_dir: Path) -> None:
    # A build, --repair and a rebuild each ended in IsADirectoryError (exit 70).
    repo.commit_files(SHOP)
    where = ["--repo", str(repo.root), "--index", str(index_dir)]
    assert cv("index", "build", *where, *FAKE).returncode == 0
    os.unlink(index_dir / "write.lock")
    (index_dir / "write.lock").mkdir()
    for extra in ([], ["--repair"], []):
        proc = cv("index", "build", *where, *FAKE, *extra)
        no_crash(proc)
        assert proc.returncode == 1
        assert f"the write lock {index_dir / 'write.lock'} is a directory" in proc.stderr
        assert "rm -r" in proc.stderr
    (index_dir / "write.lock").rmdir()
    assert cv("index", "build", *where, *FAKE).returncode == 0
