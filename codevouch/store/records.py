"""The ledger's records as the rest of codevouch sees them, and what one build changes."""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class ChunkRecord:
    """One indexed chunk: the six provenance fields plus kind, language and status."""
    id: str
    repo: str
    path: str
    branch: str
    commit: str
    commit_date: str
    symbol: str
    start_line: int
    end_line: int
    indexed_at: str
    blob_sha: str
    text_hash: str
    kind: str
    language: str
    status: str  # live | deleted
    # index: from the branch's indexed commit; the working-tree overlay (retriever/overlay.py):
    # uncommitted (cut from the working tree, commit "") or committed (at HEAD, after the index)
    origin: str = "index"
    # Its code only declares (an interface, a type alias, an overload signature: the chunker's
    # Chunk.declaration): a sentence ranks it after bodies (retriever/search.py). False for a
    # chunk indexed before the chunker said so (migration m008).
    declaration: bool = False

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> ChunkRecord:
        return cls(**json.loads(text))


@dataclass(frozen=True)
class FileRow:
    path: str
    blob_sha: str
    kind: str
    rule: str | None
    language: str
    status: str          # live | deleted | skipped | excluded
    reason: str | None   # why skipped/excluded
    chunks: int
    last_commit: str | None = None       # deleted files: the last commit of the branch that had it
    last_commit_date: str | None = None


@dataclass(frozen=True)
class BranchState:
    coll: str
    repo: str
    branch: str
    commit: str
    commit_date: str
    built_at: str
    embedder: str
    rules_json: str
    repo_id: str | None = None   # root commit; None for a branch built before shared vectors
    remote: str | None = None    # a label for people
    space: str | None = None     # the shared vector collection; None: built by an older release
    # Commits sampled 1, 2, 4, ... 1024 first-parent steps before `commit`, never the root commit
    # (worktree/git/refs.first_parent_samples): a clone that holds one of them, or `commit`, may be
    # answered from this entry (Ledger.find_branch). Empty: a short history, or an older release's.
    ancestors: tuple[str, ...] = ()


@dataclass(frozen=True)
class Outdated:
    """A branch as an older release laid it out (listed by migration m005): a search of it says to
    build it once, and that build moves it (it drops the branch's row when it had another key,
    and the Chroma collections only it used)."""
    coll: str                    # its row in `branches`
    layout: str                  # per-branch (vectors copied per branch) | per-chunk (a vector per chunk id)
    collections: tuple[str, ...]  # Chroma collections only this branch uses


@dataclass(frozen=True)
class NewChunk:
    """A chunk new to its space, as the build made it: its position in the file and its record."""
    ordinal: int
    record: ChunkRecord


@dataclass(frozen=True)
class BuildChange:
    """What one build of a branch makes visible, all at once (see Ledger.commit)."""
    state: BranchState
    chunks: Sequence[NewChunk] = ()                # chunks new to the shared space (their vectors written)
    lexical: Sequence[tuple[str, str]] = ()        # (lexical key, terms) of those chunks
    files: Sequence[FileRow] = ()                  # file rows written as given (membership)
    deleted_paths: Sequence[str] = ()              # files gone from the branch, kept as history
    gone_at: tuple[str, str] | None = None         # (commit, date) that last had the deleted files
    dropped_paths: Sequence[str] = ()              # files forgotten (they had no chunks)
    outdated: Outdated | None = None               # the same branch as an older release laid it out


@dataclass(frozen=True)
class Committed:
    old_collections: list[str]   # collections no branch uses any more (older releases' keying), to drop now
    removed_ids: list[str]       # lexical keys of the space that no chunk has any more
    stamp: str                   # the space's and the branch's new lexical stamp (lexindex.py)
