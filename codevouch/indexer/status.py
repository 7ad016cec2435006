"""`codevouch index status`: what the index holds per repository and branch, and how far behind it is."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from codevouch import gitio
from codevouch.errors import GitError, NotIndexed
from codevouch.store import Ledger


def index_status(index_dir: Path, repo: Path | None = None) -> list[dict[str, Any]]:
    only = str(gitio.repo_root(repo)) if repo is not None else None
    try:
        ledger = Ledger(index_dir, readonly=True)
    except NotIndexed:
        return []
    try:
        rows = []
        for state in ledger.branches():
            if only is not None and state.repo != only:
                continue
            head, behind = head_and_behind(Path(state.repo), state.branch, state.commit)
            files = ledger.files(state.coll)
            rows.append({
                "repo": state.repo, "branch": state.branch, "commit": state.commit,
                "commit_date": state.commit_date, "head": head, "commits_behind": behind,
                "built_at": state.built_at, "embedder": state.embedder,
                "files_by_kind": dict(Counter(f.kind for f in files.values() if f.status != "deleted")),
                "files_by_status": dict(Counter(f.status for f in files.values())),
                "chunks_by_kind": ledger.chunk_counts(f"{state.coll}-live"),
                "history_chunks": sum(ledger.chunk_counts(f"{state.coll}-hist").values()),
                "rules": json.loads(state.rules_json),
            })
        return rows
    finally:
        ledger.close()


def head_and_behind(repo: Path, branch: str, indexed: str) -> tuple[str | None, int | None]:
    """The branch's current head and how many commits the index lacks (None if unknown)."""
    try:
        head = gitio.branch_commit(repo, branch)
        out = gitio.run(repo, "rev-list", "--count", f"{indexed}..{head}", ok_codes=(0, 128))
        return head, int(out.decode().strip()) if out.strip() else None
    except GitError:
        return None, None
