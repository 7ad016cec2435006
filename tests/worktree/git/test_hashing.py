"""Blob ids of working-tree files, and the ids kept by stat data."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from codevouch.worktree import gitio
from codevouch.worktree.git import hashing
from tests.gitrepo import Repo


def test_hash_worktree_files_matches_git_and_skips_what_it_cannot_hash(repo: Repo) -> None:
    repo.write("a.py", "A = 1\n")
    repo.write("b.py", "B = 2\n")
    commit = repo.commit("files")
    hashed = gitio.hash_worktree_files(repo.root, ["a.py", "missing.py", "b.py"])
    assert hashed == {"a.py": repo.blob(commit, "a.py"), "b.py": repo.blob(commit, "b.py")}


def _age(path: Path, seconds: float = 60.0) -> None:
    """Set the file's mtime back; its ctime is then now, so it is aged too by waiting past RACY_NS
    (we stand in for that by lowering RACY_NS, the one knob: see the tests below)."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - int(seconds * 1e9)))


def _git_hash(repo: Repo, path: str) -> str:
    return repo.git("hash-object", "--", path).strip()


def test_a_file_hashed_before_is_not_hashed_again_until_it_changes(
        repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    import time
    repo.write("a.py", "A = 1\n")
    repo.commit("a")
    target = repo.write("a.py", "A = 2\n")
    _age(target)
    monkeypatch.setattr(hashing, "RACY_NS", 0)     # the ctime is "old enough" at once
    time.sleep(0.01)
    first = gitio.hash_worktree_files(repo.root, ["a.py"])
    before = gitio.PROCESSES["hash-object"]
    assert gitio.hash_worktree_files(repo.root, ["a.py"]) == first == {"a.py": _git_hash(repo, "a.py")}
    assert gitio.PROCESSES["hash-object"] == before            # remembered: no process
    # Rewritten with the same size, and its mtime set back to the remembered one: the ctime moved.
    old = target.stat()
    target.write_text("A = 3\n")
    os.utime(target, ns=(old.st_atime_ns, old.st_mtime_ns))
    again = gitio.hash_worktree_files(repo.root, ["a.py"])
    assert gitio.PROCESSES["hash-object"] == before + 1
    assert again == {"a.py": _git_hash(repo, "a.py")} != first


def test_a_file_changed_too_close_to_its_hashing_is_never_remembered(repo: Repo) -> None:
    repo.write("a.py", "A = 1\n")
    repo.commit("a")
    repo.write("a.py", "A = 2\n")      # just now: within RACY_NS of the hashing
    before = gitio.PROCESSES["hash-object"]
    gitio.hash_worktree_files(repo.root, ["a.py"])
    gitio.hash_worktree_files(repo.root, ["a.py"])
    assert gitio.PROCESSES["hash-object"] == before + 2


def test_a_changed_attributes_file_or_index_makes_files_hashed_again(
        repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    import time
    repo.write("sub/a.txt", b"one\r\ntwo\r\n")
    repo.commit("a")
    target = repo.root / "sub" / "a.txt"
    _age(target)
    monkeypatch.setattr(hashing, "RACY_NS", 0)
    time.sleep(0.01)
    crlf = gitio.hash_worktree_files(repo.root, ["sub/a.txt"])
    assert crlf == {"sub/a.txt": _git_hash(repo, "sub/a.txt")}
    # An attributes file in the file's folder (not the top one) that makes it text: git now
    # stores it with LF, so its blob id changes though the file did not.
    repo.write("sub/.gitattributes", "*.txt text\n")
    lf = gitio.hash_worktree_files(repo.root, ["sub/a.txt"])
    assert lf == {"sub/a.txt": _git_hash(repo, "sub/a.txt")} != crlf
    before = gitio.PROCESSES["hash-object"]
    repo.git("add", "sub/.gitattributes")        # the index changed: hashed again, same answer
    assert gitio.hash_worktree_files(repo.root, ["sub/a.txt"]) == lf
    assert gitio.PROCESSES["hash-object"] == before + 1


def test_nothing_is_remembered_when_configured_filters_may_run(
        repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    import time
    repo.write("a.py", "A = 1\n")
    repo.commit("a")
    _age(repo.write("a.py", "A = 2\n"))
    monkeypatch.setattr(hashing, "RACY_NS", 0)
    monkeypatch.setenv(gitio.RUN_FILTERS_VAR, "1")
    time.sleep(0.01)
    before = gitio.PROCESSES["hash-object"]
    gitio.hash_worktree_files(repo.root, ["a.py"])
    gitio.hash_worktree_files(repo.root, ["a.py"])
    assert gitio.PROCESSES["hash-object"] == before + 2


def test_a_symlink_is_hashed_as_its_target_string_never_followed(repo: Repo, tmp_path: Path) -> None:
    """git stores a symlink as the blob of its target string (mode 120000); hash-object given
    the path follows it and hashes what it points at (here a file outside the repository)."""
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    repo.commit("base", **{"a.py": "A = 1\n"})
    os.symlink(outside, repo.root / "link.py")
    hashed = gitio.hash_worktree_files(repo.root, ["link.py", "a.py"])
    repo.git("add", "link.py")
    assert repo.git("ls-files", "-s", "link.py").split()[:2] == ["120000", hashed["link.py"]]
    assert hashed["link.py"] == hashing.symlink_blob(os.fsencode(outside))
    assert hashed["a.py"] == _git_hash(repo, "a.py")


def test_what_is_not_a_file_or_a_symlink_is_skipped_with_its_reason(repo: Repo) -> None:
    repo.commit("base", **{"a.py": "A = 1\n"})
    Repo(repo.root / "nested").commit_files({"n.py": "N = 1\n"})
    (repo.root / "folder").mkdir()
    repo.write("big.py", "x" * 2000)
    pending = gitio.start_hash_worktree_files(repo.root, ["nested", "folder", "big.py", "a.py"], limit=1000)
    assert pending.result() == {"a.py": _git_hash(repo, "a.py")}
    assert pending.skipped == {"nested": gitio.NESTED_REPOSITORY, "folder": gitio.FOLDER,
                               "big.py": "huge (>1000 bytes)"}


@pytest.mark.process
def test_a_fifo_is_skipped_unopened(repo: Repo, tmp_path: Path) -> None:
    """In a child process under a timeout: git given a FIFO blocks for ever (a regression
    must fail, not hang the suite)."""
    import json
    import subprocess
    import sys

    repo.commit("base", **{"a.py": "A = 1\n"})
    os.mkfifo(repo.root / "pipe.py")
    os.mkfifo(tmp_path / "outside.fifo")
    os.symlink(tmp_path / "outside.fifo", repo.root / "to_fifo.py")
    probe = ("import json, sys; from pathlib import Path; from codevouch.worktree import gitio\n"
             "p = gitio.start_hash_worktree_files(Path(sys.argv[1]), ['pipe.py', 'to_fifo.py', 'a.py'])\n"
             "print(json.dumps([p.result(), p.skipped]))")
    import signal

    proc = subprocess.Popen([sys.executable, "-c", probe, str(repo.root)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=dict(os.environ), start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        raise AssertionError("hashing a FIFO blocked") from None
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)       # the probe and any git child blocked on a FIFO
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
    assert proc.returncode == 0, stderr
    hashed, skipped = json.loads(stdout)
    assert skipped == {"pipe.py": "a FIFO (named pipe), not a regular file: not read"}
    assert hashed == {"a.py": _git_hash(repo, "a.py"),
                      "to_fifo.py": hashing.symlink_blob(os.fsencode(tmp_path / "outside.fifo"))}
