"""`codevouch index build`: plan, then apply, for each requested branch of a repository.

Order of writes (see store.py for why): embedding cache -> pending ids -> Chroma vectors ->
one ledger transaction that makes the new state visible -> removal of obsolete vectors.
"""
from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

from codevouch import gitio, lexical
from codevouch.embedding import CHUNK_TOKEN_BUDGET, Embedder, token_counter
from codevouch.indexer.chunker import chunk_text
from codevouch.indexer.filetext import decode, skip_reason
from codevouch.indexer.plan import RefreshPlan, plan_refresh
from codevouch.rules import Rules, classify, load_rules_text
from codevouch.store import (ChunkRecord, FileRow, Ledger, VectorStore, chunk_id,
                             collection_base, drop_lexical, put_lexical, writer_lock)

# (done, total, what) — the CLI draws a progress bar from it.
Progress = Callable[[int, int, str], None]
# Called between the phases of a build; tests raise from it to simulate a kill.
PhaseHook = Callable[[str], None]
EMBED_BATCH = 64
VECTOR_BATCH = 2000


@dataclass(frozen=True)
class BranchSummary:
    repo: str
    branch: str
    commit: str
    commit_date: str
    files: int              # files in the branch's tree
    chunks: int             # live chunks after the build
    embedded: int           # chunk texts embedded by this build
    reused: int             # chunks whose vector came from the cache
    deleted: int            # files that left the branch in this build (kept as history)
    indexed_files: int      # files read and chunked by this build
    skipped: dict[str, int] = field(default_factory=dict)       # reason -> files
    excluded: dict[str, int] = field(default_factory=dict)      # kind (rule) -> files
    skipped_files: list[dict[str, str]] = field(default_factory=list)
    noop: bool = False
    seconds: float = 0.0


@dataclass(frozen=True)
class _FileResult:
    row: FileRow
    chunks: list[tuple[ChunkRecord, str]]   # record and its text (text is never stored)


def now_utc() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def resolve_branches(repo: Path, branches: Sequence[str], all_branches: bool) -> list[str]:
    if all_branches:
        names = gitio.local_branches(repo)
        if not names:
            raise gitio.NoCommits(f"{repo} has no branches with commits; commit something first.")
        return names
    if branches:
        return list(dict.fromkeys(branches))
    return [gitio.current_branch(repo)]


def rules_at(reader: gitio.BlobReader, tree: dict[str, gitio.TreeEntry]) -> Rules:
    """The exclusion rules as committed on the branch being indexed."""
    def text(path: str) -> str | None:
        entry = tree.get(path)
        data = reader.read(entry.blob_sha) if entry else None
        return None if data is None else decode(data)
    return load_rules_text(text(".codevouch.toml"), text("pyproject.toml"))


def build_index(repo_path: Path | str, index_dir: Path, embedder: Embedder,
                branches: Sequence[str] = (), all_branches: bool = False, wait: float = 0,
                progress: Progress | None = None, on_phase: PhaseHook | None = None) -> list[BranchSummary]:
    repo = gitio.repo_root(repo_path)
    names = resolve_branches(repo, branches, all_branches)
    commits = {name: gitio.branch_commit(repo, name) for name in names}
    with writer_lock(index_dir, wait):
        ledger = Ledger(index_dir)
        try:
            vectors = VectorStore(index_dir)
            collect_garbage(ledger, vectors)
            return [_build_branch(repo, name, commits[name], ledger, vectors, embedder, progress,
                                  on_phase or (lambda phase: None)) for name in names]
        finally:
            ledger.close()


def collect_garbage(ledger: Ledger, vectors: VectorStore) -> None:
    """Remove vectors the ledger does not know: leftovers of a killed or superseded build."""
    pending = ledger.pending()
    by_collection: dict[str, list[str]] = {}
    for name, cid in pending:
        by_collection.setdefault(name, []).append(cid)
    for name, ids in by_collection.items():
        known = ledger.records(name, ids)
        orphans = [cid for cid in ids if cid not in known]
        if orphans:
            vectors.delete(name, orphans)
    ledger.clear_pending(pending)


