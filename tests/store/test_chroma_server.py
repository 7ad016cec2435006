"""The same index code against a Chroma server (`chroma run`, on loopback), chosen by configuration."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import chromadb
import pytest

from codevouch import Index
from codevouch.embedding import FakeEmbedder
from codevouch.environment import Environment
from codevouch.errors import NotIndexed
from codevouch.indexer.build import build_index
from codevouch.request import SearchRequest
from codevouch.retriever.search import search
from codevouch.retriever.searchrun import Caller
from codevouch.store.settings import StoreSettings
from tests import storehelp
from tests.clihelp import cv
from tests.gitrepo import Repo

# The store's settings a process caller has (Call.of_process()): its own variables, read at each
# use, so the monkeypatched CODEVOUCH_CHROMA_URL and CODEVOUCH_LEASE_TTL below are what it reads.
PROCESS = StoreSettings(Environment(os.environ))
SEARCH = Caller(store=PROCESS)


@pytest.fixture
def chroma_server(tmp_path: Path) -> Iterator[str]:
    with storehelp.chroma_server(tmp_path / "server") as (url, _):
        yield url


def test_build_and_search_on_a_chroma_server(chroma_server: str, repo: Repo, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEVOUCH_CHROMA_URL", chroma_server)
    repo.commit(**{"a.py": "def alpha_search_target():\n    return 1\n", "b.py": "def beta():\n    return 2\n"})
    index_dir = tmp_path / "index"
    [s] = build_index(repo.root, index_dir, FakeEmbedder(), store=PROCESS)
    assert s.chunks == 2
    assert not (index_dir / "chroma").exists()  # the vectors went to the server
    hits = search(repo.root, SearchRequest("alpha_search_target", k=1, mode="dense"), index_dir, embedder=FakeEmbedder(),
                  caller=SEARCH)
    assert hits[0].record.path == "a.py"


def test_team_index_builder_and_reader_on_other_machines(chroma_server: str, repo: Repo, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A builder with index dir A publishes; a second clone elsewhere with an empty index dir
    B searches through the server alone, and never sees half a build."""
    monkeypatch.setenv("CODEVOUCH_CHROMA_URL", chroma_server)
    repo.commit(**{"shop/cancel.py": "def cancel_order(order):\n    return order.cancel()\n",
                   "shop/refund.py": "def refund_order(order):\n    return order.refund()\n"})
    dir_a, dir_b = tmp_path / "A", tmp_path / "B"
    build_index(repo.root, dir_a, FakeEmbedder(), store=PROCESS)
    clone = tmp_path / "laptop" / "clone"
    subprocess.run(["git", "clone", "-q", str(repo.root), str(clone)], check=True)
    dir_b.mkdir()
    for mode in ("dense", "lexical", "hybrid"):
        hits = search(clone, SearchRequest("cancel_order", k=1, mode=mode), dir_b, embedder=FakeEmbedder(), caller=SEARCH)
        assert hits[0].record.path == "shop/cancel.py" and "order.cancel()" in hits[0].text, mode
    assert not (dir_b / "state.sqlite").exists()  # B holds only the downloaded snapshot

    # A second build adds a file; B searches while A is between its phases.
    repo.commit(**{"shop/ship.py": "def ship_order(order):\n    return order.ship()\n"})
    seen: dict[str, list[str]] = {}

    def reader(phase: str) -> None:
        hits = search(clone, SearchRequest("ship_order", k=5, mode="lexical"), dir_b, embedder=FakeEmbedder(), caller=SEARCH)
        seen[phase] = [h.record.path for h in hits]

    build_index(repo.root, dir_a, FakeEmbedder(), store=PROCESS, on_phase=reader)
    # Vectors written, lexical copy staged, ledger committed on A: not published, so B still
    # sees the last build.
    assert set(seen) == {"planned", "vectors-written", "lexical-staged", "committed"}
    assert all(paths and "shop/ship.py" not in paths for paths in seen.values()), seen
    subprocess.run(["git", "-C", str(clone), "pull", "-q"], check=True)
    assert search(clone, SearchRequest("ship_order", k=1, mode="lexical"), dir_b,
                  embedder=FakeEmbedder(), caller=SEARCH)[0].record.path == "shop/ship.py"
    hits = search(clone, SearchRequest("ship_order", k=3, mode="dense"), dir_b, embedder=FakeEmbedder(), caller=SEARCH)
    ship = next(h for h in hits if h.record.path == "shop/ship.py")
    assert "order.ship()" in ship.text and ship.record.repo == str(clone.resolve())
    # One generation cached in B, the older one removed.
    [cached] = [p.parent for p in (dir_b / "team").rglob("state.sqlite")]
    # A build with nothing new publishes nothing new: readers keep their copy.
    [s] = build_index(repo.root, dir_a, FakeEmbedder(), store=PROCESS)
    assert s.noop
    search(clone, SearchRequest("ship_order", k=1, mode="lexical"), dir_b, embedder=FakeEmbedder(), caller=SEARCH)
    assert [p.parent for p in (dir_b / "team").rglob("state.sqlite")] == [cached]


