"""Dense search over one branch's collection; the hit text comes from git at the indexed blob."""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from codevouch import gitio, lexical, lexindex
from codevouch.embedding import Embedder, embedder_by_name
from codevouch.errors import InputError, NotIndexed
from codevouch.retriever.collapse import collapse
from codevouch.store import ChunkRecord, Ledger, VectorStore, collection_base
from codevouch.syntax.lines import decode


@dataclass(frozen=True)
class Hit:
    record: ChunkRecord
    score: float
    text: str

    def to_json(self) -> dict[str, Any]:
        out = asdict(self.record)
        out.pop("id")
        return {"id": self.record.id, **out, "score": round(self.score, 4), "text": self.text}


RRF_K = 60  # reciprocal rank fusion's usual constant: ranks matter, raw scores do not

# With no kind filter, a hit's fused score is multiplied by its file kind's weight. Prose
# matches a plain-English question better than code does, so unweighted, README and docs
# chunks take the top slots for "where is the code that does X", and tests that call a
# function rank beside it (measured: FACTS.md and the quality figure). Weighted, prose and
# tests still surface when both halves rank them first, and a --kind filter turns weights off.
# Chosen on the quality figure's tuning corpora only (scripts/bench_quality.py --tune):
# docs 0.5 and 0.3 tied, tests 0.8 and 0.6 tied; the milder of each was kept.
KIND_WEIGHTS: dict[str, float] = {"source": 1.0, "test": 0.8, "config": 1.0, "docs": 0.5}


def search(repo_path: Path | str, query: str, index_dir: Path, branch: str | None = None, k: int = 10,
           include_history: bool = False, embedder: Embedder | None = None,
           mode: str = "hybrid", kinds: frozenset[str] | None = None) -> list[Hit]:
    """Top-k chunks of a branch. `mode`: hybrid (dense + lexical, fused by rank), dense or lexical.
    `kinds`: keep only chunks of these file kinds (source, test, docs, config)."""
    if mode not in ("hybrid", "dense", "lexical"):
        raise InputError(f"unknown search mode {mode!r}; use hybrid, dense or lexical.")
    repo = gitio.repo_root(repo_path)
    branch = branch or gitio.current_branch(repo)
    base = collection_base(str(repo), branch)
    ledger = Ledger(index_dir, readonly=True)
    try:
        state = ledger.branch(base)
        if state is None:
            raise NotIndexed(
                f"branch {branch!r} of {repo} is not in the index at {index_dir}; run "
                f"`codevouch index build --repo {repo} --branch {branch}` first.")
        # Vectors of a killed build may linger until the next build cleans them; the ledger
        # decides what is visible, so ask for enough extra neighbours to fill k.
        # A kind filter drops candidates after ranking: look deeper so k can still be filled.
        depth = max(3 * k, 30) * (4 if kinds else 1) + ledger.pending_count()
        rankings = _rankings(ledger, index_dir, base, lexindex.stamp_of(state.commit, state.built_at), query,
                             depth, include_history, mode,
                             _query_embedder(embedder, state.embedder, mode))
        fused = _fuse(rankings)
        found: list[tuple[ChunkRecord, float]] = []
        for name in [f"{base}-live"] + ([f"{base}-hist"] if include_history else []):
            known = ledger.records(name, [cid for (coll, cid) in fused if coll == name])
            for (coll, cid), score in fused.items():
                rec = known.get(cid) if coll == name else None
                if rec is None or (kinds is not None and rec.kind not in kinds):
                    continue
                if rec.status == "live":
                    # A live chunk's file is unchanged up to the branch's indexed commit, which
                    # the last build recorded: cite that commit and that build's time.
                    rec = replace(rec, commit=state.commit, commit_date=state.commit_date,
                                  branch=state.branch, indexed_at=state.built_at)
                found.append((rec, score if kinds is not None else score * KIND_WEIGHTS.get(rec.kind, 1.0)))
    finally:
        ledger.close()
    found = _dedupe(sorted(found, key=lambda item: -item[1]))
    found = (collapse(found) if COLLAPSE else found)[:k]
    blobs = gitio.read_blobs(repo, [rec.blob_sha for rec, _ in found])
    return [Hit(rec, score, chunk_text_of(blobs.get(rec.blob_sha), rec)) for rec, score in found]


