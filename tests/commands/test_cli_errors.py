"""Failures a user meets at the terminal: each is one clear line and an exit code, never a traceback.

The CLI in-process (tests/clihelp.py), a real process where the test is about one (Ctrl-C, the
crash log, a mount namespace), real git repositories, the embedded Chroma store.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.clihelp import FAKE, cv
from tests.gitrepo import Repo
from tests.procs import wait_for_open


def clean_error(out: subprocess.CompletedProcess[str], code: int, *words: str) -> None:
    """Exit `code`, a message naming `words`, no Python internals."""
    assert out.returncode == code, (out.returncode, out.stdout, out.stderr)
    assert "Traceback" not in out.stderr and "Traceback" not in out.stdout, out.stderr
    assert out.stderr.startswith("codevouch: "), out.stderr
    for w in words:
        assert w in out.stderr, out.stderr


def files_under(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*")) if path.exists() else []


@pytest.fixture
def built(repo: Repo, index_dir: Path) -> Repo:
    repo.commit(**{"shop/cancel.py": "def cancel_order(order):\n    order.cancel()\n    return order\n",
                   "shop/refund.py": "def refund_order(order):\n    return order.refund()\n"})
    out = cv("index", "build", "--repo", str(repo.root), *FAKE, index=index_dir)
    assert out.returncode == 0, out.stderr
    return repo


def dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


# --- 1. silent failures ------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_dead_chroma_server_is_an_error_not_an_empty_or_lexical_answer(built: Repo, index_dir: Path, mode: str) -> None:
    out = cv("search", "cancel order", "--repo", str(built.root), "--mode", mode, index=index_dir,
             env={"CODEVOUCH_CHROMA_URL": dead_url()})
    clean_error(out, 6, "Chroma server", "CODEVOUCH_CHROMA_URL")
    assert out.stdout == ""
    # lexical search does not need the vector store, so it still answers
    out = cv("search", "cancel order", "--repo", str(built.root), "--mode", "lexical", index=index_dir,
             env={"CODEVOUCH_CHROMA_URL": dead_url()})
    assert out.returncode == 0 and "shop/cancel.py" in out.stdout


def test_build_against_a_dead_chroma_server_fails_and_changes_nothing(built: Repo, index_dir: Path) -> None:
    built.commit(**{"shop/ship.py": "def ship_order(order):\n    return order.ship()\n"})
    before = cv("index", "status", "--json", index=index_dir).stdout
    out = cv("index", "build", "--repo", str(built.root), *FAKE, index=index_dir,
             env={"CODEVOUCH_CHROMA_URL": dead_url()})
    clean_error(out, 6, "Chroma server")
    assert cv("index", "status", "--json", index=index_dir).stdout == before


@pytest.mark.parametrize("argv", [
    ["search", "cancel order"], ["search", "cancel order", "--mode", "lexical"], ["context", "cancel order"],
    ["index", "status"], ["index", "status", "--repo", "."], ["validate", "-"]])
def test_reads_never_create_the_index(repo: Repo, tmp_path: Path, argv: list[str]) -> None:
    repo.commit(**{"a.py": "A = 1\n"})
    never = tmp_path / "never-built"
    out = cv(*argv, index=never, cwd=repo.root, stdin='[{"path": "a.py"}]')
    assert out.returncode in (0, 3, 5), out.stderr
    assert "Traceback" not in out.stderr
    assert not never.exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    cv(*argv, index=empty, cwd=repo.root, stdin='[{"path": "a.py"}]')
    assert files_under(empty) == []


def test_search_of_a_never_built_index_says_so(repo: Repo, tmp_path: Path) -> None:
    repo.commit(**{"a.py": "A = 1\n"})
    out = cv("search", "x", "--repo", str(repo.root), index=tmp_path / "nothing")
    clean_error(out, 5, "nothing is indexed", "codevouch index build")


def test_reads_of_a_built_index_add_no_files(built: Repo, index_dir: Path) -> None:
    before = set(files_under(index_dir))
    for argv in (["search", "cancel order", "--no-record"], ["index", "status"], ["context", "refund", "--no-record"]):
        assert cv(*argv, "--repo" if argv[0] != "index" else "--index", str(built.root) if argv[0] != "index"
                  else str(index_dir), index=index_dir).returncode == 0
    # SQLite's WAL companions (-wal, -shm) may come and go; nothing else may appear but the
    # repository's id kept for the next call (root-commits, codevouch/worktree/rootcache.py).
    after = {p for p in files_under(index_dir) if not p.endswith(("-wal", "-shm"))}
    assert {p.rsplit("/", 1)[-1] for p in after - before} <= {"root-commits"}
    before = after
    # Recording a call's usage is the one other write a read makes, and only to usage.sqlite.
    assert cv("search", "cancel order", "--repo", str(built.root), index=index_dir).returncode == 0
    after = {p for p in files_under(index_dir) if not p.endswith(("-wal", "-shm"))}
    assert {p.rsplit("/", 1)[-1] for p in after - before} == {"usage.sqlite"}


# --- interrupts and crashes --------------------------------------------------------------------

@pytest.mark.process
def test_ctrl_c_exits_130_without_traceback_and_keeps_the_previous_state(built: Repo, index_dir: Path) -> None:
    built.commit_files({f"pkg/m{i}.py": f"def func_{i}(x):\n    return x * {i}\n" for i in range(400)})
    before = cv("index", "status", "--json", index=index_dir).stdout
    # A suite started in the background (`cmd &` in a script, nohup) runs with SIGINT ignored, and a
    # child inherits that: Python then leaves Ctrl-C ignored, as it should. Give the build the
    # disposition of a terminal's foreground process, which is what a user's Ctrl-C meets.
    proc = subprocess.Popen([sys.executable, "-m", "codevouch", "index", "build", "--repo", str(built.root), *FAKE],
                            env={**os.environ, "CODEVOUCH_INDEX": str(index_dir)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    # Interrupt once it is working: it has the ledger open (reading, chunking or embedding).
    assert wait_for_open(proc.pid, index_dir / "state.sqlite"), "the build never opened its ledger"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    assert cv("index", "status", "--json", index=index_dir).stdout == before
    rerun = cv("index", "build", "--repo", str(built.root), *FAKE, "--json", index=index_dir)
    assert rerun.returncode == 0, rerun.stderr


@pytest.mark.process
def test_an_unexpected_error_prints_one_line_and_logs_the_traceback(tmp_path: Path) -> None:
    code = ("from codevouch.commands.common import error_handler\n"
            "with error_handler():\n"
            "    {}['missing_key_in_codevouch']\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert out.returncode == 70
    [line] = out.stderr.splitlines()
    assert "unexpected error: KeyError" in line and "this is a bug" in line
    log = tmp_path / "cache" / "codevouch" / "crash.log"
    assert str(log) in line
    text = log.read_text()
    assert "Traceback (most recent call last)" in text and "missing_key_in_codevouch" in text


# --- 1b.2 index-directory problems ---------------------------------------------------------------

def test_index_that_is_a_file_or_under_a_file(built: Repo, tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    for target in (afile, afile / "sub"):
        for argv in (["index", "build", "--repo", str(built.root), *FAKE], ["index", "status"],
                     ["search", "cancel", "--repo", str(built.root)]):
            clean_error(cv(*argv, "--index", str(target)), 1, "--index", "file")
        out = cv("index", "build", "--repo", str(built.root), *FAKE, "--index", str(target))
        clean_error(out, 1, "file")


def test_index_under_proc(built: Repo) -> None:
    out = cv("index", "build", "--repo", str(built.root), *FAKE, "--index", "/proc/x")
    clean_error(out, 1, "/proc/x")
    out = cv("index", "status", "--index", "/proc/x")
    assert out.returncode == 0 and "nothing indexed" in out.stdout


def test_corrupt_ledger_says_how_to_recover(built: Repo, index_dir: Path) -> None:
    (index_dir / "state.sqlite").write_text("junk\n")
    for wal in index_dir.glob("state.sqlite-*"):
        wal.unlink()
    for argv in (["index", "status"], ["search", "cancel", "--repo", str(built.root)],
                 ["index", "build", "--repo", str(built.root), *FAKE]):
        out = cv(*argv, index=index_dir)
        clean_error(out, 1, "corrupt", "index build")
        # (It said to move the directory aside and build, which built into the default index and
        # left a search with --index failing; the repair it names now is tested in
        # tests/store/test_damaged_index.py.)
        assert f"codevouch index build --repair --index {index_dir}" in out.stderr


def _unshare_works() -> bool:
    if not shutil.which("unshare"):
        return False
    return subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode == 0


@pytest.mark.process
@pytest.mark.skipif(not _unshare_works(), reason="needs `unshare -rm` to make a read-only bind mount")
def test_read_only_index_mount(built: Repo, index_dir: Path, tmp_path: Path) -> None:
    mnt = tmp_path / "ro"
    mnt.mkdir()
    exe = f"{sys.executable} -m codevouch"

    def under_ro(cmd: str) -> subprocess.CompletedProcess[str]:
        script = f"mount --bind -o ro {index_dir} {mnt} && {cmd}"
        return subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True,
                              env={**os.environ, "CODEVOUCH_INDEX": str(mnt)}, timeout=120)

    status = under_ro(f"{exe} index status --json")
    assert status.returncode == 0 and '"branch": "main"' in status.stdout, status.stderr
    lexical = under_ro(f"{exe} search 'cancel order' --mode lexical --repo {built.root}")
    assert lexical.returncode == 0 and "shop/cancel.py" in lexical.stdout, lexical.stderr
    build = under_ro(f"{exe} index build --repo {built.root} --embedder fake-bow-64")
    clean_error(build, 1, "not writable")
    dense = under_ro(f"{exe} search 'cancel order' --mode dense --repo {built.root}")
    assert "Traceback" not in dense.stderr
    assert dense.returncode == 0 and "shop/cancel.py" in dense.stdout or dense.returncode == 1, dense.stderr


def test_a_branch_git_does_not_know_is_named_not_offered_for_a_build(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit_files({"a.py": "def f():\n    return 1\n"})
    repo.git("branch", "feature")
    index = tmp_path / "index"
    assert cv("index", "build", "--repo", str(repo.root), *FAKE, index=index).returncode == 0
    missing = cv("search", "f", "--repo", str(repo.root), "--branch", "nosuch", index=index)
    assert missing.returncode == 5 and "has no branch 'nosuch'" in missing.stderr, missing.stderr
    assert "index build" not in missing.stderr
    unbuilt = cv("search", "f", "--repo", str(repo.root), "--branch", "feature", index=index)
    assert unbuilt.returncode == 5 and "--branch feature" in unbuilt.stderr and "index build" in unbuilt.stderr


def test_status_of_an_unindexed_repository_says_so_beside_others(tmp_path: Path) -> None:
    indexed, other = Repo(tmp_path / "indexed"), Repo(tmp_path / "other")
    for n, repo in enumerate((indexed, other)):
        repo.commit_files({"a.py": f"def f():\n    return {n}\n"})      # two histories, two repositories
    index = tmp_path / "index"
    assert cv("index", "build", "--repo", str(indexed.root), *FAKE, index=index).returncode == 0
    out = cv("index", "status", "--repo", str(other.root), index=index)
    assert out.returncode == 0 and "is not indexed in" in out.stdout and "holds other repositories" in out.stdout
    assert "nothing indexed" not in out.stdout
    empty = cv("index", "status", "--repo", str(other.root), index=tmp_path / "empty")
    assert "nothing indexed in" in empty.stdout
