#!/usr/bin/env python
"""Figure 4: freshness verdicts on real evolution, scored against ground truth.

For each pair of releases (N, N+1) of a package: N on a branch, N+1 on main, the working
tree at main. Every chunk the index holds for N is validated as if a search had returned it,
and each verdict is compared with the ground-truth class (codevouch_bench/lib/truth.py), alongside the
check most teams write: "file exists and its hash equals the indexed hash".

A third source, splitter windows (codevouch_bench/lib/windows.py: LangChain's language splitters at
1,000/100), is scored on the same pairs (its tuning pairs) and on the profile's held-out window
pairs, releases 2-3 years apart (codevouch_bench/lib/config.py), which make its headline.

The index is built with the fake embedder: verdicts never look at vectors, and this figure
needs every chunk, not the nearest ones, so embedding cost would buy nothing here.
"""
from __future__ import annotations

import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from codevouch_bench.lib import cli, corpus, windows
from codevouch_bench.lib.common import log, machine, write_json
from codevouch_bench.lib.config import WindowPair
from codevouch_bench.lib.index import branch_records, snippets
from codevouch_bench.lib.toolsnippets import tool_snippets
from codevouch_bench.lib.truth import (
    AMBIGUOUS,
    EXPECTED,
    FRESH,
    FRESH_TRUTH,
    MEANING,
    STALE_TRUTH,
    NewRelease,
    chunk_class,
    file_fates,
    naive_exists,
    naive_exists_and_hash,
)

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

    pair_dir = work / cli.safe_name(f"{old_spec}-to-{new_spec}")
    repo, index_dir = pair_dir / "repo", pair_dir / "index"
    old_branch, _ = corpus.evolution_repo(repo, old_spec, new_spec)
    build_index(repo, index_dir, FakeEmbedder(), branches=[old_branch])
    records = branch_records(index_dir, repo, old_branch)
    old_commit = corpus.git(repo, "rev-parse", old_branch).strip()
    paths = {r.path for r in records}
    fates = file_fates(repo, old_commit, "HEAD", paths)
    new = NewRelease(repo, "HEAD", corpus.git(repo, "ls-tree", "-r", "--name-only", "HEAD").split("\n"))
    blob_text: dict[str, str] = {}

    def text_at(rev: str, path: str) -> str:
        key = f"{rev}:{path}"
        if key not in blob_text:
            blob_text[key] = corpus.git(repo, "show", key)
        return blob_text[key]

    def truth(path: str, symbol: str, start: int, end: int) -> str:
        fate = fates[path]
        return chunk_class(path, symbol, start, end, fate, text_at(old_commit, path),
                           text_at("HEAD", fate.new_path) if fate.status in ("modified", "renamed")
                           and fate.new_path and not fate.identical else None, new)

    # Source 1: codevouch's own chunks, as a search would return them.
    chunk_items = snippets(repo, records)
    chunk_truth = [truth(r.path, r.symbol, r.start_line, r.end_line) for r in records]
    # Source 2: every definition (nested included) as another tool names and cuts it.
    tool = tool_snippets(repo, old_commit, old_branch, paths)
    tool_items = [item for _, item in tool]
    tool_truth = [truth(d_item["path"], d.name, d.start, d.end) for d, d_item in tool]

    sources = {"codevouch-chunks": (chunk_items, chunk_truth), "tool-definitions": (tool_items, tool_truth)}
    out: dict[str, Any] = {"old": old_spec, "new": new_spec,
                           "files_by_fate": dict(Counter(f.status for f in fates.values()))}
    for name, (items, classes) in sources.items():
        out[name] = score(repo, items, classes, fates, naive=name == "codevouch-chunks")
        accuracy = out[name]["accuracy"]     # None when the source gave no snippets (no definitions walk)
        log(f"freshness {old_spec} -> {new_spec} [{name}]: {len(items)} snippets, accuracy "
            f"{'–' if accuracy is None else f'{accuracy:.4f}'}, "
            f"false-fresh {out[name].get('codevouch', {}).get('false_fresh', '–')}")
    out[WINDOWS] = {"name": f"{old_spec} → {new_spec}", "split": "tuning", **windows.score(repo, old_commit)}
    _log_windows(out[WINDOWS])
    return out


WINDOWS = "splitter-windows"


def _log_windows(w: dict[str, Any]) -> None:
    log(f"freshness {w['name']} [{WINDOWS}, {w['split']}]: {w['windows']} windows, accuracy {w['accuracy']}, "
        f"false-fresh {w['false_fresh']}, false-stale {w['false_stale']}")


def evaluate_windows(pair: WindowPair, work: Path) -> dict[str, Any]:
    """Splitter windows alone (no index: they need none) on a held-out pair."""
    repo = work / cli.safe_name(f"windows-{pair.name}").replace(" ", "").replace("→", "-to-")
    branch, _ = corpus.evolution_repo(repo, pair.old, pair.new, pair.subdirs)
    out = {"name": pair.name, "split": "held-out", "old": pair.old, "new": pair.new, "language": pair.language,
           "apart": pair.apart, "subdirs": list(pair.subdirs), "note": pair.note,
           **windows.score(repo, corpus.git(repo, "rev-parse", branch).strip())}
    _log_windows(out)
    return out


