"""Reading back what codevouch indexed: every live record of a branch, with its text from git."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from codevouch import Hit
from codevouch.retriever.search import chunk_text_of
from codevouch.store import ChunkRecord, Ledger, collection_base
from codevouch.worktree import gitio
from codevouch.worktree.identity import identify


def branch_records(index_dir: Path, repo: Path, branch: str) -> list[ChunkRecord]:
    """All live chunks of a branch, tagged with the branch's indexed commit as search() does."""
    ident = identify(repo)
    ledger = Ledger(index_dir)
    try:
        state = ledger.branch(collection_base(ident.id, branch))
        assert state is not None, f"{branch} of {repo} is not indexed in {index_dir}"
        records = ledger.branch_chunks(state)
    finally:
        ledger.close()
    records.sort(key=lambda r: (r.path, r.start_line))
    return [replace(r, commit=state.commit, commit_date=state.commit_date, repo=str(ident.root))
            for r in records]


def with_texts(repo: Path, records: list[ChunkRecord]) -> list[tuple[ChunkRecord, str]]:
    blobs = gitio.read_blobs(gitio.repo_root(repo), [r.blob_sha for r in records])
    return [(r, chunk_text_of(blobs.get(r.blob_sha), r)) for r in records]


def snippets(repo: Path, records: list[ChunkRecord]) -> list[dict[str, Any]]:
    """The JSON a search would have returned for each record (Hit.snippet, score 0)."""
    return [Hit(rec, 0.0, text).snippet() for rec, text in with_texts(repo, records)]
