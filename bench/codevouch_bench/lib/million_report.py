"""The "Search at a million chunks" section of docs/BENCHMARKS.md, from bench/results/bench-search-1m.json
(`python -m codevouch_bench.search --sizes 1000000 --out bench/results/bench-search-1m.json`: figure 2's
method at one size, kept in a file of its own because its fill takes half an hour here)."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from codevouch_bench.lib.common import RESULTS as RESULTS_DIR
from codevouch_bench.lib.common import read_json_if_exists

RESULTS = RESULTS_DIR / "bench-search-1m.json"


def headline(ms: Callable[..., str], path: Path = RESULTS) -> list[list[Any]]:
    d = read_json_if_exists(path)
    if d is None:
        return []
    rows = []
    for size, r in d["sizes"].items():
        w, c = r["warm"], r["cold"]
        rows.append([f"search at {int(size):,} chunks: warm p50 / p95, validated library p95 / cold CLI p50",
                     f"{ms(w['search_ms'])} / {ms(w['search_ms'], 'p95')}, "
                     f"{ms(w.get('index_search_validated_ms'), 'p95')} / {ms(c.get('cli_search_no_validate'))}",
                     f"peak RSS {r.get('search_process_peak_rss_mib')} MiB searching; index {r.get('index_dir_mib')} MiB; "
                     f"fill {r['fill_seconds']} s"])
    return rows


def section(render: Callable[[dict[str, Any]], str], path: Path = RESULTS) -> str:
    """`render` is figure 2's section renderer (report.section_search): the same table."""
    d = read_json_if_exists(path)
    if d is None:
        return ""
    m = d["machine"]
    phases = "; ".join(f"{int(size):,} chunks: " + ", ".join(f"{k.replace('_', ' ')} {v} s"
                                                            for k, v in r.get("fill_phases_seconds", {}).items())
                       for size, r in d["sizes"].items())
    return ("\n## Search at a million chunks\n\n"
            "Rerun: `python -m codevouch_bench.search --sizes 1000000 --out bench/results/bench-search-1m.json`.\n\n"
            f"`python -m codevouch_bench.search --sizes 1000000 --out bench/results/bench-search-1m.json` at {m.get('date')} "
            f"(load average {m.get('load_avg_1m_at_start')} at its start), figure 2's method. "
            f"Fill by part: {phases}.\n\n" + render(d))