def _build_branch(repo: Path, branch: str, commit: str, ledger: Ledger, vectors: VectorStore,
                  embedder: Embedder, progress: Progress | None, on_phase: PhaseHook) -> BranchSummary:
    started = time.monotonic()
    repo_key = str(repo)
    base = collection_base(repo_key, branch)
    live, hist = f"{base}-live", f"{base}-hist"
    state = ledger.branch(base)
    commit_date = gitio.commit_dates(repo, [commit])[commit]
    tree = gitio.ls_tree(repo, commit)
    indexed_at = now_utc()

    with gitio.blob_reader(repo) as reader:
        rules = rules_at(reader, tree)
        rules_json = json.dumps(rules.to_json(), sort_keys=True)
        full = state is None or state.rules_json != rules_json or state.embedder != embedder.name
        old_files = ledger.files(base)
        if state is not None and not full and state.commit == commit:
            return _summary(repo_key, branch, commit, commit_date, tree, old_files, ledger, live,
                            embedded=0, reused=0, deleted=0, indexed=0, noop=True,
                            seconds=time.monotonic() - started)
        plan = plan_refresh(old_files, tree, full)
        results = _read_and_chunk(reader, plan, tree, rules, repo_key, branch, commit, commit_date,
                                  indexed_at, progress)
    on_phase("planned")

    new_records = [rec for res in results for rec, _ in res.chunks]
    texts = {rec.text_hash: text for res in results for rec, text in res.chunks}
    known = ledger.cached_hashes(embedder.name, texts)
    missing = [h for h in texts if h not in known]
    embedded = _embed(embedder, ledger, [(h, texts[h]) for h in missing], progress)

    retired = ledger.records_for_paths(live, [*plan.retire, *plan.to_history])
    gone = set(plan.to_history)
    # History records name the last commit at which the file still existed.
    moved = [replace(rec, status="deleted", commit=state.commit if state else commit,
                     commit_date=state.commit_date if state else commit_date)
             for rec in retired if rec.path in gone]
    moved_known = ledger.cached_hashes(embedder.name, [r.text_hash for r in moved])
    moved = [r for r in moved if r.text_hash in moved_known]

    ledger.add_pending([(live, r.id) for r in new_records] + [(hist, r.id) for r in moved])
    _write_vectors(ledger, vectors, embedder.name, live, new_records)
    _write_vectors(ledger, vectors, embedder.name, hist, moved)
    on_phase("vectors-written")

    files_after = _commit(ledger, base, live, hist, repo_key, branch, commit, commit_date, indexed_at,
                          embedder.name, rules_json, plan, results, retired, moved, old_files)
    on_phase("committed")
    collect_garbage(ledger, vectors)
    return _summary(repo_key, branch, commit, commit_date, tree, files_after, ledger, live,
                    embedded=embedded, reused=len(new_records) - embedded,
                    deleted=len(plan.to_history) + len(plan.drop), indexed=len(results), noop=False,
                    seconds=time.monotonic() - started)


def _write_vectors(ledger: Ledger, vectors: VectorStore, model: str, name: str,
                   records: Sequence[ChunkRecord]) -> None:
    """Upsert records with their cached vectors, a batch at a time, so memory stays bounded
    (a vector as Python floats costs ~12 KB; 100k of them at once would cost over a GB)."""
    for start in range(0, len(records), VECTOR_BATCH):
        part = records[start:start + VECTOR_BATCH]
        vecs = ledger.cached_vectors(model, [r.text_hash for r in part])
        vectors.upsert(name, part, [vecs[r.text_hash] for r in part])


def _read_and_chunk(reader: gitio.BlobReader, plan: RefreshPlan, tree: dict[str, gitio.TreeEntry],
                    rules: Rules, repo: str, branch: str, commit: str, commit_date: str, indexed_at: str,
                    progress: Progress | None) -> list[_FileResult]:
    count_tokens = token_counter()
    results: list[_FileResult] = []
    for n, path in enumerate(plan.index, 1):
        entry = tree[path]
        data = reader.read(entry.blob_sha)
        if progress:
            progress(n, len(plan.index), "chunking")
        if data is None:  # a tree entry whose blob git cannot read: report, never drop silently
            results.append(_FileResult(FileRow(path, entry.blob_sha, "source", None, "", "skipped",
                                               "unreadable blob", 0), []))
            continue
        reason = skip_reason(data, rules)
        text = decode(data) if reason is None else decode(data[:2048])
        found = classify(path, text, rules)
        if found.excluded:
            results.append(_FileResult(FileRow(path, entry.blob_sha, found.kind, found.rule, "",
                                               "excluded", found.rule, 0), []))
            continue
        if reason is not None:
            results.append(_FileResult(FileRow(path, entry.blob_sha, found.kind, found.rule, "",
                                               "skipped", reason, 0), []))
            continue
        chunks, language = chunk_text(text, path, count_tokens, CHUNK_TOKEN_BUDGET)
        language = language or "text"
        records = []
        for ordinal, ch in enumerate(chunks):
            records.append((ChunkRecord(
                id=chunk_id(path, entry.blob_sha, ordinal), repo=repo, path=path, branch=branch,
                commit=commit, commit_date=commit_date, symbol=ch.symbol, start_line=ch.start_line,
                end_line=ch.end_line, indexed_at=indexed_at, blob_sha=entry.blob_sha,
                text_hash=text_hash(ch.text), kind=found.kind, language=language, status="live"), ch.text))
        status = "live" if records else "skipped"
        results.append(_FileResult(FileRow(path, entry.blob_sha, found.kind, found.rule, language, status,
                                           None if records else "no content to index", len(records)),
                                   records))
    return results


