"""The "Build of a large real repository" section of docs/BENCHMARKS.md, from bench/results/bench-large.json
(codevouch_bench.large's results, with "notes"; rendered by the runner (python -m codevouch_bench) with the other figures)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from codevouch_bench.lib.common import RESULTS as RESULTS_DIR
from codevouch_bench.lib.common import read_json_if_exists

RESULTS = RESULTS_DIR / "bench-large.json"


def _peaks(run: dict[str, Any]) -> str:
    peaks = run.get("rss_peaks_by_phase_mib") or {}
    return ", ".join(f"{phase} {mib:.0f}" for phase, mib in peaks.items())


def headline(path: Path = RESULTS) -> list[list[Any]]:
    """The headline table's row for the large build, when it was run."""
    d = read_json_if_exists(path)
    if d is None:
        return []
    full = d["full_build"]
    return [[f"build of a large real repository ({full['chunks']:,} chunks, real model): time / peak RSS",
             f"{full['seconds'] / 60:.1f} min / {full['peak_rss_mib']:,.0f} MiB",
             f"overhead x{d['pipeline_overhead_ratio']}; no-op {d['noop_rebuild']['seconds']} s, one day "
             f"({len(d['day_commits'])} commits) {d['one_day']['seconds']} s; {d['repository'].rsplit('/', 1)[-1]} "
             f"at {d['full_build_commit'][:10]}"]]


def section(path: Path = RESULTS) -> str:
    d = read_json_if_exists(path)
    if d is None:
        return ""
    full, bare = d["full_build"], d["full_build"].get("bare") or {}
    m = d["machine"]
    rows = [
        ("full build, real model", full["seconds"], full["chunks"], full["embedded"], full.get("chunks_per_second"),
         full["peak_rss_mib"], _peaks(full)),
        (f"bare embedding loop, every {bare.get('every')}th text, same process", bare.get("seconds"), bare.get("texts"),
         bare.get("texts"), bare.get("chunks_per_second"), "(in the build's process)", ""),
        ("no-op rebuild", d["noop_rebuild"]["seconds"], d["noop_rebuild"]["chunks"], d["noop_rebuild"]["embedded"], None,
         d["noop_rebuild"]["peak_rss_mib"], ""),
        (f"one day: {len(d['day_commits'])} commits to {d['day_end'][:10]}", d["one_day"]["seconds"],
         d["one_day"]["chunks"], d["one_day"]["embedded"], None, d["one_day"]["peak_rss_mib"], _peaks(d["one_day"])),
        *((f"branch {b['branch']}", b["seconds"], b["chunks"], b["embedded"], None, b["peak_rss_mib"], "")
          for b in d.get("branches", [])),
    ]
    out = ["\n## Build of a large real repository\n",
           "Rerun: `python -m codevouch_bench.large --work DIR --out bench/results/bench-large.json` (30-40 minutes "
           "on 2 cores).\n",
           f"`{d['command']}` at {m.get('date')} (load average {m.get('load_avg_1m_at_start')} at its start): "
           f"{d['repository']}, the full build at {d['full_build_commit'][:10]}, embedder {d['embedder']}. Each build "
           "runs in its own worker process with the model loaded first; peak RSS is that worker's "
           "(getrusage), and a thread samples its resident set once a second for the peak of each phase. "
           f"Index directory after the full build: {d['index_size_mib']} MiB. Pipeline overhead (bare loop chunks/s "
           f"÷ build chunks/s): **x{d['pipeline_overhead_ratio']}**.\n",
           "| measurement | seconds | chunks | embedded | chunks/s | peak RSS MiB | RSS peak by phase (MiB) |",
           "|---|---|---|---|---|---|---|"]
    out += ["| " + " | ".join("–" if v is None else str(v) for v in row) + " |" for row in rows]
    if d.get("notes"):
        out += ["", *[f"- {n}" for n in d["notes"]]]
    return "\n".join(out) + "\n"