def test_reader_with_nothing_published_is_told_what_to_do(chroma_server: str, repo: Repo, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEVOUCH_CHROMA_URL", chroma_server)
    repo.commit(**{"a.py": "A = 1\n"})
    with pytest.raises(NotIndexed, match="no team index"):
        search(repo.root, SearchRequest("a"), tmp_path / "empty", embedder=FakeEmbedder(), caller=SEARCH)


def test_one_builder_per_repository_per_server(chroma_server: str, repo: Repo, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A second index directory cannot build the repository into the server (it would remove
    the first one's vectors); the holder can; a lapsed lease is taken over, leftovers removed."""
    from codevouch.errors import BuilderConflict
    from codevouch.store import Ledger, VectorStore, lease, space_name
    from codevouch.worktree.identity import identify

    monkeypatch.setenv("CODEVOUCH_CHROMA_URL", chroma_server)
    repo.commit_files({"shop/cancel.py": "def cancel_order(order):\n    return order.cancel()\n"})
    repo.git("checkout", "-q", "-b", "topic")
    repo.commit(**{"shop/ship.py": "def ship_order(order):\n    return order.ship()\n"})
    repo.git("checkout", "-q", "main")
    dir_a, dir_b = tmp_path / "a", tmp_path / "b"
    build_index(repo.root, dir_a, FakeEmbedder(), store=PROCESS, all_branches=True)
    with pytest.raises(BuilderConflict, match=f"another index directory \\({dir_a.resolve()}"):
        build_index(repo.root, dir_b, FakeEmbedder(), store=PROCESS)
    proc = cv("index", "build", "--repo", str(repo.root), "--index", str(dir_b), "--embedder", "fake-bow-64",
              env={"CODEVOUCH_CHROMA_URL": chroma_server})
    assert proc.returncode == 4 and "one builder per repository per server" in proc.stderr, proc.stderr
    # The holder builds on (its lease is renewed), and its readers see the new build.
    repo.commit(**{"shop/refund.py": "def refund_order(order):\n    return order.refund()\n"})
    build_index(repo.root, dir_a, FakeEmbedder(), store=PROCESS)
    repo_id = identify(repo.root).id
    with VectorStore(dir_a, settings=PROCESS) as vectors:
        held = lease.holder(vectors, repo_id)
    assert held is not None and held.index_dir == str(dir_a.resolve()) and held.expires_at > held.renewed_at
    # A lease renewed with a zero time to live has lapsed by the next build: B takes over, and
    # the vectors only A's ledger knew (topic's ship.py) leave the shared space.
    monkeypatch.setenv("CODEVOUCH_LEASE_TTL", "0")
    build_index(repo.root, dir_a, FakeEmbedder(), store=PROCESS)
    monkeypatch.delenv("CODEVOUCH_LEASE_TTL")
    [summary] = build_index(repo.root, dir_b, FakeEmbedder(), store=PROCESS)
    space = space_name(repo_id, FakeEmbedder.name)
    ledger = Ledger(dir_b)
    try:
        texts = ledger.space_size(space)
    finally:
        ledger.close()
    with VectorStore(dir_b, settings=PROCESS) as vectors:
        assert vectors.count(space) == texts == summary.chunks
    with pytest.raises(BuilderConflict):
        build_index(repo.root, dir_a, FakeEmbedder(), store=PROCESS)
    hits = search(repo.root, SearchRequest("refund_order", k=1, mode="dense"), tmp_path / "reader",
                  embedder=FakeEmbedder(), caller=SEARCH)
    assert hits[0].record.path == "shop/refund.py"


def test_index_status_on_a_team_reader_lists_the_snapshot(chroma_server: str, repo: Repo, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEVOUCH_CHROMA_URL", chroma_server)
    repo.commit_files({"shop/cancel.py": "def cancel_order(order):\n    return order.cancel()\n"})
    repo.git("branch", "release")
    build_index(repo.root, tmp_path / "builder", FakeEmbedder(), store=PROCESS, all_branches=True)
    clone = tmp_path / "laptop" / "clone"
    subprocess.run(["git", "clone", "-q", str(repo.root), str(clone)], check=True)
    reader = tmp_path / "reader"
    env = {"CODEVOUCH_CHROMA_URL": chroma_server}
    for args in (["--repo", str(clone)], []):
        proc = cv("index", "status", "--index", str(reader), "--json", *args, env=env, cwd=clone)
        assert proc.returncode == 0, proc.stderr
        rows = json.loads(proc.stdout)["branches"]
        assert sorted(r["branch"] for r in rows) == ["main", "release"], args
        assert all(r["source"] == "team snapshot" and r["server"] == chroma_server
                   and r["repo"] == str(clone.resolve()) for r in rows), rows
        # Counted in this clone, which has a local main but no local release branch.
        assert [r["commits_behind"] for r in sorted(rows, key=lambda r: r["branch"])] == [0, None]
    text = cv("index", "status", "--index", str(reader), env=env, cwd=clone).stdout
    assert "from the team snapshot" in text and "release" in text
    # Without a server, the same reader has nothing indexed.
    proc = cv("index", "status", "--index", str(reader), "--json", env={"CODEVOUCH_CHROMA_URL": None}, cwd=clone)
    assert json.loads(proc.stdout)["branches"] == []


def test_a_team_readers_overlay_is_local_and_writes_nothing_to_the_server(
        chroma_server: str, repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 18: a reader's uncommitted edit is searched live, and the server (its collections and
    what they hold) and the downloaded snapshot are as they were."""
    monkeypatch.setenv("CODEVOUCH_CHROMA_URL", chroma_server)
    repo.commit(**{"shop/cancel.py": "def cancel_order(order):\n    return order.cancel()\n"})
    build_index(repo.root, tmp_path / "A", FakeEmbedder(), store=PROCESS)
    clone, dir_b = tmp_path / "laptop" / "clone", tmp_path / "B"
    subprocess.run(["git", "clone", "-q", str(repo.root), str(clone)], check=True)
    dir_b.mkdir()
    reader = Index(clone, dir_b, embedder=FakeEmbedder())
    assert reader.search("cancel_order", k=1, validate=False)[0].path == "shop/cancel.py"
    url = urlparse(chroma_server)
    server = chromadb.HttpClient(host=url.hostname or "127.0.0.1", port=url.port or 8000)

    def server_state() -> dict[str, int]:
        return {c.name: c.count() for c in server.list_collections()}

    def snapshot() -> dict[str, str]:
        return {str(p.relative_to(dir_b)): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in (dir_b / "team").rglob("*") if p.is_file()}

    before, files_before = server_state(), snapshot()
    assert before and files_before
    (clone / "shop" / "coupon.py").write_text("def apply_discount_coupon(order, code):\n    return order.discount(code)\n")
    hits = reader.search("apply_discount_coupon", k=3)
    assert hits[0].path == "shop/coupon.py" and hits[0].verdict == "usable"
    assert hits.overlay is not None and hits.overlay.summary()["files_searched"] == 1
    assert "working tree" in hits[0].citation
    assert server_state() == before and snapshot() == files_before


def test_a_reader_keeps_its_collection_handles_and_finds_collections_made_again(
        chroma_server: str, repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from codevouch.indexer.forget import forget
    from codevouch.store.vectors import VectorStore

    monkeypatch.setenv("CODEVOUCH_CHROMA_URL", chroma_server)
    repo.commit(**{"shop/cancel.py": "def cancel_order(order):\n    return order.cancel()\n"})
    builder, reader = tmp_path / "A", tmp_path / "B"
    build_index(repo.root, builder, FakeEmbedder(), store=PROCESS)
    clone = tmp_path / "laptop" / "clone"
    subprocess.run(["git", "clone", "-q", str(repo.root), str(clone)], check=True)
    reader.mkdir()

    def top() -> str:
        hits = search(clone, SearchRequest("cancel_order", k=1, mode="dense"), reader, embedder=FakeEmbedder(),
                      caller=SEARCH)
        return hits[0].record.path
    assert top() == "shop/cancel.py"
    client = VectorStore(reader, readonly=True, settings=PROCESS)._client     # the process's one for this server
    looked: list[str] = []
    get_collection = client.get_collection
    monkeypatch.setattr(client, "get_collection", lambda name, **kw: looked.append(name) or get_collection(name, **kw))
    assert top() == "shop/cancel.py" and looked == []      # the snapshot's HEAD and the space: handles kept
    # The repository forgotten and built again: its collections dropped and made anew under the same
    # names, so the kept handles name collections that are gone.
    forget(builder, repo.root, str(repo.root), store=PROCESS)
    build_index(repo.root, builder, FakeEmbedder(), store=PROCESS)
    assert top() == "shop/cancel.py"
    assert looked                                           # looked up again, once gone


def test_a_team_reader_bounds_repositories_by_their_snapshots_with_the_answer_of_searching_each(
        chroma_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import codevouch.across as across
    from codevouch import Indexes
    from tests.test_across import TOPICS

    monkeypatch.setenv("CODEVOUCH_CHROMA_URL", chroma_server)
    builder, reader = tmp_path / "builder", tmp_path / "reader"
    clones = []
    for name, files in TOPICS.items():
        repo = Repo.create(tmp_path / "built" / name)
        repo.commit_files(files)
        build_index(repo.root, builder, FakeEmbedder(), store=PROCESS)
        clone = tmp_path / "laptop" / name
        subprocess.run(["git", "clone", "-q", str(repo.root), str(clone)], check=True)
        clones.append(clone.resolve())
    reader.mkdir()                     # the reader's own index directory holds no ledger at all

    def answer(bound_from: int, query: str) -> tuple[list[tuple[Path, str, str]], int]:
        monkeypatch.setattr(across, "BOUND_FROM", bound_from)
        found = Indexes(clones, reader, embedder=FakeEmbedder.name, record=False, background=False).search(query, k=2)
        return ([(f.repository.path, f.hit.record.path, f.hit.verdict) for f in found],
                sum(1 for _, hits in found.answers if hits))
    answer(1000, "warm up")           # the first search of a snapshot writes its lexical copy here
    for query in ("overdue fee for days past due", "find a book by its title", "settle account",
                  "remove a member by name"):
        bounded, searched = answer(1, query)
        every, all_searched = answer(1000, query)
        assert bounded == every, query
        assert searched < all_searched == len(clones), query       # some left out, by their snapshots' bounds
    assert answer(1, "settle account")[0][0][1] == "settle.py"