def _query_embedder(given: Embedder | None, built_with: str, mode: str) -> Embedder | None:
    """The model that embeds the query: the branch's own, reusing `given` when it is that model."""
    if mode == "lexical":
        return None
    return given if given is not None and given.name == built_with else embedder_by_name(built_with)


Ranking = list[tuple[str, str]]  # (collection, chunk id), best first
# One hit per definition (see collapse.py); a knob so the quality figure can show both.
COLLAPSE = True
# How much the lexical list counts against the dense one in the fusion (tuned like KIND_WEIGHTS:
# 0.75 beat 0.5, 1.0 and 1.5 there, by a margin within noise for 55 queries).
LEXICAL_WEIGHT = 0.75


def _rankings(ledger: Ledger, index_dir: Path, base: str, stamp: str, query: str, depth: int,
              include_history: bool, mode: str, embedder: Embedder | None) -> list[tuple[float, Ranking]]:
    """(weight, ranking) of each list to fuse: dense per collection, then lexical."""
    live, hist = f"{base}-live", f"{base}-hist"
    rankings: list[tuple[float, Ranking]] = []
    if mode != "lexical" and embedder is not None:
        qvec = embedder.embed_query(query)
        vectors = _vector_reader(ledger, index_dir)
        for name in [live] + ([hist] if include_history else []):
            found = [cid for cid, _ in vectors.query(name, qvec, depth)]
            # Vectors a killed build left behind are not in the ledger: drop them before fusing,
            # or they would take rank places (and score) from the chunks that are.
            known = ledger.records(name, found)
            rankings.append((1.0, [(name, cid) for cid in found if cid in known]))
    if mode != "dense":
        found = lexindex.search(index_dir, live, stamp, list(dict.fromkeys(lexical.terms(query))), depth)
        if found is None:  # no fresh tantivy copy (see lexindex.py): ask the ledger's FTS5 table
            match = lexical.match_query(query)
            found = ledger.lexical_search(live, match, depth) if match else []
        if found:
            rankings.append((LEXICAL_WEIGHT, [(live, cid) for cid, _ in found]))
    return rankings


# One open reader per index directory, with the ledger's branch states it was opened under.
# Opening Chroma costs ~40 ms and its first count/query reloads the HNSW index (~80 ms at 10k
# chunks): far more than a search. But a reader opened before another process wrote the store
# keeps serving the old data, so it is reopened as soon as any build has committed since.
_READERS: dict[Path, tuple[tuple[Any, ...], VectorStore]] = {}


def _vector_reader(ledger: Ledger, index_dir: Path) -> VectorStore:
    states = tuple((b.coll, b.commit, b.built_at) for b in ledger.branches())
    cached = _READERS.get(index_dir)
    if cached is not None and cached[0] == states:
        return cached[1]
    if cached is not None:
        cached[1].close()
    reader = VectorStore(index_dir, readonly=True)
    _READERS[index_dir] = (states, reader)
    return reader


def _fuse(rankings: list[tuple[float, Ranking]]) -> dict[tuple[str, str], float]:
    """Weighted reciprocal rank fusion, scaled so a chunk ranked first by every list scores 1.0."""
    scores: dict[tuple[str, str], float] = {}
    for weight, ranking in rankings:
        for rank, key in enumerate(ranking):
            scores[key] = scores.get(key, 0.0) + weight / (RRF_K + rank + 1)
    total = sum(w for w, r in rankings if r and r[0][0].endswith("-live")) or 1.0
    return {key: s * (RRF_K + 1) / total for key, s in scores.items()}


def _dedupe(items: list[tuple[ChunkRecord, float]]) -> list[tuple[ChunkRecord, float]]:
    seen: set[tuple[str, str, int, int]] = set()
    out = []
    for rec, score in items:
        key = (rec.path, rec.blob_sha, rec.start_line, rec.end_line)
        if key not in seen:
            seen.add(key)
            out.append((rec, score))
    return out


def chunk_text_of(data: bytes | None, rec: ChunkRecord) -> str:
    if data is None:  # the blob was garbage-collected from the repository
        return ""
    lines = decode(data).split("\n")
    return "\n".join(lines[rec.start_line - 1:rec.end_line])
