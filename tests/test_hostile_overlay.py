"""The working-tree overlay on a hostile tree: symlinks (untracked, and committed after the
build, which reaches every clone by a pull), FIFOs, links to /dev/zero, nested repositories and
submodules, and a file name that is not UTF-8.

git hash-object --stdin-paths follows symlinks and opens anything it is given: a link to
/etc/passwd was read, a FIFO blocked for ever, /dev/zero grew without bound, and a name byte
that is not UTF-8 failed every search. Each command runs in its own process group under a
timeout, so a regression fails here instead of hanging the suite; whatever it left blocked on
a FIFO is killed with it.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from codevouch import Index
from tests.gitrepo import Repo
from tests.test_mcp_wire import Wire, call

# Real processes: each runs in its own process group under a timeout (see above).
pytestmark = pytest.mark.process

FAKE = ["--embedder", "fake-bow-64"]
TIMEOUT = 120
ORDERS = "def cancel_order(order):\n    return order.cancel()\n"
BAD_NAME = os.fsdecode(b"bad\xffname.py")           # U+DCFF inside: surrogateescape's 0xFF
SKIPPED_LINK = "not a regular file (symlinks are not followed)"


def cli(*args: str, cwd: Path, index: Path, stdin: bytes = b"",
        env: dict[str, str] | None = None) -> tuple[int, bytes, bytes]:
    """(exit code, stdout, stderr) of one real `python -m codevouch`, in its own process group,
    killed whole (git children too) if it runs past TIMEOUT."""
    with tempfile.TemporaryFile() as given, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        given.write(stdin)
        given.seek(0)
        proc = subprocess.Popen([sys.executable, "-m", "codevouch", *args], cwd=cwd, stdin=given, stdout=out,
                                stderr=err, start_new_session=True,
                                env={**os.environ, "CODEVOUCH_INDEX": str(index), **(env or {})})
        try:
            proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise AssertionError(f"{args} ran past {TIMEOUT} s (a FIFO or /dev/zero was opened)") from None
        finally:
            _kill_group(proc.pid)
        out.seek(0)
        err.seek(0)
        return proc.returncode, out.read(), err.read()


def _kill_group(pgid: int) -> None:
    """Whatever the command left behind in its group (a git child blocked on a FIFO)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _unblock(fifo: Path) -> None:
    """Open a FIFO for writing and close it: a reader blocked on it (a regression) gets EOF."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A repository indexed clean, then: symlinks committed after the build (to /etc/passwd and
    /dev/zero), and in the working tree untracked links to /etc/passwd, /dev/zero and a FIFO,
    a tracked file replaced by a FIFO, and a nested repository."""
    base = tmp_path_factory.mktemp("hostile-overlay")
    repo = Repo(base / "repo")
    repo.commit_files({"shop/orders.py": ORDERS, "shop/tracked.py": "def tracked():\n    return 1\n"})
    index = base / "index"
    code, _, err = cli("index", "build", "--repo", str(repo.root), *FAKE, cwd=repo.root, index=index)
    assert code == 0, err
    # Committed after the build: reaches every clone by a pull; the overlay hashes these.
    os.symlink("/dev/zero", repo.root / "committed_zero.py")
    os.symlink("/etc/passwd", repo.root / "committed_passwd.py")
    repo.commit("links", "committed_zero.py", "committed_passwd.py")
    outside = base / "outside.fifo"
    os.mkfifo(outside)
    os.symlink("/etc/passwd", repo.root / "passwd.py")
    os.symlink("/dev/zero", repo.root / "zero.py")
    os.symlink(outside, repo.root / "to_fifo.py")
    (repo.root / "shop" / "tracked.py").unlink()
    os.mkfifo(repo.root / "shop" / "tracked.py")                 # a tracked file replaced by a FIFO
    nested = Repo(repo.root / "vendor" / "nested")
    nested.commit_files({"inner.py": "def inner():\n    return 2\n"})
    yield repo, index
    for fifo in (outside, repo.root / "shop" / "tracked.py"):
        _unblock(fifo)


