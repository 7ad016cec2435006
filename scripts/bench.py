#!/usr/bin/env python
"""Run every benchmark figure, side by side, and write JSON plus docs/BENCHMARKS.md.

    python scripts/bench.py --quick     # minutes: docs/benchmarks-quick.json (+ .bench-cache/BENCHMARKS-quick.md)
    python scripts/bench.py             # full: docs/benchmarks.json and docs/BENCHMARKS.md
    python scripts/bench.py --render    # re-render the markdown from the JSON, run nothing

Each figure runs as its own process (scripts/bench_<figure>.py), so one figure's memory or
failure never bleeds into another's; a failed figure is recorded and the others still run.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import corpus
from benchlib.common import CACHE, DOCS, PY, log, machine, read_json, run_streaming, write_json
from benchlib.config import PROFILES
from benchlib.report import render

SCRIPTS = Path(__file__).resolve().parent
FIGURES = ("build", "search", "quality", "freshness", "validate")


def outputs(quick: bool) -> tuple[Path, Path]:
    if quick:  # a quick run never overwrites the committed full results
        return DOCS / "benchmarks-quick.json", CACHE / "BENCHMARKS-quick.md"
    return DOCS / "benchmarks.json", DOCS / "BENCHMARKS.md"


def run_figure(figure: str, quick: bool, fake: bool, results: Path) -> dict[str, Any]:
    script = SCRIPTS / f"bench_{figure}.py"
    out = results / f"{figure}.json"
    out.unlink(missing_ok=True)
    if not script.exists():
        return {"figure": figure, "skipped": f"{script.name} does not exist yet"}
    if figure == "validate":  # written with the validator, with its own flags (--json PATH; no fake mode)
        args = [PY, str(script), "--json", str(out)] + (["--quick"] if quick else [])
    else:
        args = [PY, str(script), "--out", str(out)] + (["--quick"] if quick else []) + (["--fake"] if fake else [])
    log(f"figure {figure}: {' '.join(args[1:])}")
    seconds, code, stderr = run_streaming(args)
    if code != 0 or not out.exists():
        return {"figure": figure, "error": f"exit {code}", "stderr_tail": stderr[-3000:],
                "wall_seconds": round(seconds, 1)}
    data = read_json(out)
    data["wall_seconds"] = round(seconds, 1)
    return data


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="the quick profile: a few minutes")
    p.add_argument("--only", nargs="+", choices=FIGURES, help="run only these figures (others are kept from the JSON)")
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
        corpus.fetch(prof.specs())  # one pip call for everything missing
        previous = read_json(json_path) if args.only and json_path.exists() else {"figures": {}}
        results = CACHE / "results" / prof.name
        results.mkdir(parents=True, exist_ok=True)
        figures = dict(previous.get("figures", {}))
        for figure in args.only or FIGURES:
            figures[figure] = run_figure(figure, args.quick, args.fake, results)
        total = time.perf_counter() - started
        command = " ".join(["python scripts/bench.py", *sys.argv[1:]])
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
