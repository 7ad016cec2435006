#!/usr/bin/env python
"""Whether one ranking across repositories finds what asking the right repository finds: MRR@10 of
docstring queries asked of every repository at once (codevouch.Indexes, its fusion) against the
same queries asked of the repository that holds the answer alone, and against two fusions that
codevouch does not use (every hit sorted by its own repository's rank score; one hit of each
repository in turn).

Corpora: the Python ones of the quality benchmark from PyPI (click to tune on, flask, requests, httpx held
out; quick-profile samples, docstrings removed), each its own repository in one index, built with
the packaged MiniLM. Queries: the first sentence of a removed docstring (bench_quality.prepare,
pick_queries); ground truth is where the library's own docstring stood, never codevouch's output.
Held-out repositories' queries come first.

    python -m codevouch_bench.measure_across [--queries N] [--dump FILE]   (not a figure: the runner does not run it)

`--dump FILE` writes each query's per-repository answers (each hit's place, similarity, score,
name and good-match flags, what matched it, the share of the query's words its text holds) and
whether only its repository defines its name, so that other fusions can be compared on the same
answers without searching again; choose among them on the tuning queries only.
"""
from __future__ import annotations

import argparse
import ast
import time
from pathlib import Path
from typing import Any

from codevouch_bench.lib.common import CACHE, log
from codevouch_bench.lib.config import HELD_OUT, PROFILES, TUNING
from codevouch_bench.lib.embcache import CachedEmbedder
from codevouch_bench.quality import pick_queries, prepare


def _rank(hits: list[tuple[str, Any]], repo: str, target: Any) -> int | None:
    """1-based place of the target (its repository, its file, its def line inside the hit)."""
    for n, (where, h) in enumerate(hits[:10], 1):
        if where == repo and h.path == target.path and h.record.start_line <= target.def_line <= h.record.end_line:
            return n
    return None


def _dumped(held_out: bool, name: str, t: Any, labels: list[str], answers: list[list[Any]],
            alone: int | None, one_repo: bool) -> dict[str, Any]:
    """One query's answers as data: each repository's hits in its own order, with what fusion reads;
    `one_repo`: no other repository defines the target's name."""
    from codevouch.store.lexical import parts

    words = set(parts(t.query))

    def held(h: Any) -> float:     # the share of the query's words (stop words out) the chunk's text holds
        return len(words & set(parts(h.text))) / max(len(words), 1)
    return {"held_out": held_out, "repo": name, "path": t.path, "def_line": t.def_line, "alone": alone,
            "query": t.query, "name": t.name, "one_repo": one_repo,
            "answers": [{"repo": label, "hits": [[h.path, h.record.start_line, h.record.end_line, h.similarity, h.score,
                                                  h.name_match, h.good_match, list(h.matched), held(h)] for h in hits]}
                        for label, hits in zip(labels, answers)]}


def defined_names(files: dict[str, str]) -> set[str]:
    """Every function and class name Python's own parser finds in `files` (path -> text): ground
    truth for which repositories hold a definition of a name, never codevouch's parse."""
    names: set[str] = set()
    for path, text in files.items():
        if not path.endswith(".py"):
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        names.update(n.name for n in ast.walk(tree)
                     if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))
    return names


def _mrr(ranks: list[int | None]) -> float:
    return sum(1 / r for r in ranks if r) / max(len(ranks), 1)


def main() -> None:
    from codevouch import Index, Indexes
    from codevouch.across import fuse
    from codevouch.embedding import MiniLMEmbedder

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--queries", type=int, default=30, help="docstring targets per corpus")
    p.add_argument("--dump", type=Path, help="write each query's per-repository answers here (JSON lines), to "
                                             "compare fusions offline; choose on the tuning queries only")
    args = p.parse_args()
    corpora = [c for c in (*HELD_OUT, *TUNING) if c.language == "python" and not c.spec.startswith("git:")]
    embedder = CachedEmbedder(MiniLMEmbedder())
    prof = PROFILES["quick"]
    work = CACHE / "work" / "across"
    index_dir = work / "index"
    repos: dict[str, Path] = {}
    asked: list[tuple[str, Any]] = []
    names_of: dict[str, set[str]] = {}
    started = time.perf_counter()
    for c in corpora:
        log(f"across: {c.name}")
        repo = work / c.name
        prepared = prepare(c, prof, repo)
        names_of[c.name] = defined_names(prepared.files)
        targets = pick_queries(prepared.targets, args.queries, prof.seed)
        Index(repo, index_dir, embedder=embedder, record=False).build()
        repos[c.name] = repo.resolve()
        asked += [(c.name, t) for t in targets]
    built = time.perf_counter() - started
    many = Indexes(list(repos.values()), index_dir, record=False)
    names = {v: k for k, v in repos.items()}
    rows: dict[str, list[int | None]] = {"alone": [], "codevouch": [], "by score": [], "in turn": []}
    held = {c.name for c in HELD_OUT}
    # The target's answer is in one repository only when no other repository defines its name
    # (requests and httpx both define Response.raise_for_status: either answers the query).
    groups: dict[str, list[int]] = {"held-out": [], "tuning": [], "held-out, name in one repository": [],
                                    "tuning, name in one repository": []}
    timings: list[float] = []
    dumped: list[dict[str, Any]] = []
    for n, (name, t) in enumerate(asked):
        group = "held-out" if name in held else "tuning"
        groups[group].append(n)
        one_repo = not any(t.name in names for other, names in names_of.items() if other != name)
        if one_repo:
            groups[f"{group}, name in one repository"].append(n)
        alone = Index(repos[name], index_dir, record=False).search(t.query, k=10, validate=False, overlay=False)
        rows["alone"].append(_rank([(name, h) for h in alone], name, t))
        t0 = time.perf_counter()
        found = many.search(t.query, k=10, validate=False, overlay=False)
        timings.append(time.perf_counter() - t0)
        rows["codevouch"].append(_rank([(names[f.repository.path], f.hit) for f in found], name, t))
        answers = [[*h] for _, h in found.answers]
        labels = [names[r.path] for r, _ in found.answers]
        pooled = sorted(((labels[i], h) for i, a in enumerate(answers) for h in a), key=lambda x: -x[1].score)
        rows["by score"].append(_rank(pooled, name, t))
        if args.dump is not None:
            dumped.append(_dumped(name in held, name, t, labels, answers, rows["alone"][-1], one_repo))
        rows["in turn"].append(_rank([(labels[i], h) for i, h in fuse(answers, 10, comparable=False)], name, t))
    print(f"corpora: {', '.join(repos)}; {len(asked)} queries; built in {built:.0f} s")
    print("| queries | n | alone | codevouch (similarity) | by own score | in turn | codevouch / alone |")
    print("|---|---|---|---|---|---|---|")
    for group, idx in groups.items():
        got = {k: _mrr([v[i] for i in idx]) for k, v in rows.items()}
        print(f"| {group} | {len(idx)} | {got['alone']:.3f} | {got['codevouch']:.3f} | {got['by score']:.3f} | "
              f"{got['in turn']:.3f} | {got['codevouch'] / max(got['alone'], 1e-9):.2f} |")
    if args.dump is not None:
        import json

        args.dump.write_text("".join(json.dumps(d) + "\n" for d in dumped))
    timings.sort()
    print(f"search across {len(repos)} repositories, in process: p50 {timings[len(timings) // 2] * 1000:.0f} ms, "
          f"p95 {timings[int(len(timings) * 0.95)] * 1000:.0f} ms")


if __name__ == "__main__":
    main()
