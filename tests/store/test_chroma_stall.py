"""A stalled Chroma server (issue 19, part 4): a real `chroma run` process paused by SIGSTOP.

Every call to the server gives up after CODEVOUCH_CHROMA_TIMEOUT seconds with a clear error
(exit 6); `--mode lexical` answers from the ledger (the builder's, or a reader's last snapshot)
without the server. Before, search and index status waited for more than 150 s."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import clihelp
from tests.clihelp import FAKE
from tests.gitrepo import Repo
from tests.storehelp import chroma_server

TIMEOUT = "2"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    with chroma_server(tmp_path / "server", not_started=pytest.skip) as running:
        yield running


def cv(*args: str, url: str, index: Path, cwd: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    out = clihelp.cv(*args, cwd=cwd, index=index, env={"CODEVOUCH_CHROMA_URL": url, "CODEVOUCH_CHROMA_TIMEOUT": TIMEOUT})
    return out, time.monotonic() - started


def test_a_paused_server_times_out_and_lexical_still_answers(server: tuple[str, subprocess.Popen[bytes]],
                                                              tmp_path: Path) -> None:
    url, proc = server
    repo = Repo(tmp_path / "repo")
    repo.commit_files({"shop/cancel.py": "def cancel_order(order):\n    return order.cancel()\n"})
    builder, reader = tmp_path / "builder", tmp_path / "reader"
    out, _ = cv("index", "build", "--repo", str(repo.root), *FAKE, url=url, index=builder, cwd=repo.root)
    assert out.returncode == 0, out.stderr
    out, _ = cv("search", "cancel_order", "--mode", "lexical", url=url, index=reader, cwd=repo.root)
    assert out.returncode == 0 and "shop/cancel.py" in out.stdout, out.stderr   # the reader's snapshot

    os.kill(proc.pid, signal.SIGSTOP)
    for index in (builder, reader):
        out, took = cv("search", "cancel_order", url=url, index=index, cwd=repo.root)
        assert out.returncode == 6, (index.name, out.returncode, out.stderr, out.stdout[:300])
        assert f"did not answer within {TIMEOUT} s (CODEVOUCH_CHROMA_TIMEOUT)" in out.stderr
        assert "--mode lexical" in out.stderr and "Traceback" not in out.stderr
        assert took < 60, took
        out, took = cv("search", "cancel_order", "--mode", "lexical", "--json", url=url, index=index,
                       cwd=repo.root)
        assert out.returncode == 0, (index.name, out.stderr)
        assert json.loads(out.stdout)[0]["path"] == "shop/cancel.py"
        assert took < 60, took
    out, took = cv("index", "status", url=url, index=builder, cwd=repo.root)
    assert out.returncode in (0, 6) and "Traceback" not in out.stderr and took < 60, (out.stderr, took)


def test_a_bad_timeout_names_the_variable(server: tuple[str, subprocess.Popen[bytes]], tmp_path: Path) -> None:
    url, _ = server
    repo = Repo(tmp_path / "repo")
    repo.commit_files({"a.py": "def a():\n    return 1\n"})
    out = clihelp.cv("index", "build", "--repo", str(repo.root), *FAKE, cwd=repo.root, index=tmp_path / "i",
                     env={"CODEVOUCH_CHROMA_URL": url, "CODEVOUCH_CHROMA_TIMEOUT": "soon"})
    assert out.returncode == 2 and "CODEVOUCH_CHROMA_TIMEOUT='soon'" in out.stderr, out.stderr


@pytest.mark.process
def test_lease_times_come_from_the_server_not_a_clock_ahead(server: tuple[str, subprocess.Popen[bytes]],
                                                             tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Builder B's clock is 3 days ahead (its Python's time.time, shifted by a sitecustomize): it
    cannot take over A's lease renewed a moment ago, and its own lease times are the server's."""
    url, _ = server
    repo = Repo(tmp_path / "repo")
    repo.commit_files({"shop/cancel.py": "def cancel_order(order):\n    return order.cancel()\n"})
    out, _ = cv("index", "build", "--repo", str(repo.root), *FAKE, url=url, index=tmp_path / "a", cwd=repo.root)
    assert out.returncode == 0, out.stderr
    ahead = tmp_path / "ahead"
    ahead.mkdir()
    (ahead / "sitecustomize.py").write_text(
        "import time\n_real = time.time\ntime.time = lambda: _real() + 3 * 86400\n")
    env = {**os.environ, "CODEVOUCH_CHROMA_URL": url, "CODEVOUCH_INDEX": str(tmp_path / "b"),
           "CODEVOUCH_CHROMA_TIMEOUT": "10",
           "PYTHONPATH": os.pathsep.join([str(ahead), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-m", "codevouch", "index", "build", "--repo", str(repo.root), *FAKE],
                          env=env, cwd=repo.root, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 4 and "one builder per repository per server" in proc.stderr, proc.stderr
    # A renews with the server's time: its lease lapses 36 h after the server's now, whatever A's clock.
    from codevouch.environment import Environment
    from codevouch.store import StoreSettings, VectorStore, lease
    from codevouch.worktree.identity import identify

    with VectorStore(tmp_path / "a", settings=StoreSettings(Environment({"CODEVOUCH_CHROMA_URL": url}))) as vectors:
        held = lease.holder(vectors, identify(repo.root).id)
        now = vectors.server_time()
    assert held is not None and now is not None and abs(held.renewed_at - now) < 600
