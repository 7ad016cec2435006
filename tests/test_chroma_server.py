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
from codevouch.errors import NotIndexed
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


def test_team_index_builder_and_reader_on_other_machines(chroma_server: str, repo: Repo, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A builder with index dir A publishes; a second clone elsewhere with an empty index dir
    B searches through the server alone, and never sees half a build."""
    monkeypatch.setenv("CODEVOUCH_CHROMA_URL", chroma_server)
    repo.commit(**{"shop/cancel.py": "def cancel_order(order):\n    return order.cancel()\n",
                   "shop/refund.py": "def refund_order(order):\n    return order.refund()\n"})
    dir_a, dir_b = tmp_path / "A", tmp_path / "B"
    build_index(repo.root, dir_a, FakeEmbedder())
    clone = tmp_path / "laptop" / "clone"
    subprocess.run(["git", "clone", "-q", str(repo.root), str(clone)], check=True)
    dir_b.mkdir()
    for mode in ("dense", "lexical", "hybrid"):
        hits = search(clone, "cancel_order", dir_b, k=1, embedder=FakeEmbedder(), mode=mode)
        assert hits[0].record.path == "shop/cancel.py" and "order.cancel()" in hits[0].text, mode
    assert not (dir_b / "state.sqlite").exists()  # B holds only the downloaded snapshot

    # A second build adds a file; B searches while A is between its phases.
    repo.commit(**{"shop/ship.py": "def ship_order(order):\n    return order.ship()\n"})
    seen: dict[str, list[str]] = {}

    def reader(phase: str) -> None:
        hits = search(clone, "ship_order", dir_b, k=5, embedder=FakeEmbedder(), mode="lexical")
        seen[phase] = [h.record.path for h in hits]

    build_index(repo.root, dir_a, FakeEmbedder(), on_phase=reader)
    # Vectors written, lexical copy staged, ledger committed on A: not published, so B still
    # sees the last build.
    assert set(seen) == {"planned", "vectors-written", "lexical-staged", "committed"}
    assert all(paths and "shop/ship.py" not in paths for paths in seen.values()), seen
    subprocess.run(["git", "-C", str(clone), "pull", "-q"], check=True)
    assert search(clone, "ship_order", dir_b, k=1, embedder=FakeEmbedder(),
                  mode="lexical")[0].record.path == "shop/ship.py"
    hits = search(clone, "ship_order", dir_b, k=3, embedder=FakeEmbedder(), mode="dense")
    ship = next(h for h in hits if h.record.path == "shop/ship.py")
    assert "order.ship()" in ship.text and ship.record.repo == str(clone.resolve())
    # One generation cached in B, the older one removed.
    [cached] = [p.parent for p in (dir_b / "team").rglob("state.sqlite")]
    # A build with nothing new publishes nothing new: readers keep their copy.
    [s] = build_index(repo.root, dir_a, FakeEmbedder())
    assert s.noop
    search(clone, "ship_order", dir_b, k=1, embedder=FakeEmbedder(), mode="lexical")
    assert [p.parent for p in (dir_b / "team").rglob("state.sqlite")] == [cached]


def test_reader_with_nothing_published_is_told_what_to_do(chroma_server: str, repo: Repo, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEVOUCH_CHROMA_URL", chroma_server)
    repo.commit(**{"a.py": "A = 1\n"})
    with pytest.raises(NotIndexed, match="no team index"):
        search(repo.root, "a", tmp_path / "empty", embedder=FakeEmbedder())
