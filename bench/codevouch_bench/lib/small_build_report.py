"""The "Small builds" section of docs/BENCHMARKS.md, from bench/results/bench-small-build.json
(codevouch_bench.small_build's results: this checkout's, and the release before it, run with
`--code`), rendered by the runner with the other figures."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from codevouch_bench.lib.common import RESULTS as RESULTS_DIR
from codevouch_bench.lib.common import read_json_if_exists

RESULTS = RESULTS_DIR / "bench-small-build.json"
HOOKS = RESULTS_DIR / "bench-hook-build.json"      # codevouch_bench.hook_build's, run on its own (--seed-index)


def _row(label: str, r: dict[str, Any]) -> str:
    return (f"| {label} | {r['noop_median']} s ({', '.join(map(str, r['noop_runs']))}) | {r['one_file_median']} s "
            f"({', '.join(map(str, r['one_file_runs']))}) | {r['one_file_embedded']} | **{r['ratio']}x** | "
            f"{r['machine'].get('date')}, load {r['load_avg_1m']} |")


def _engine_row(r: dict[str, Any], e: dict[str, Any]) -> str:
    return (f"| this release, through the engine | {e['noop_median']} s ({', '.join(map(str, e['noop_runs']))}) | "
            f"{e['one_file_median']} s ({', '.join(map(str, e['one_file_runs']))}) | {e['one_file_embedded']} | "
            f"**{e['ratio']}x** ({e['ratio_to_in_process_noop']}x the in-process no-op) | "
            f"{r['machine'].get('date')}, load {e['load_avg_1m']} |")


def section(figure: dict[str, Any] | None = None, path: Path = RESULTS, hook_figure: dict[str, Any] | None = None
            ) -> str:
    """The section; `figure`: the runner's latest small_build result (`python -m codevouch_bench
    --only small_build`), which then is "this release" (else the file's `after`)."""
    data = read_json_if_exists(path) or {}
    after = figure if figure is not None and "noop_median" in figure else data.get("after")
    if after is None:
        return ""
    rows = [_row(data.get("before_label", "before"), data["before"])] if "before" in data else []
    rows.append(_row("this release, in-process", after))
    if "engine" in after:
        rows.append(_engine_row(after, after["engine"]))
    note = data.get("note") if after is data.get("after") else data.get("note_runner")
    hooks = hooks_section(hook_figure if hook_figure is not None else read_json_if_exists(HOOKS))
    return "\n".join([
        "\n## Small builds: a one-file commit's build against a no-op build\n",
        "Rerun: `python -m codevouch_bench.small_build --work DIR --out FILE` (`--code CHECKOUT` for another "
        "release's code, with `--no-engine`), or `python -m codevouch_bench --only small_build`.\n",
        f"What the git hooks run after a commit: `codevouch index build` in a fresh process, the real model, on "
        f"{after['fixture']} ({after['files']} files, {after['chunks']} chunks) committed into a fresh repository "
        "and built once; then, in alternation, a no-op build and the build after a one-line commit to one file "
        "(medians of the runs in brackets; target: the one-file build at most 3x the no-op). In-process: no "
        "engine runs. Through the engine: one runs for the index, started and warmed up before the first run, "
        "and each `index build` process hands it the build (docs/ENGINE.md, \"Builds\").\n",
        "| code | no-op build | one-file build | texts embedded | ratio | when |", "|---|---|---|---|---|---|",
        *rows,
    ]) + ("\n\n" + note if note else "") + "\n" + hooks


def hooks_section(fig: dict[str, Any] | None) -> str:
    """The hooks' build on this repository (codevouch_bench.hook_build), when it was run."""
    if not fig or "modes" not in fig:
        return ""
    size = ", ".join(fig["first_build"].split("): ", 1)[-1].split(", ")[:2])     # "537 files, 9429 chunks"
    rows = [f"| {name} | {m['median']} s ({', '.join(map(str, m['runs']))}) |" for name, m in fig["modes"].items()]
    return "\n".join([
        "\nThe hooks' build after a commit on this repository (`python -m codevouch_bench.hook_build --work DIR "
        "--seed-index INDEX`): a clone of " + fig["repo"] + f" ({size}), the hooks installed, then "
        "one-line commits to one of its benchmark modules; the wall time from `git commit` to the hook's line in "
        "hooks.log, with no engine and with a warm engine for the index (median, the runs in brackets; target: "
        f"within 2 s). {fig['machine'].get('date')}, load {fig['load_avg_1m']}.\n",
        "| hooks' build | commit to the hook's line |", "|---|---|", *rows]) + "\n"