def _search(hostile: Any, query: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    repo, index = hostile
    code, out, err = cli("search", query, "--json", cwd=repo.root, index=index)
    assert code == 0 and b"Traceback" not in err, err[-2000:]
    # The overlay's summary is a JSON line on stderr, the hits JSON on stdout.
    return _overlay(err), json.loads(out)


def _overlay(err: bytes) -> dict[str, Any]:
    lines = [line for line in err.splitlines() if line.startswith(b'{"overlay"')]
    assert lines, err[-2000:]
    found: dict[str, Any] = json.loads(lines[-1])["overlay"]
    return found


def test_search_answers_and_says_why_each_hostile_entry_was_skipped(hostile: Any) -> None:
    overlay, hits = _search(hostile, "cancel order")
    assert hits and hits[0]["path"] == "shop/orders.py"
    skipped = {s["path"]: s["reason"] for s in overlay["skipped"]}
    for link in ("passwd.py", "zero.py", "to_fifo.py", "committed_zero.py", "committed_passwd.py"):
        assert skipped[link] == SKIPPED_LINK, (link, skipped)
    assert skipped["shop/tracked.py"] == "skipped: a FIFO (named pipe), not a regular file: not read"
    assert skipped["vendor/nested/"] == "skipped: a nested repository, not searched"


def test_a_file_named_with_a_byte_that_is_not_utf8_is_searched(tmp_path: Path) -> None:
    """The name's byte 0xFF reached the tokenizer as a lone surrogate: every search failed."""
    repo = Repo(tmp_path / "repo")
    repo.commit_files({"shop/orders.py": ORDERS})
    Index(repo.root, tmp_path / "index", embedder="fake-bow-64").build()
    (repo.root / BAD_NAME).write_text("def refund_everything_now(order):\n    return order.refund()\n")
    assert os.fsencode(BAD_NAME) in os.listdir(os.fsencode(repo.root))       # the byte, on disk
    _, hits = _search((repo, tmp_path / "index"), "refund everything now")
    assert hits[0]["path"] == BAD_NAME and hits[0]["origin"] == "uncommitted", hits[0]
    assert "refund_everything_now" in hits[0]["code"]


def test_validate_and_context_answer_beside_a_fifo(hostile: Any) -> None:
    repo, index = hostile
    given = json.dumps([{"path": "shop/tracked.py", "start_line": 1},
                        {"path": "zero.py", "start_line": 1},
                        {"path": "shop/orders.py", "commit": repo.head(), "start_line": 1, "end_line": 2}]).encode()
    code, out, err = cli("validate", "-", "--json", cwd=repo.root, index=index, stdin=given)
    assert b"Traceback" not in err, err[-2000:]
    verdicts = {v["path"]: (v["verdict"], v["reason"]) for v in json.loads(out)}
    assert verdicts["shop/tracked.py"] == ("historical-only", "not-a-file")
    assert verdicts["zero.py"][0] == "excluded"
    assert verdicts["shop/orders.py"] == ("usable", "same-commit")
    code, out, err = cli("context", "cancel order", cwd=repo.root, index=index)
    assert code == 0 and b"def cancel_order" in out, err[-2000:]


def test_a_symlink_is_hashed_as_git_stores_it_never_followed(hostile: Any) -> None:
    """The id the overlay gives an untracked link is the blob of its target string (what
    `git add` stores, mode 120000), not of /etc/passwd's content."""
    from codevouch.worktree import gitio

    repo, _ = hostile
    hashed = gitio.hash_worktree_files(repo.root, ["passwd.py", "committed_passwd.py"])
    stored = repo.blob("HEAD", "committed_passwd.py")
    assert hashed == {"passwd.py": stored, "committed_passwd.py": stored}
    assert repo.git("ls-tree", "HEAD", "committed_passwd.py").startswith("120000 ")


def _strace_usable() -> bool:
    import shutil

    if shutil.which("strace") is None:
        return False
    probe = subprocess.run(["strace", "-f", "-qq", "-e", "trace=openat", "-o", os.devnull, "true"],
                           capture_output=True, timeout=30)
    return probe.returncode == 0


@pytest.mark.skipif(not _strace_usable(), reason="strace is not installed, or ptrace is not permitted here")
def test_no_process_opens_a_symlinked_or_special_file(hostile: Any, tmp_path: Path) -> None:
    """strace every openat of a search (codevouch and its git children): no link is opened
    (so /etc/passwd and /dev/zero are not read through one), nor the FIFO."""
    repo, index = hostile
    trace = tmp_path / "trace"
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=openat,open", "-o", str(trace), sys.executable,
                                 "-m", "codevouch", "search", "cancel order", "--json"], cwd=repo.root, stdout=out,
                                stderr=subprocess.PIPE, start_new_session=True,
                                env={**os.environ, "CODEVOUCH_INDEX": str(index)})
        try:
            _, err = proc.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise AssertionError("search under strace ran past the timeout") from None
        finally:
            _kill_group(proc.pid)
    assert proc.returncode == 0, err[-2000:]
    opened = trace.read_text(errors="replace")
    for name in ("passwd.py", "zero.py", "to_fifo.py", "committed_zero.py", "committed_passwd.py",
                 "shop/tracked.py", "/dev/zero", "outside.fifo"):
        assert f'{name}"' not in opened, [line for line in opened.splitlines() if f'{name}"' in line]


