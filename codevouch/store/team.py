"""A team index on a Chroma server: one builder publishes, readers on other machines fetch.

With CODEVOUCH_CHROMA_URL set, the vectors already live on the server. What a search needs
beside them (branch states, file rows, chunk records, the lexical index) lives in the
builder's ledger; after each build the builder publishes that part of it, for one
repository, as an immutable *snapshot* on the server, then flips one `HEAD` record to name
it. A reader whose own index directory does not hold the branch reads `HEAD`, downloads
that snapshot once (cached by generation in its index directory, under `team/`), and
searches it locally: membership and the lexical half (the reader's tantivy copy, written from
the snapshot's lexical rows; Chroma's sparse/BM25 index exists only in distributed Chroma) need
nothing else from the server.

Atomic for readers: vectors are written before the snapshot, the snapshot's parts before
`HEAD`, and one record's upsert is atomic in Chroma, so a reader sees the previous build or
the new one, never a mix. The previous snapshot is kept one publication longer, and in
server mode vectors that a build made garbage are removed at the start of the next build,
not right after it, so a reader still on the previous generation finds its vectors.
Design: docs/TEAM_INDEX.md.
"""
from __future__ import annotations

import base64
import hashlib
import os
import shutil
import tempfile
import zlib
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path

from codevouch.errors import IndexBusy, NotIndexed, StoreUnavailable
from codevouch.store.indexdir import IndexDir
from codevouch.store.ledger import Ledger
from codevouch.store.records import BranchState
from codevouch.store.settings import DEFAULT, StoreSettings
from codevouch.store.vectors import VectorStore

HEAD = "HEAD"
LEASE = "LEASE"   # the builder's lease (codevouch/lease.py), in the same collection
PART_CHARS = 1_000_000   # base64 characters per record: well under the server's request limits


def snapshot_collection(repo_id: str) -> str:
    return f"cv-{hashlib.sha1(repo_id.encode()).hexdigest()[:20]}-ledger"


def publish(ledger: Ledger, vectors: VectorStore, repo_id: str) -> str:
    """Publish the repository's part of the ledger; returns the new generation's name."""
    with tempfile.TemporaryDirectory(prefix="codevouch-snapshot-") as tmp:
        ledger.export_repository(repo_id, Path(tmp))
        data = IndexDir(Path(tmp)).ledger.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    name = snapshot_collection(repo_id)
    previous = vectors.get_documents(name, [HEAD]).get(HEAD)
    if previous is not None and previous[1].get("sha256") == digest:
        return str(previous[1]["generation"])  # nothing changed: readers keep their copy
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    generation = f"{stamp}-{digest[:12]}"
    text = base64.b64encode(zlib.compress(data, 6)).decode("ascii")
    parts = [text[i:i + PART_CHARS] for i in range(0, len(text), PART_CHARS)]
    vectors.put_documents(name, [(f"{generation}:{n}", part, {"generation": generation, "part": n})
                                 for n, part in enumerate(parts)])
    # The switch: one record, so a reader sees the old generation or the new, whole.
    vectors.put_documents(name, [(HEAD, generation, {
        "generation": generation, "parts": len(parts), "sha256": digest, "bytes": len(data),
        "published_at": stamp})])
    keep = {HEAD, LEASE, generation, previous[1].get("generation") if previous else None}
    vectors.delete(name, [i for i in vectors.document_ids(name) if i.split(":")[0] not in keep])
    return generation


def withdraw(vectors: VectorStore, repo_id: str) -> None:
    """Remove the repository's team collection (its snapshots, `HEAD` and the builder's lease):
    `index forget` of its last branch. Readers then find no team index for it (NotIndexed)."""
    vectors.drop(snapshot_collection(repo_id))


