"""The same index code against a Chroma server (`chroma run`, on loopback), chosen by configuration."""
from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from codevouch.embedding import FakeEmbedder
from codevouch.indexer.build import build_index
from codevouch.retriever.search import search
from tests.gitrepo import Repo


@pytest.fixture
def chroma_server(tmp_path: Path) -> Iterator[str]:
    exe = shutil.which("chroma") or str(Path(sys.executable).parent / "chroma")
    if not Path(exe).exists():
        pytest.skip("the chroma CLI is not installed")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([exe, "run", "--path", str(tmp_path / "server"), "--host", "127.0.0.1",
                             "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):  # bounded: at most ~20 s for the server to answer
            try:
                urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        else:
            pytest.fail("chroma server did not start")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_build_and_search_on_a_chroma_server(chroma_server: str, repo: Repo, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEVOUCH_CHROMA_URL", chroma_server)
    repo.commit(**{"a.py": "def alpha_search_target():\n    return 1\n", "b.py": "def beta():\n    return 2\n"})
    index_dir = tmp_path / "index"
    [s] = build_index(repo.root, index_dir, FakeEmbedder())
    assert s.chunks == 2
    assert not (index_dir / "chroma").exists()  # the vectors went to the server
    hits = search(repo.root, "alpha_search_target", index_dir, k=1, embedder=FakeEmbedder(), mode="dense")
    assert hits[0].record.path == "a.py"