def test_a_submodule_committed_after_the_build_is_named_so(tmp_path: Path) -> None:
    inner = Repo(tmp_path / "inner")
    inner.commit_files({"lib.py": "def lib():\n    return 3\n"})
    repo = Repo(tmp_path / "repo")
    repo.commit_files({"shop/orders.py": ORDERS})
    index = tmp_path / "index"
    Index(repo.root, index, embedder="fake-bow-64").build()
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(inner.root), "ext/inner")
    repo.git("commit", "-q", "-m", "submodule")
    code, out, err = cli("search", "cancel order", "--json", cwd=repo.root, index=index)
    assert code == 0, err[-2000:]
    skipped = {s["path"]: s["reason"] for s in _overlay(err)["skipped"]}
    assert skipped["ext/inner"] == "skipped: a submodule, not searched", skipped


class GroupWire(Wire):
    """The MCP server over stdio in its own process group, so a git child it left blocked on a
    FIFO (a regression) is killed with it."""

    def __init__(self, repo: Repo, index: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "codevouch", "mcp", "--repo", str(repo.root),
                                      "--index", str(index)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env={**os.environ}, cwd=repo.root,
                                     start_new_session=True)
        self.buffer = b""

    def close(self) -> None:
        _kill_group(self.proc.pid)
        self.proc.wait()


def test_mcp_search_status_and_validate_answer_over_a_tree_with_a_fifo(hostile: Any) -> None:
    repo, index = hostile
    wire = GroupWire(repo, index)
    try:
        wire.initialize()
        requests = {
            2: ("search", json.dumps({"query": "cancel order"})),
            3: ("status", "{}"),
            4: ("validate", json.dumps({"snippets": [{"path": "shop/tracked.py", "start_line": 1}]})),
        }
        for ident, (tool, args) in requests.items():
            wire.send(call(ident, tool, args))
            answer = wire.receive(timeout=TIMEOUT)
            assert answer is not None, f"{tool}: no answer (blocked on the FIFO?)"
            assert answer.get("id") == ident and "result" in answer, answer
            assert not answer["result"].get("isError"), answer
        text = json.dumps(answer["result"])
        assert "not-a-file" in text, text[:2000]
    finally:
        wire.close()


def test_review_and_drift_answer_beside_a_fifo(hostile: Any) -> None:
    """git diff of a tracked path that is now a FIFO fails the whole diff ("unsupported file
    type"): review leaves it out with what it is, and diffs the rest; drift names the FIFO and
    the nested repository for what they are."""
    repo, index = hostile
    code, out, err = cli("review", "--all", "--no-related", "--json", cwd=repo.root, index=index)
    assert code == 0 and b"Traceback" not in err, err[-2000:]
    files = {f["path"]: f for f in json.loads(out)["coverage"]["files"]}
    assert files["shop/tracked.py"]["coverage"] == "left_out"
    assert files["shop/tracked.py"]["reason"] == "a FIFO (named pipe), not a regular file: not diffed"
    assert files["zero.py"]["coverage"] == "left_out" and files["zero.py"]["reason"] == "symlink"
    code, out, err = cli("drift", cwd=repo.root, index=index)
    assert code == 0 and b"Traceback" not in err, err[-2000:]
    assert b"shop/tracked.py (a FIFO (named pipe), not a regular file: not read)" in out, out
    assert b"vendor/nested/ (a nested repository, not searched)" in out, out


def test_mcp_search_answers_beside_a_file_named_with_a_byte_that_is_not_utf8(tmp_path: Path) -> None:
    """Over MCP the same name failed the answer's serialization: the SDK writes UTF-8, and the
    name held a lone surrogate. Every string an MCP tool answers with is written faithfully."""
    repo = Repo(tmp_path / "repo")
    repo.commit_files({"shop/orders.py": ORDERS})
    index = tmp_path / "index"
    Index(repo.root, index, embedder="fake-bow-64").build()
    (repo.root / BAD_NAME).write_text("def refund_everything_now(order):\n    return order.refund()\n")
    wire = GroupWire(repo, index)
    try:
        wire.initialize()
        wire.send(call(2, "search", json.dumps({"query": "refund everything now"})))
        answer = wire.receive(timeout=TIMEOUT)
        assert answer is not None and answer.get("id") == 2 and not answer["result"].get("isError"), answer
        hits = answer["result"]["structuredContent"]["hits"]
        assert hits[0]["path"] == "bad\\xffname.py" and "refund_everything_now" in hits[0]["code"], hits[0]
    finally:
        wire.close()
