"""Bounded work on hostile input (issue 19, part 4): a huge sparse working-tree file is never read
whole by any command, and huge inputs are refused at a documented cap in bounded memory.

Real git, real files, the real CLI in its own process, whose peak memory (ru_maxrss from
wait4, read by a small launcher) is what is checked: before the cap every command read all of the 256 MB file (300-560 MB).
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

# Real processes: the peak memory checked is the process's own.
pytestmark = pytest.mark.process

FAKE = ["--embedder", "fake-bow-64"]
SPARSE = 256 << 20          # bytes of the sparse file (no disk used)
MAX_RSS = 220 << 20         # a command's peak memory, well under the file's size
ORDERS = "def cancel(order):\n    return order.cancel()\n"


# The command is started by a small launcher, not by pytest: Linux carries the peak RSS of the
# process image an exec replaces into the new one's ru_maxrss, so a command forked straight from
# a pytest grown to 600 MB by earlier tests "peaked" at 600 MB. The launcher's own image is small.
LAUNCHER = """
import os, subprocess, sys
proc = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(proc.pid, 0)
with open(sys.argv[1], "w") as out:
    out.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run(*args: str, index: Path, cwd: Path, stdin: bytes = b"",
        env: dict[str, str] | None = None) -> tuple[int, bytes, bytes, int]:
    """(exit code, stdout, stderr, peak RSS in bytes) of one real `python -m codevouch` process,
    reaped by the launcher with wait4 to read its own rusage."""
    with tempfile.TemporaryFile() as given, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.TemporaryDirectory() as scratch:
        given.write(stdin)
        given.seek(0)
        peak_file = Path(scratch) / "peak"
        proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, str(peak_file), sys.executable, "-m", "codevouch",
                                 *args], cwd=cwd, stdin=given, stdout=out, stderr=err, start_new_session=True,
                                env={**os.environ, "CODEVOUCH_INDEX": str(index), **(env or {})})
        try:
            proc.wait(timeout=180)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
            raise AssertionError(f"{args} ran past 180 s") from None
        out.seek(0)
        err.seek(0)
        return proc.returncode, out.read(), err.read(), int(peak_file.read_text()) << 10


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


def _cli(sparse: tuple[Repo, Path, Path], *args: str, stdin: bytes = b"",
         env: dict[str, str] | None = None) -> tuple[int, bytes, bytes]:
    repo, index, _ = sparse
    code, out, err, peak = run(*args, index=index, cwd=repo.root, stdin=stdin, env=env)
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


# --- huge inputs: capped, in bounded memory ----------------------------------------------------

def _snippets(n: int) -> bytes:
    return b"".join(b'{"path": "src/orders.py", "start_line": 1, "end_line": 2}\n' for _ in range(n))


@pytest.mark.parametrize("command", ["validate", "check-refs"])
def test_stdin_over_the_input_cap_is_refused_before_any_work(sparse: tuple[Repo, Path, Path], command: str) -> None:
    """9 MiB on stdin, over the 8 MiB default: exit 2 naming the cap; at most cap + 1 bytes read."""
    repo, index, _ = sparse
    data = _snippets(160_000) if command == "validate" else b"See src/orders.py:1.\n" * 450_000
    assert len(data) > 8 << 20
    started = time.monotonic()
    code, out, err = _cli(sparse, command, "-", stdin=data)
    assert code == 2 and b"CODEVOUCH_MAX_INPUT_BYTES" in err and b"8388608 bytes" in err, (code, err[-500:])
    assert time.monotonic() - started < 60


def test_the_input_cap_is_configurable_and_applies_to_a_file(sparse: tuple[Repo, Path, Path], tmp_path: Path) -> None:
    answer = tmp_path / "answer.md"
    answer.write_text("See src/orders.py:1.\n" * 100)
    small = {"CODEVOUCH_MAX_INPUT_BYTES": "1000"}
    code, _, err = _cli(sparse, "check-refs", str(answer), env=small)
    assert code == 2 and b"over the input cap of 1000 bytes" in err, err
    code, _, err = _cli(sparse, "check-refs", str(answer), env={"CODEVOUCH_MAX_INPUT_BYTES": "100000"})
    assert code == 0, err
    code, _, err = _cli(sparse, "check-refs", str(answer), env={"CODEVOUCH_MAX_INPUT_BYTES": "lots"})
    # Exit 2, no longer 1: a variable that is not a number in its range is a usage error.
    assert code == 2 and b"CODEVOUCH_MAX_INPUT_BYTES" in err, err