def fetch(vectors: VectorStore, repo_id: str, cache: Path) -> Path | None:
    """The directory of the current snapshot's ledger for `repo_id` (downloaded into `cache`
    when new); None when nothing was published for it."""
    name = snapshot_collection(repo_id)
    for _ in range(3):
        head = vectors.get_documents(name, [HEAD]).get(HEAD)
        if head is None:
            return None
        meta = head[1]
        generation = str(meta["generation"])
        home = IndexDir(cache).team_repository(repo_id)
        local = home / generation
        if IndexDir(local).has_ledger():
            return local
        ids = [f"{generation}:{n}" for n in range(int(meta["parts"]))]
        got = vectors.get_documents(name, ids)
        if len(got) != len(ids):
            continue  # two publications passed while we read: start from HEAD again
        data = zlib.decompress(base64.b64decode("".join(got[i][0] for i in ids)))
        if hashlib.sha256(data).hexdigest() != meta["sha256"]:
            continue
        _install(home, local, data)
        return local
    raise IndexBusy(f"the team index for repository {repo_id[:12]} changed three times while being read; retry.")


def _cached_snapshot(cache: Path, repo_id: str) -> Path | None:
    """The snapshot this index directory fetched last for `repo_id`, if it holds one."""
    home = IndexDir(cache).team_repository(repo_id)
    try:
        found = [p for p in home.iterdir() if not p.name.startswith(".incoming-") and IndexDir(p).has_ledger()]
    except OSError:
        return None
    return max(found, key=lambda p: p.name) if found else None


def _install(home: Path, local: Path, data: bytes) -> None:
    """Write the snapshot so that a concurrent reader finds it whole or not at all."""
    home.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".incoming-", dir=home))
    IndexDir(staging).ledger.write_bytes(data)
    try:
        os.replace(staging, local)
    except OSError:  # another reader installed it first
        shutil.rmtree(staging, ignore_errors=True)
    for old in home.iterdir():
        if old != local and not old.name.startswith(".incoming-"):
            shutil.rmtree(old, ignore_errors=True)


def open_for_search(repo_id: str, branch: str, index_dir: Path, clone: str,
                    holds: Callable[[Sequence[str]], bool],
                    settings: StoreSettings = DEFAULT) -> tuple[Ledger, BranchState | None]:
    """The ledger that answers for `branch` in the clone whose root is `clone` (Ledger.find_branch,
    which takes `holds`: whether any of some commits is in that clone): the local one when it holds the branch
    (the builder, or a local build), else, with a Chroma server in the caller's `settings`, the
    team snapshot."""
    try:
        ledger: Ledger | None = Ledger(index_dir, readonly=True)
    except NotIndexed:
        if not settings.chroma_url:
            raise
        ledger = None
    if ledger is not None:
        state = ledger.find_branch(repo_id, branch, clone, holds)
        if state is not None or not settings.chroma_url:
            return ledger, state
        ledger.close()
    return open_snapshot(repo_id, branch, index_dir, clone, holds, settings)


def open_snapshot(repo_id: str, branch: str, index_dir: Path, clone: str, holds: Callable[[Sequence[str]], bool],
                  settings: StoreSettings) -> tuple[Ledger, BranchState | None]:
    """The team snapshot's ledger for `repo_id` (its current `HEAD`, fetched into `index_dir` when
    new) and the entry that answers for `branch` in it (open_for_search's team half)."""
    try:
        with VectorStore(index_dir, readonly=True, settings=settings) as vectors:
            snapshot = fetch(vectors, repo_id, index_dir)
    except StoreUnavailable:
        # A dead or stalled server: the snapshot fetched last still answers what needs no vector
        # (`--mode lexical`); the verdicts check every hit against the working tree anyway.
        snapshot = _cached_snapshot(index_dir, repo_id)
        if snapshot is None:
            raise
    if snapshot is None:
        raise NotIndexed(
            f"nothing is indexed for this repository in {index_dir}, and the Chroma server {settings.chroma_url} has "
            "no team index for it; the builder publishes one with `codevouch index build` (with "
            "CODEVOUCH_CHROMA_URL set), or build locally.")
    ledger = Ledger(snapshot, readonly=True)
    return ledger, ledger.find_branch(repo_id, branch, clone, holds)
