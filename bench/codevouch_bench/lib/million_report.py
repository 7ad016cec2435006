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
# A later run of the same figure, with the code that answers through the resident engine: kept
# apart so that the idle run above and its notes stay as they were measured.
ENGINE = RESULTS_DIR / "bench-search-1m-engine.json"


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
            f"Fill by part: {phases}.\n\n" + render(d) + engine_section())


def engine_section(path: Path = ENGINE) -> str:
    """The engine's row at 1M: first call and warm calls, beside the same run's warm in-process
    search, so the machine's load at that run can be read off."""
    d = read_json_if_exists(path)
    if d is None:
        return ""
    m = d["machine"]
    rows = []
    warm_ups: list[str] = []
    for size, r in d["sizes"].items():
        c, w = r["cold"], r["warm"]
        first, warm = c.get("cli_search_engine_first"), c.get("cli_search_engine_warm")
        if not first or not warm:
            continue
        ok = "met" if warm["p50"] <= 100 and warm["p95"] <= 150 else "not met"
        rows.append(f"| {int(size):,} | {first['p50']:.0f} ms (n={first['n']}) | {warm['p50']:.0f} / {warm['p95']:.0f} ms "
                    f"(n={warm['n']}) | {ok} | {w['search_ms']['p50']} / {w['search_ms']['p95']} ms | "
                    f"{w['search_dense_ms']['p50']} / {w['search_lexical_ms']['p50']} ms | "
                    f"{w['search_cpu_ms']['p50']} ms | {w.get('load_average')} | "
                    f"{c['cli_search_no_validate']['p50']:.0f} ms |")
        if c.get("engine_warm_up"):
            up = c["engine_warm_up"]
            warm_ups.append(f"p50 {up['p50'] / 1000:.1f} s (n={up['n']}) at {int(size):,} chunks")
    if not rows:
        return ""
    return ("\n### Through the resident engine\n\n"
            f"`python -m codevouch_bench.search --sizes 1000000 --out FILE` (FILE copied to "
            f"bench/results/bench-search-1m-engine.json; code at {d.get('code', '?')}), measured from {m.get('date')} "
            f"(load average {m.get('load_avg_1m_at_start')} at its start; 2 cores shared with other "
            "engineers' work at times), a store filled again by the same method: `codevouch search` as a new "
            "process, the engine not running (the call starts it) and warm. Beside it, the same run's warm "
            "in-process search and cold in-process CLI call: the load of that run moves all of them alike (compare "
            "the idle run above).\n\n"
            "| chunks | engine: first call p50 | engine warm: p50 / p95 | target 100 / 150 ms | warm in-process search "
            "p50 / p95 (this run) | dense only / lexical only p50 | its CPU p50 | load avg (1 min) | cold CLI in-process "
            "p50 |\n"
            "|---|---|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n"
            + (("\nThe warm calls start once the engine has warmed up (it searches the starting call's "
                "repository once after it listens, loading the store's HNSW graph; docs/ENGINE.md, \"The first "
                "call\"): the warm-up took " + "; ".join(warm_ups) + ". A call that comes sooner waits for the rest "
                "of it.\n") if warm_ups else "")
            + "".join(f"\n- {note}\n" for note in d.get("notes", [])))
