"""The "Small builds" section of docs/BENCHMARKS.md, from bench/results/bench-small-build.json
(codevouch_bench.small_build's results: this checkout's, and the release before it, run with
`--code`), rendered by the runner with the other figures."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from codevouch_bench.lib.common import RESULTS as RESULTS_DIR
from codevouch_bench.lib.common import read_json_if_exists

RESULTS = RESULTS_DIR / "bench-small-build.json"


def _row(label: str, r: dict[str, Any]) -> str:
    return (f"| {label} | {r['noop_median']} s ({', '.join(map(str, r['noop_runs']))}) | {r['one_file_median']} s "
            f"({', '.join(map(str, r['one_file_runs']))}) | {r['one_file_embedded']} | **{r['ratio']}x** | "
            f"{r['machine'].get('date')}, load {r['load_avg_1m']} |")


def section(path: Path = RESULTS) -> str:
    data = read_json_if_exists(path)
    if data is None:
        return ""
    after = data["after"]
    rows = [_row(label, data[key]) for key, label in (("before", data.get("before_label", "before")),
                                                      ("after", "this release")) if key in data]
    return "\n".join([
        "\n## Small builds: a one-file commit's build against a no-op build\n",
        "Rerun: `python -m codevouch_bench.small_build --work DIR --out FILE` (`--code CHECKOUT` for another "
        "release's code).\n",
        f"What the git hooks run after a commit: `codevouch index build` in a fresh process, the real model, no "
        f"engine, on {after['fixture']} ({after['files']} files, {after['chunks']} chunks) committed into a fresh "
        "repository and built once; then, in alternation, a no-op build and the build after a one-line commit to "
        "one file (medians of the runs in brackets; target: the one-file build at most 3x the no-op).\n",
        "| code | no-op build | one-file build | texts embedded | ratio | when |", "|---|---|---|---|---|---|",
        *rows,
    ]) + ("\n\n" + data["note"] if data.get("note") else "") + "\n"
