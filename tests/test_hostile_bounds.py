"""Bounded work on hostile input (issue 19, part 4): a huge sparse working-tree file is never read
whole by any command, and huge inputs are refused at a documented cap in bounded memory.

Real git, real files, the real CLI in its own process, whose peak memory (ru_maxrss from
wait4) is what is checked: before the cap every command read all of the 256 MB file (300-560 MB).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.gitrepo import Repo

FAKE = ["--embedder", "fake-bow-64"]
SPARSE = 256 << 20          # bytes of the sparse file (no disk used)
MAX_RSS = 220 << 20         # a command's peak memory, well under the file's size
ORDERS = "def cancel(order):\n    return order.cancel()\n"


def run(*args: str, index: Path, cwd: Path, stdin: bytes = b"") -> tuple[int, bytes, bytes, int]:
    """(exit code, stdout, stderr, peak RSS in bytes) of one real `python -m codevouch` process,
    reaped with wait4 to read its own rusage."""
    with tempfile.TemporaryFile() as given, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        given.write(stdin)
        given.seek(0)
        proc = subprocess.Popen([sys.executable, "-m", "codevouch", *args], cwd=cwd, stdin=given, stdout=out,
                                stderr=err, env={**os.environ, "CODEVOUCH_INDEX": str(index)})
        deadline = time.monotonic() + 180
        while (done := os.wait4(proc.pid, os.WNOHANG))[0] == 0:
            if time.monotonic() > deadline:
                proc.kill()
                os.wait4(proc.pid, 0)
                raise AssertionError(f"{args} ran past 180 s")
            time.sleep(0.02)
        proc.returncode = os.waitstatus_to_exitcode(done[1])
        out.seek(0)
        err.seek(0)
        return proc.returncode, out.read(), err.read(), done[2].ru_maxrss << 10


@pytest.fixture(scope="module")
def sparse(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, Path, Path]:
    base = tmp_path_factory.mktemp("bounds")
    repo = Repo(base / "repo")
    repo.commit_files({"src/orders.py": ORDERS})
    index = base / "index"
    code, out, err, _ = run("index", "build", "--repo", str(repo.root), *FAKE, index=index, cwd=repo.root)
    assert code == 0, err
    with open(repo.root / "src" / "sparse.py", "wb") as handle:
        handle.truncate(SPARSE)
    return repo, index, base


def _cli(sparse: tuple[Repo, Path, Path], *args: str, stdin: bytes = b"") -> tuple[int, bytes, bytes]:
    repo, index, _ = sparse
    code, out, err, peak = run(*args, index=index, cwd=repo.root, stdin=stdin)
    assert b"Traceback" not in err, err[-2000:]
    assert peak < MAX_RSS, f"{args}: peak RSS {peak >> 20} MB for a {SPARSE >> 20} MB sparse file"
    return code, out, err


def test_validate_gives_too_large_without_reading_the_file(sparse: tuple[Repo, Path, Path]) -> None:
    code, out, _ = _cli(sparse, "validate", "-", "--json", stdin=b'{"path": "src/sparse.py", "start_line": 1}')
    [v] = json.loads(out)
    assert (v["verdict"], v["reason"]) == ("historical-only", "too-large"), v
    assert str(SPARSE) in v["detail"] and "max_file_bytes" in v["detail"]


def test_check_refs_gives_path_too_large(sparse: tuple[Repo, Path, Path]) -> None:
    code, out, _ = _cli(sparse, "check-refs", "-", "--json", stdin=b"See src/sparse.py:1 and src/orders.py:2.")
    found = {r["path"]: r for r in json.loads(out)["references"]}
    assert found["src/sparse.py"]["reason"] == "path-too-large", found
    assert found["src/orders.py"]["reason"] == "lines-in-file"


def test_drift_lists_the_file_as_huge(sparse: tuple[Repo, Path, Path]) -> None:
    code, out, _ = _cli(sparse, "drift")
    assert code == 0 and b"src/sparse.py (huge" in out, out


def test_search_overlay_skips_the_file(sparse: tuple[Repo, Path, Path]) -> None:
    code, out, _ = _cli(sparse, "search", "cancel order", "--json")
    assert code == 0 and json.loads(out)[0]["path"] == "src/orders.py"


def test_context_packs_without_reading_the_file(sparse: tuple[Repo, Path, Path]) -> None:
    code, out, err = _cli(sparse, "context", "cancel order")
    assert code == 0 and b"def cancel" in out, err


def test_the_cap_is_the_repository_max_file_bytes(sparse: tuple[Repo, Path, Path], tmp_path: Path) -> None:
    """A repository may lower the cap (.codevouch.toml): the same file under it is read again
    once the cap is above it, and too-large once it is below."""
    from codevouch.api import Index

    repo, _, _ = sparse
    small = Repo(tmp_path / "small")
    small.commit_files({"a.py": "def a():\n    return 1\n" * 40, ".codevouch.toml": "max_file_bytes = 100\n"})
    [v] = Index(small.root, tmp_path / "i").validate([{"path": "a.py", "commit": small.head(), "start_line": 1,
                                                       "end_line": 2}])
    assert v.reason == "too-large" and "100-byte cap" in v.detail
    small.commit_files({".codevouch.toml": "max_file_bytes = 100000\n"})
    [v] = Index(small.root, tmp_path / "i").validate([{"path": "a.py", "commit": small.head(), "start_line": 1,
                                                       "end_line": 2}])
    assert v.reason == "same-commit", v.detail