@pytest.mark.parametrize("layout", ["lines", "list"])
def test_more_snippets_than_the_cap_is_an_input_error(sparse: tuple[Repo, Path, Path], layout: str) -> None:
    def given(n: int) -> bytes:
        lines = _snippets(n)
        return lines if layout == "lines" else b"[" + b",".join(lines.splitlines()) + b"]"
    cap = {"CODEVOUCH_MAX_SNIPPETS": "5"}
    code, _, err = _cli(sparse, "validate", "-", stdin=given(6), env=cap)
    assert code == 2 and b"more than 5 snippets" in err and b"CODEVOUCH_MAX_SNIPPETS" in err, err
    code, out, err = _cli(sparse, "validate", "-", "--json", stdin=given(5), env=cap)
    assert code in (0, 3) and len(json.loads(out)) == 5, err     # 3: verdicts not all usable


def test_the_snippet_cap_default_refuses_a_million(sparse: tuple[Repo, Path, Path]) -> None:
    """1,000,000 small snippets fit in 8 MiB only as a list of bare paths: refused by count."""
    data = b"[" + b",".join([b'{"path":"a"}'] * 600_000) + b"]"
    assert len(data) < 8 << 20
    started = time.monotonic()
    code, _, err = _cli(sparse, "validate", "-", stdin=data)
    assert code == 2 and b"more than 100000 snippets" in err, err[-500:]
    assert time.monotonic() - started < 60


def test_more_references_than_the_cap_is_an_input_error(sparse: tuple[Repo, Path, Path]) -> None:
    from codevouch.api import Index
    from codevouch.errors import InputError

    repo, index, _ = sparse
    text = "".join(f"See src/orders.py:{n}.\n" for n in range(1, 5))
    code, _, err = _cli(sparse, "check-refs", "-", stdin=text.encode(), env={"CODEVOUCH_MAX_REFERENCES": "3"})
    assert code == 2 and b"4 references, over the cap of 3" in err, err
    code, _, err = _cli(sparse, "check-refs", "-", stdin=text.encode(), env={"CODEVOUCH_MAX_REFERENCES": "4"})
    assert code != 2 and b"over the cap" not in err, err   # checked (lines 3 and 4 are past the end)
    many = "".join(f"See src/orders.py:{n}.\n" for n in range(1, 5002))
    with pytest.raises(InputError, match="CODEVOUCH_MAX_REFERENCES"):
        Index(repo.root, index).check_refs(many)


# --- files over the cap are not grepped or diffed ----------------------------------------------
#
# git grep --untracked holds all of a file in memory (2 GB resident for a sparse 2 GB file), and
# git diff reads all of it (15 s). The peak is the launcher's wait4 rusage, which takes in the
# git processes the command waited for.

HUGE = 2 * 1024**3


@pytest.fixture(scope="module")
def huge(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, Path]:
    base = tmp_path_factory.mktemp("huge")
    repo = Repo(base / "repo")
    repo.commit_files({"src/orders.py": ORDERS, "src/tracked_big.py": "X = 1\n"})
    index = base / "index"
    code, _, err, _ = run("index", "build", "--repo", str(repo.root), *FAKE, index=index, cwd=repo.root)
    assert code == 0, err
    for name in ("src/tracked_big.py", "src/untracked_big.py"):       # modified, and untracked
        with open(repo.root / name, "ab") as handle:
            handle.truncate(HUGE)
    return repo, index


def test_check_refs_does_not_grep_a_file_over_the_cap(huge: tuple[Repo, Path]) -> None:
    repo, index = huge
    code, out, err, peak = run("check-refs", "-", "--json", index=index, cwd=repo.root,
                               stdin=b"`cancel()` in src/orders.py, and `invented_helper` too.")
    assert b"Traceback" not in err, err[-2000:]
    report = json.loads(out)
    skipped = {s["path"]: s["reason"] for s in report["skipped"]}
    assert set(skipped) == {"src/tracked_big.py", "src/untracked_big.py"}, skipped
    assert all(r.startswith("too large") for r in skipped.values())
    found = {r["symbol"]: r for r in report["references"] if r["kind"] == "symbol"}
    assert found["cancel"]["reason"] == "symbol-defined"
    assert found["invented_helper"]["reason"] == "symbol-unknown"
    assert "src/tracked_big.py" in found["invented_helper"]["detail"]      # said where it did not look
    assert peak < MAX_RSS, f"check-refs: peak RSS {peak >> 20} MB beside a {HUGE >> 20} MB sparse file"


def test_review_does_not_diff_a_file_over_the_cap(huge: tuple[Repo, Path]) -> None:
    repo, index = huge
    code, out, err, peak = run("review", "--all", "--no-related", "--json", index=index, cwd=repo.root)
    assert code == 0 and b"Traceback" not in err, err[-2000:]
    files = {f["path"]: f for f in json.loads(out)["coverage"]["files"]}
    assert files["src/tracked_big.py"]["coverage"] == "left_out"
    assert files["src/tracked_big.py"]["reason"] == "huge (>1000000 bytes), not diffed"
    assert files["src/untracked_big.py"]["coverage"] == "left_out"
    assert peak < MAX_RSS, f"review: peak RSS {peak >> 20} MB beside a {HUGE >> 20} MB sparse file"
