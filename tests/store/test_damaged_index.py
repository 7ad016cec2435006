"""An index directory after a fault: a full disk, a corrupt ledger, a damaged or missing vector
store, a lock that is not a file. Each ends in a clear error that names the file and the command
that recovers (and that command recovers), never a traceback or a silent empty answer."""
from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from codevouch.store import migrations
from tests import clihelp
from tests.clihelp import FAKE
from tests.gitrepo import Repo

SHOP = {
    "shop/cancel.py": "def cancel_order(order):\n    order.cancel()\n    return order\n",
    "shop/refund.py": "def refund_order(order):\n    return order.refund()\n",
}


def cv(*args: str, file_limit: int | None = None) -> subprocess.CompletedProcess[str]:
    """`codevouch ARGS` in-process; with `file_limit`, a real `python -m codevouch` process in which no
    file may grow past that many bytes (RLIMIT_FSIZE: every write beyond it fails, as on a full
    disk, with no privileges needed; its test is marked `process`)."""
    if file_limit is None:
        return clihelp.cv(*args)

    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))
    return subprocess.run([sys.executable, "-m", "codevouch", *args], capture_output=True, text=True, timeout=300,
                          preexec_fn=limited)


def no_crash(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode != 70, proc.stderr
    assert "Traceback" not in proc.stderr and "unexpected error" not in proc.stderr, proc.stderr


@pytest.mark.process
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


def _many_files(repo: Repo) -> None:
    repo.commit_files({f"shop/m{i}.py": "".join(f"def cancel_{i}_{j}(order):\n    \"\"\"Cancel order {i}.\"\"\"\n"
                                                f"    return order.cancel({j})\n\n" for j in range(10))
                       for i in range(40)})


def _damage_pages(ledger: Path, pages: range) -> None:
    """Overwrite whole pages of the ledger file with bytes that are no b-tree page."""
    db = sqlite3.connect(ledger)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")     # every page in the file itself
    size = db.execute("PRAGMA page_size").fetchone()[0]
    count = db.execute("PRAGMA page_count").fetchone()[0]
    db.close()
    assert count > 40, count
    with open(ledger, "r+b") as handle:
        for page in pages:
            handle.seek(page * size)
            handle.write(b"\xde\xad\xbe\xef" * (size // 4))


@pytest.mark.parametrize("pages", [range(2, 20), range(30, 60), range(0, 1)], ids=["early", "middle", "header"])
def test_a_corrupt_ledger_names_the_command_that_recovers_and_that_command_recovers(
        repo: Repo, index_dir: Path, pages: range) -> None:
    # Damaged middle pages ended a search in a traceback ("database disk image is malformed");
    # a damaged header was named, but its documented recovery (move the directory aside, build)
    # built into the default index, so the search with --index kept failing.
    _many_files(repo)
    where = ["--repo", str(repo.root), "--index", str(index_dir)]
    first = cv("index", "build", *where, *FAKE, "--json")
    assert first.returncode == 0, first.stderr
    chunks = json.loads(first.stdout)["branches"][0]["chunks"]
    _damage_pages(index_dir / "state.sqlite", pages)
    fix = f"codevouch index build --repair --index {index_dir}"
    for args in (["search", "cancel order", *where, "--json"], ["index", "status", *where], ["index", "build", *where,
                                                                                             *FAKE]):
        proc = cv(*args)
        no_crash(proc)
        assert proc.returncode == 1, (args, proc.stderr)
        assert f"the index ledger {index_dir / 'state.sqlite'} is corrupt" in proc.stderr and fix in proc.stderr
    repaired = clihelp.cv(*fix.split()[1:], *FAKE, "--json", cwd=repo.root)
    assert repaired.returncode == 0, repaired.stderr
    report = json.loads(repaired.stdout)
    aside = Path(report["repaired"]["ledger_aside"])
    assert aside.parent == index_dir and aside.name.startswith("state.sqlite.damaged-") and aside.exists()
    assert report["branches"][0]["chunks"] == chunks
    search = cv("search", "cancel order", *where, "--json")
    assert search.returncode == 0, search.stderr
    assert any(hit["path"].startswith("shop/") for hit in json.loads(search.stdout)), search.stdout


@pytest.mark.parametrize("damage", ["emptied", "file deleted", "directory deleted"])
def test_a_missing_or_emptied_vector_store_is_named_and_repair_restores_dense_search(
        repo: Repo, index_dir: Path, damage: str) -> None:
    # Dense search answered 0 hits with exit 0, and `index build` said "up to date, 0 embedded".
    repo.commit_files(SHOP)
    where = ["--repo", str(repo.root), "--index", str(index_dir)]
    assert cv("index", "build", *where, *FAKE).returncode == 0
    store = index_dir / "chroma" / "chroma.sqlite3"
    if damage == "emptied":
        store.write_bytes(b"")
    elif damage == "file deleted":
        store.unlink()
    else:
        shutil.rmtree(index_dir / "chroma")
    fix = f"codevouch index build --repair --index {index_dir}"
    for args in (["search", "cancel order", *where, "--mode", "dense", "--json"],
                 ["search", "cancel order", *where, "--json"],
                 ["index", "build", *where, *FAKE]):
        proc = cv(*args)
        no_crash(proc)
        assert proc.returncode == 1, (args, proc.stdout, proc.stderr)
        assert "the vector store" in proc.stderr and fix in proc.stderr, proc.stderr
        assert "up to date" not in proc.stdout
    lexical = cv("search", "cancel order", *where, "--mode", "lexical", "--json")
    assert lexical.returncode == 0, lexical.stderr       # the lexical half needs no vector
    fixed = cv(*fix.split()[1:], "--json")
    assert fixed.returncode == 0, fixed.stderr
    assert json.loads(fixed.stdout)["vectors"] > 0
    dense = cv("search", "cancel order", *where, "--mode", "dense", "--json")
    assert dense.returncode == 0, dense.stderr
    assert json.loads(dense.stdout)[0]["path"] == "shop/cancel.py"
    again = cv("index", "build", *where, *FAKE)
    assert again.returncode == 0 and "up to date" in again.stdout, again.stderr


@pytest.mark.process
def test_a_journal_left_by_a_killed_writer_is_not_damage(tmp_path: Path) -> None:
    """A build killed inside a write to the store's SQLite file leaves a hot journal: a read-only
    connection cannot roll it back ("attempt to write a readonly database"), and the check read
    that as damage and sent a search to --repair (seen once in test_crash_concurrency under load).
    The store's own read-write open rolls it back and reads the previous state."""
    from codevouch.store.storecheck import header_problem

    path = tmp_path / "chroma.sqlite3"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE t(x BLOB)")
    db.execute("INSERT INTO t VALUES (1)")
    db.commit()
    db.close()
    child = ("import os, signal, sqlite3, sys\n"
             "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
             "db.execute('PRAGMA journal_mode=DELETE'); db.execute('PRAGMA cache_size=10')\n"
             "db.execute('BEGIN IMMEDIATE')\n"
             "for _ in range(2000):\n    db.execute('INSERT INTO t VALUES (?)', (os.urandom(500),))\n"
             "os.kill(os.getpid(), signal.SIGKILL)\n")
    done = subprocess.run([sys.executable, "-c", child, str(path)], timeout=60)
    assert done.returncode == -signal.SIGKILL
    assert (tmp_path / "chroma.sqlite3-journal").stat().st_size > 0        # the journal is hot
    assert header_problem(path) is None
    db = sqlite3.connect(path)
    assert db.execute("SELECT count(*) FROM t").fetchone() == (1,)         # rolled back: the previous state
    db.close()
    # Real damage is still named.
    path.write_bytes(b"SQLite format 3\0" + b"\xff" * 200)
    assert header_problem(path) is not None
