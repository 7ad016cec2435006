#!/usr/bin/env python
"""Figure 4: freshness verdicts on real evolution, scored against ground truth.

For each pair of releases (N, N+1) of a package: N on a branch, N+1 on main, the working
tree at main. Every chunk the index holds for N is validated as if a search had returned it,
and each verdict is compared with the ground-truth class (benchlib/truth.py), alongside the
check most teams write: "file exists and its hash equals the indexed hash".

The index is built with the fake embedder: verdicts never look at vectors, and this figure
needs every chunk, not the nearest ones, so embedding cost would buy nothing here.
"""
from __future__ import annotations

import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import cli, corpus
from benchlib.common import log, machine, write_json
from benchlib.index import branch_records, snippets
from benchlib.truth import (AMBIGUOUS, EXPECTED, FRESH, FRESH_TRUTH, MEANING, STALE_TRUTH, chunk_class,
                            file_fates, naive_exists, naive_exists_and_hash)

VERDICT_ORDER = ("usable", "stale-but-ok", "historical-only", "excluded")


def rates(labels: list[tuple[str, bool]]) -> dict[str, Any]:
    """False-fresh over snippets whose code is gone or changed; false-stale over current ones."""
    stale = [fresh for cls, fresh in labels if cls in STALE_TRUTH]
    current = [fresh for cls, fresh in labels if cls in FRESH_TRUTH]
    return {"false_fresh": sum(stale), "stale_truth": len(stale),
            "false_fresh_rate": round(sum(stale) / len(stale), 4) if stale else None,
            "false_stale": sum(not f for f in current), "fresh_truth": len(current),
            "false_stale_rate": round(sum(not f for f in current) / len(current), 4) if current else None}


def evaluate_pair(old_spec: str, new_spec: str, work: Path) -> dict[str, Any]:
    from codevouch.embedding import FakeEmbedder
    from codevouch.indexer.build import build_index
    from codevouch.validator import validate

    pair_dir = work / cli.safe_name(f"{old_spec}-to-{new_spec}")
    repo, index_dir = pair_dir / "repo", pair_dir / "index"
    old_branch, _ = corpus.evolution_repo(repo, old_spec, new_spec)
    build_index(repo, index_dir, FakeEmbedder(), branches=[old_branch])
    records = branch_records(index_dir, repo, old_branch)
    items = snippets(repo, records)
    old_commit = corpus.git(repo, "rev-parse", old_branch).strip()
    fates = file_fates(repo, old_commit, "HEAD", {r.path for r in records})
    blob_text: dict[str, str] = {}

    def text_at(rev: str, path: str) -> str:
        key = f"{rev}:{path}"
        if key not in blob_text:
            blob_text[key] = corpus.git(repo, "show", key)
        return blob_text[key]

    classes = [chunk_class(r.path, r.symbol, r.start_line, r.end_line, fates[r.path], text_at(old_commit, r.path),
                           text_at("HEAD", r.path) if fates[r.path].status == "modified" else None)
               for r in records]
    start = time.perf_counter()
    results = validate(repo, items)
    seconds = time.perf_counter() - start

    matrix: dict[str, Counter[str]] = defaultdict(Counter)
    reasons: dict[str, Counter[str]] = defaultdict(Counter)
    wrong: list[dict[str, Any]] = []
    renames_pointed = 0
    for rec, cls, res in zip(records, classes, results):
        matrix[cls][res.verdict] += 1
        reasons[cls][res.reason] += 1
        if res.verdict not in EXPECTED[cls] and len(wrong) < 25:
            cur = res.current
            wrong.append({"class": cls, "verdict": res.verdict, "reason": res.reason, "path": rec.path,
                          "symbol": rec.symbol, "lines": [rec.start_line, rec.end_line],
                          "current": None if cur is None else
                          f"{cur.path}#L{cur.start_line}-L{cur.end_line} ({cur.symbol})"})
        if cls.startswith("file-renamed") and res.current is not None \
                and res.current.path == fates[rec.path].new_path:
            renames_pointed += 1
    correct = sum(res.verdict in EXPECTED[cls] for cls, res in zip(classes, results))
    codevouch = rates([(cls, res.verdict in FRESH) for cls, res in zip(classes, results)])
    hashed = rates([(cls, naive_exists_and_hash(repo, r.path, r.blob_sha)) for cls, r in zip(classes, records)])
    exists = rates([(cls, naive_exists(repo, r.path)) for cls, r in zip(classes, records)])
    renamed_total = sum(1 for c in classes if c.startswith("file-renamed"))
    log(f"freshness {old_spec} -> {new_spec}: {len(records)} snippets, accuracy {correct / len(records):.3f}, "
        f"false-fresh {codevouch['false_fresh']}")
    return {
        "old": old_spec, "new": new_spec, "snippets": len(records),
        "files_by_fate": dict(Counter(f.status for f in fates.values())),
        "confusion": {cls: {v: matrix[cls][v] for v in VERDICT_ORDER} for cls in EXPECTED if cls in matrix},
        "reasons": {cls: dict(reasons[cls]) for cls in EXPECTED if cls in reasons},
        "accuracy": round(correct / len(records), 4), "correct": correct,
        "codevouch": codevouch, "naive_exists_and_hash": hashed, "naive_exists_only": exists,
        "renamed_current_points_at_new_path": f"{renames_pointed}/{renamed_total}",
        "validate_seconds": round(seconds, 3),
        "snippets_per_second": round(len(records) / seconds, 1) if seconds else None,
        "disagreements_sample": wrong,
    }


def total(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    def add(key: str) -> dict[str, Any]:
        sums = Counter()
        for p in pairs:
            sums.update({k: v for k, v in p[key].items() if isinstance(v, int)})
        out: dict[str, Any] = dict(sums)
        out["false_fresh_rate"] = round(sums["false_fresh"] / sums["stale_truth"], 4) if sums["stale_truth"] else None
        out["false_stale_rate"] = round(sums["false_stale"] / sums["fresh_truth"], 4) if sums["fresh_truth"] else None
        return out
    confusion: dict[str, Counter[str]] = defaultdict(Counter)
    for p in pairs:
        for cls, row in p["confusion"].items():
            confusion[cls].update(row)
    n = sum(p["snippets"] for p in pairs)
    return {"snippets": n, "accuracy": round(sum(p["correct"] for p in pairs) / n, 4),
            "confusion": {cls: dict(confusion[cls]) for cls in EXPECTED if cls in confusion},
            "codevouch": add("codevouch"), "naive_exists_and_hash": add("naive_exists_and_hash"),
            "naive_exists_only": add("naive_exists_only")}


def main() -> None:
    args = cli.parser(__doc__ or "").parse_args()
    prof = cli.profile(args)
    corpus.fetch(v for pair in prof.evolutions for v in pair)
    work = cli.workdir(prof, "freshness")
    pairs = [evaluate_pair(old, new, work) for old, new in prof.evolutions]
    result = {"figure": "freshness", "profile": prof.name, "machine": machine(),
              "index_embedder": "fake (verdicts never read vectors)",
              "expected": {cls: sorted(v) for cls, v in EXPECTED.items()}, "meaning": MEANING,
              "stale_truth": sorted(STALE_TRUTH), "fresh_truth": sorted(FRESH_TRUTH), "ambiguous": sorted(AMBIGUOUS),
              "pairs": pairs, "overall": total(pairs)}
    if args.out:
        write_json(args.out, result)
    log(f"freshness overall: accuracy {result['overall']['accuracy']}, codevouch {result['overall']['codevouch']}")


if __name__ == "__main__":
    main()