def score(repo: Path, items: list[dict[str, Any]], classes: list[str], fates: dict[str, Any],
          naive: bool) -> dict[str, Any]:
    from codevouch.validator import validate

    start = time.perf_counter()
    results = validate(repo, items)
    seconds = time.perf_counter() - start
    matrix: dict[str, Counter[str]] = defaultdict(Counter)
    reasons: dict[str, Counter[str]] = defaultdict(Counter)
    wrong: list[dict[str, Any]] = []
    renames_pointed = 0
    for item, cls, res in zip(items, classes, results):
        matrix[cls][res.verdict] += 1
        reasons[cls][res.reason] += 1
        if res.verdict not in EXPECTED[cls] and len(wrong) < 25:
            cur = res.current
            wrong.append({"class": cls, "verdict": res.verdict, "reason": res.reason, "path": item["path"],
                          "symbol": item["symbol"], "lines": [item["start_line"], item["end_line"]],
                          "current": None if cur is None else
                          f"{cur.path}#L{cur.start_line}-L{cur.end_line} ({cur.symbol})"})
        renamed = fates[item["path"]].status == "renamed"
        if renamed and res.current is not None and res.current.path == fates[item["path"]].new_path:
            renames_pointed += 1
    correct = sum(res.verdict in EXPECTED[cls] for cls, res in zip(classes, results))
    n = len(items)
    out: dict[str, Any] = {
        "snippets": n,
        "confusion": {cls: {v: matrix[cls][v] for v in VERDICT_ORDER} for cls in EXPECTED if cls in matrix},
        "reasons": {cls: dict(reasons[cls]) for cls in EXPECTED if cls in reasons},
        "accuracy": round(correct / n, 4) if n else None, "correct": correct,
        "codevouch": rates([(cls, res.verdict in FRESH) for cls, res in zip(classes, results)]),
        "renamed_current_points_at_new_path":
            f"{renames_pointed}/{sum(1 for i in items if fates[i['path']].status == 'renamed')}",
        "validate_seconds": round(seconds, 3),
        "snippets_per_second": round(n / seconds, 1) if seconds else None,
        "disagreements_sample": wrong,
    }
    if naive:
        out["naive_exists_and_hash"] = rates([(cls, naive_exists_and_hash(repo, i["path"], i["blob_sha"]))
                                              for cls, i in zip(classes, items)])
        out["naive_exists_only"] = rates([(cls, naive_exists(repo, i["path"])) for cls, i in zip(classes, items)])
    return out


def total(pairs: list[dict[str, Any]], source: str) -> dict[str, Any]:
    parts = [p[source] for p in pairs]

    def add(key: str) -> dict[str, Any]:
        sums: Counter[str] = Counter()
        for p in parts:
            sums.update({k: v for k, v in p[key].items() if isinstance(v, int)})
        out: dict[str, Any] = dict(sums)
        out["false_fresh_rate"] = round(sums["false_fresh"] / sums["stale_truth"], 4) if sums["stale_truth"] else None
        out["false_stale_rate"] = round(sums["false_stale"] / sums["fresh_truth"], 4) if sums["fresh_truth"] else None
        return out
    confusion: dict[str, Counter[str]] = defaultdict(Counter)
    for p in parts:
        for cls, row in p["confusion"].items():
            confusion[cls].update(row)
    n = sum(p["snippets"] for p in parts)
    out = {"snippets": n, "accuracy": round(sum(p["correct"] for p in parts) / n, 4),
           "confusion": {cls: dict(confusion[cls]) for cls in EXPECTED if cls in confusion},
           "codevouch": add("codevouch")}
    if all("naive_exists_and_hash" in p for p in parts):
        out |= {"naive_exists_and_hash": add("naive_exists_and_hash"), "naive_exists_only": add("naive_exists_only")}
    return out


SOURCES = ("codevouch-chunks", "tool-definitions")


def main() -> None:
    args = cli.parser(__doc__ or "").parse_args()
    prof = cli.profile(args)
    corpus.fetch(v for pair in prof.evolutions for v in pair)
    work = cli.workdir(prof, "freshness")
    pairs = [evaluate_pair(old, new, work) for old, new in prof.evolutions]
    held_out = [evaluate_windows(pair, work) for pair in prof.window_held_out]
    result = {"figure": "freshness", "profile": prof.name, "machine": machine(),
              "index_embedder": "fake (verdicts never read vectors)",
              "expected": {cls: sorted(v) for cls, v in EXPECTED.items()}, "meaning": MEANING,
              "stale_truth": sorted(STALE_TRUTH), "fresh_truth": sorted(FRESH_TRUTH), "ambiguous": sorted(AMBIGUOUS),
              "sources": {"codevouch-chunks": "every chunk codevouch indexed from release N",
                          "tool-definitions": "every function and class of the same files, nested ones "
                                              "included, cut and named by the benchmark's own parsers "
                                              "(ast; tree-sitter query for Rust; a tree-sitter walk for C, "
                                              "C++, C#, Kotlin, Swift, Ruby, Lua, PHP, Scala and shell) as "
                                              "another tool would: "
                                              "`outer.<locals>.inner`, `Type::method`"},
              "pairs": pairs, "overall": {s: total(pairs, s) for s in SOURCES},
              "windows": {"splitter": f"LangChain RecursiveCharacterTextSplitter.from_language, "
                                      f"{windows.CHUNK_SIZE}/{windows.OVERLAP}, default whitespace stripping, "
                                      "add_start_index", "languages": windows.LANGUAGES,
                          "truth": windows.TRUTH, "held_out": held_out}}
    if args.out:
        write_json(args.out, result)
    for s in SOURCES:
        log(f"freshness overall [{s}]: accuracy {result['overall'][s]['accuracy']}, "
            f"codevouch {result['overall'][s]['codevouch']}")


if __name__ == "__main__":
    main()