def _embed(embedder: Embedder, ledger: Ledger, items: list[tuple[str, str]],
           progress: Progress | None) -> int:
    """Embed what the cache lacks, saving each batch so a killed build keeps its work."""
    # Similar lengths in a batch means little padding: the model's cost follows the longest text.
    items = sorted(items, key=lambda item: len(item[1]))
    for start in range(0, len(items), EMBED_BATCH):
        part = items[start:start + EMBED_BATCH]
        vecs = embedder.embed([text for _, text in part])
        ledger.put_vectors(embedder.name, {h: v for (h, _), v in zip(part, vecs)})
        if progress:
            progress(min(start + EMBED_BATCH, len(items)), len(items), "embedding")
    return len(items)


def _commit(ledger: Ledger, base: str, live: str, hist: str, repo: str, branch: str, commit: str,
            commit_date: str, indexed_at: str, embedder: str, rules_json: str, plan: RefreshPlan,
            results: list[_FileResult], retired: list[ChunkRecord], moved: list[ChunkRecord],
            old_files: dict[str, FileRow]) -> dict[str, FileRow]:
    """One transaction: after it, readers see the new state; before it, the old one."""
    new_ids = {rec.id for res in results for rec, _ in res.chunks}
    with ledger.transaction() as db:
        # Vectors of replaced chunks go to `pending`, so garbage collection removes them
        # from Chroma once this transaction has made them invisible.
        db.executemany("INSERT OR IGNORE INTO pending VALUES (?, ?)",
                       [(live, r.id) for r in retired if r.id not in new_ids])
        drop_lexical(db, live, [r.id for r in retired])
        put_lexical(db, live, [(rec.id, lexical.document(text, rec.path, rec.symbol))
                               for res in results for rec, text in res.chunks])
        db.executemany("DELETE FROM chunks WHERE coll=? AND path=?",
                       [(live, p) for p in (*plan.retire, *plan.to_history)])
        db.executemany("INSERT OR REPLACE INTO chunks VALUES (?, ?, ?, ?, ?)",
                       [(live, rec.id, json.dumps(asdict(rec)), rec.path, rec.status)
                        for res in results for rec, _ in res.chunks])
        db.executemany("INSERT OR REPLACE INTO chunks VALUES (?, ?, ?, ?, ?)",
                       [(hist, rec.id, json.dumps(asdict(rec)), rec.path, rec.status) for rec in moved])
        for res in results:
            r = res.row
            db.execute("INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?,?,?)",
                       (base, r.path, r.blob_sha, r.kind, r.rule, r.language, r.status, r.reason, r.chunks))
        for path in plan.to_history:
            db.execute("UPDATE files SET status='deleted' WHERE coll=? AND path=?", (base, path))
        db.executemany("DELETE FROM files WHERE coll=? AND path=?", [(base, p) for p in plan.drop])
        db.execute("INSERT OR REPLACE INTO branches VALUES (?,?,?,?,?,?,?,?)",
                   (base, repo, branch, commit, commit_date, indexed_at, embedder, rules_json))
    return ledger.files(base)


def _summary(repo: str, branch: str, commit: str, commit_date: str, tree: dict[str, gitio.TreeEntry],
             files: dict[str, FileRow], ledger: Ledger, live: str, *, embedded: int, reused: int,
             deleted: int, indexed: int, noop: bool, seconds: float) -> BranchSummary:
    current = [f for f in files.values() if f.status != "deleted"]
    skipped = Counter(f.reason or "unknown" for f in current if f.status == "skipped")
    excluded = Counter(f"{f.kind} ({f.rule})" for f in current if f.status == "excluded")
    return BranchSummary(
        repo=repo, branch=branch, commit=commit, commit_date=commit_date, files=len(tree),
        chunks=sum(f.chunks for f in current if f.status == "live"), embedded=embedded, reused=reused,
        deleted=deleted, indexed_files=indexed, skipped=dict(skipped), excluded=dict(excluded),
        skipped_files=[{"path": f.path, "reason": f.reason or ""} for f in current if f.status == "skipped"],
        noop=noop, seconds=round(seconds, 3))
