"""One builder per repository per Chroma server: a lease record beside the team snapshots.

Two builders of one repository on one server, with different index directories, would each
remove vectors that its own ledger no longer needs but the other's still does (a space's
vectors are keyed by text and shared by whoever writes them), and would publish over each
other's snapshot. So a build in server mode first claims the repository: a `LEASE` record in
its team collection (codevouch/team.py) names the builder (a random id kept in its ledger, so
the same index directory is the same builder after a crash or a reboot), its host and index
directory, and when the claim lapses. A build renews it at its start, before each branch and
after publishing; a build from any other index directory is refused (BuilderConflict, exit
code 4) until the lease lapses, $CODEVOUCH_LEASE_TTL seconds (default 36 h: a nightly builder
that misses one night keeps it) after the holder's last renewal. The build that takes over a
lapsed lease removes the vectors its own ledger does not know, the previous builder's.

Lease times come from the server's clock (its heartbeat gives its time), never from the
builder's alone: a builder whose clock was 3 days ahead took over a lease renewed 10 minutes
earlier. Chroma has no compare-and-set: the claim is written, then read back, and only the builder
whose write is the one read back goes on. Two builders whose first reads both come before
either write can both pass; that window is one round trip at the start of a build.
"""
from __future__ import annotations

import socket
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from codevouch import environment
from codevouch.errors import BuilderConflict
from codevouch.store.team import LEASE, snapshot_collection
from codevouch.store.vectors import VectorStore

DEFAULT_TTL_S: float = environment.LEASE_TTL.default


@dataclass(frozen=True)
class Lease:
    owner: str         # the builder: a random id kept in its index directory's ledger
    host: str
    index_dir: str
    renewed_at: float  # seconds since the epoch
    expires_at: float


@dataclass(frozen=True)
class Claim:
    lease: Lease
    took_over: bool    # another builder held the repository before (its lease had lapsed)


def holder(vectors: VectorStore, repo_id: str) -> Lease | None:
    """The current lease of the repository on the server, lapsed or not; None if never claimed."""
    found = vectors.get_documents(snapshot_collection(repo_id), [LEASE]).get(LEASE)
    if found is None:
        return None
    meta = found[1]
    try:
        return Lease(str(meta["owner"]), str(meta["host"]), str(meta["index_dir"]), float(meta["renewed_at"]),
                     float(meta["expires_at"]))
    except (KeyError, TypeError, ValueError):
        return None  # a damaged record guards nothing


def claim(vectors: VectorStore, repo_id: str, owner: str, index_dir: Path) -> Claim:
    """Take or renew the repository's lease for `owner`; BuilderConflict while another holds it.
    Times are the server's (its heartbeat), so a builder whose clock is days ahead cannot take
    over a lease renewed minutes ago, nor make its own last for days too long. The lease lasts
    the store's `lease_ttl` (the caller's CODEVOUCH_LEASE_TTL; inf: never lapses)."""
    server_now = vectors.server_time()
    now = time.time() if server_now is None else server_now
    before = holder(vectors, repo_id)
    if before is not None and before.owner != owner and before.expires_at > now:
        raise BuilderConflict(_refusal(before, vectors.settings.chroma_url))
    mine = Lease(owner, socket.gethostname(), str(index_dir.resolve()), now, now + vectors.settings.lease_ttl)
    vectors.put_documents(snapshot_collection(repo_id), [(LEASE, owner, asdict(mine))])
    after = holder(vectors, repo_id)
    if after is None or after.owner != owner:
        raise BuilderConflict(_refusal(after or mine, vectors.settings.chroma_url))
    return Claim(mine, before is not None and before.owner != owner)


def _refusal(lease: Lease, server: str | None) -> str:
    return (f"the team index of this repository on {server} is built from another index directory "
            f"({lease.index_dir} on {lease.host}, last build {_when(lease.renewed_at)}): one builder per "
            "repository per server, or the two would remove each other's vectors and publish over each "
            "other's snapshot. Build there (readers only search), or unset CODEVOUCH_CHROMA_URL to build a "
            f"local index here. The lease lapses at {_when(lease.expires_at)} ($CODEVOUCH_LEASE_TTL seconds "
            "after its holder's last build, default 36 h); a build here then takes the repository over.")


def _when(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
