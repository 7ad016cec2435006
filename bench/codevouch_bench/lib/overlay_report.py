"""The "Working-tree overlay" section of docs/BENCHMARKS.md, from bench/results/bench-overlay.json (what
codevouch_bench.overlay writes; rendered by the runner (python -m codevouch_bench) with the other figures)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from codevouch_bench.lib.common import RESULTS as RESULTS_DIR
from codevouch_bench.lib.common import read_json_if_exists

RESULTS = RESULTS_DIR / "bench-overlay.json"
MODES = (("no_overlay", "no overlay"), ("overlay", "overlay"), ("rebuilt", "rebuilt"))


def _cell(s: dict[str, Any]) -> str:
    if not s.get("queries"):
        return "–"
    return f"{s['mrr@10']:.3f} / {s['recall@10']:.3f}"


def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}×" if a is not None and b else "–"


def headline(path: Path = RESULTS) -> list[list[Any]]:
    """The headline table's row for the overlay, when it was run."""
    data = read_json_if_exists(path)
    if data is None:
        return []
    new = {mode: data["overall"][mode]["new"]["mrr@10"] for mode, _ in MODES}
    ratios = [r["latency_ms"]["warm2_p50"] / r["latency_ms"]["plain_p50"] for r in data["pairs"]
              if r["latency_ms"].get("warm2_p50") and r["latency_ms"].get("plain_p50")]
    every = data["overall"]["overlay"]["all"]["mrr@10"] / data["overall"]["rebuilt"]["all"]["mrr@10"]
    return [["code written after the build (working-tree overlay): new functions' MRR@10, no overlay / overlay / "
             "rebuilt; warm search ÷ plain search",
             f"{new['no_overlay']} / {new['overlay']} / {new['rebuilt']}; {min(ratios):.2f}-{max(ratios):.2f}×",
             f"all queries overlay ÷ rebuilt {every:.2f}×; {len(data['pairs'])} pairs, "
             f"{data['overall']['overlay']['all']['queries']} queries; `python -m codevouch_bench.overlay`"]]


def section(path: Path = RESULTS) -> str:
    data = read_json_if_exists(path)
    if data is None:
        return ""
    rows = data["pairs"]
    m = data["machine"]
    out = ["\n## Working-tree overlay: what changed since the build, searched live\n",
           "Rerun: `python -m codevouch_bench.overlay` (writes bench/results/bench-overlay.json).\n",
           f"`{data.get('command', 'python -m codevouch_bench.overlay')}` at {m.get('date')} (load average "
           f"{m.get('load_avg_1m_at_start')} at its start; a 2-core machine shared with other work, so latencies are "
           f"noisy and the ratios compare runs of the same minutes), embedder `{data['embedder']}`. Per pair: OLD "
           "committed and indexed, the working tree set to NEW and left uncommitted; queries are the first "
           "doc-comment sentence of each function new or changed since OLD, doc comments blanked in both versions; "
           "a hit counts when the code it hands over as current overlaps the function in the working tree (ground "
           "truth from the benchmark's own parsers: Python's `ast`, a tree-sitter walk for the other languages). "
           "Files changed: changed, added or deleted, of the files at NEW. Cells: MRR@10 / R@10.\n",
           "| pair | files changed | queries (new) | new: no overlay | new: overlay | new: rebuilt | changed: no "
           "overlay | changed: overlay | changed: rebuilt | all: overlay ÷ rebuilt (MRR) |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in [*rows, {"pair": "**all**", "scores": data["overall"], "overall": True}]:
        s = r["scores"]
        ratio = _ratio(s["overlay"]["all"].get("mrr@10"), s["rebuilt"]["all"].get("mrr@10"))
        if r.get("overall"):
            meta = (f"{sum(x['changed_files'] for x in rows)} | {sum(x['queries'] for x in rows)} "
                    f"({sum(x['new_functions'] for x in rows)})")
        else:
            meta = (f"{r['changed_files']} of {r['files_new']} ({r['repo']} `{r['subdir']}` "
                    f"{r['old'][:8]}→{r['new'][:8]}) | {r['queries']} ({r['new_functions']})")
        out.append(f"| {r['pair']} | {meta} | " + " | ".join(_cell(s[mode][part]) for part in ("new", "changed")
                                                             for mode, _ in MODES) + f" | {ratio} |")
    out += ["", "| pair | chunks at OLD | overlay chunks | embedded by the first query | embedded in all | first query "
            "ms | first pass p50 ms | warm p50 / p95 ms | plain search on the clean rebuilt tree p50 / p95 ms | "
            "warm ÷ plain (p50 / p95) |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lat, ov = r["latency_ms"], r["overlay"]
        out.append(f"| {r['pair']} | {r['chunks_old']} | {ov['last'].get('chunks', '–')} | {ov['first_query_embedded']} | "
                   f"{ov['embedded_total']} | {lat['first']} | {lat['warm_p50']} | {lat.get('warm2_p50', '–')} / "
                   f"{lat.get('warm2_p95', '–')} | {lat['plain_p50']} / {lat.get('plain_p95', '–')} | "
                   f"{_ratio(lat.get('warm2_p50'), lat['plain_p50'])} / {_ratio(lat.get('warm2_p95'), lat.get('plain_p95'))} |")
    if data.get("notes"):
        out += ["", *[f"- {n}" for n in data["notes"]]]
    return "\n".join(out) + "\n"


FIRST_RESULTS = RESULTS.with_name("bench-overlay-first.json")
# The same pair after a resident engine's work between calls (`--background`).
BACKGROUND_RESULTS = RESULTS.with_name("bench-overlay-background.json")


def first_section(path: Path = FIRST_RESULTS) -> str:
    """The first query after a large change: every query ranked as if it were the first (a cold
    overlay each: what one call's time budget embeds, new definitions first, and stand-in vectors
    for changed definitions), against a rebuild; and cold CLI searches' wall time."""
    data = read_json_if_exists(path)
    if data is None:
        return ""
    m = data["machine"]
    out = ["\n## The first query after a large change\n",
           "Rerun: `python -m codevouch_bench.overlay --only rxjs --first --out bench/results/bench-overlay-first.json`\n",
           f"`{data['command']}` at {m.get('date')} (load average {m.get('load_avg_1m_at_start')} at its start, on "
           f"{m.get('cores')} cores shared with other engineers' builds and tests: the latencies are noisy), embedder "
           f"`{data['embedder']}`. As the overlay figure above, but each query is also run as the first search "
           "after the change: every cache emptied (`codevouch.clear_caches()`, the overlay cache file removed), so "
           "it ranks with what one call's time budget embeds (new definitions first) and, for the changed "
           "definitions it did not embed, their indexed versions' vectors (stand-ins). Cells: MRR@10 / R@10; the "
           "target is first ÷ rebuilt >= 0.97 on changed functions, and <= 3 s for the first call.\n",
           "| pair | files changed | overlay chunks | queries (changed) | changed: no overlay | changed: first query | "
           "changed: rebuilt | first ÷ rebuilt (changed, MRR) | all: first query | all: rebuilt | first query, in "
           "process, p50 / p95 ms (of which the overlay's derive, p50) | first `codevouch search` CLI call, wall s "
           "(its derive) | the same with `--no-overlay`, wall s |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in data["pairs"]:
        s, first = r["scores"], r.get("first_query") or {}
        changed = sum(1 for k in r["kinds"] if k == "changed")
        out.append(f"| {r['pair']} | {r['changed_files']} of {r['files_new']} | {r['overlay']['last'].get('chunks', '–')}"
                   f" | {r['queries']} ({changed}) | {_cell(s['no_overlay']['changed'])} | {_cell(s['first']['changed'])}"
                   f" | {_cell(s['rebuilt']['changed'])} | "
                   f"{_ratio(s['first']['changed'].get('mrr@10'), s['rebuilt']['changed'].get('mrr@10'))} | "
                   f"{_cell(s['first']['all'])} | {_cell(s['rebuilt']['all'])} | {first.get('in_process_p50_ms')} / "
                   f"{first.get('in_process_p95_ms')} ({first.get('derive_p50_ms', '–')}) | "
                   f"{_list(first.get('cli_wall_s'))} ({_list(first.get('cli_derive_s'))}) | "
                   f"{_list(first.get('cli_no_overlay_wall_s'))} |")
    if data.get("notes"):
        out += ["", *[f"- {n}" for n in data["notes"]]]
    return "\n".join(out) + "\n" + background_section() + paced_section()


def background_section(path: Path = BACKGROUND_RESULTS) -> str:
    """After the first search of a big change, the resident engine embeds the rest of the overlay
    between calls: how long that took, and the ranking of every query after it, against a rebuild."""
    data = read_json_if_exists(path)
    if data is None:
        return ""
    m = data["machine"]
    out = ["\n### Once the background embedding is done\n",
           "Rerun: `python -m codevouch_bench.overlay --only rxjs --background --out "
           "bench/results/bench-overlay-background.json`\n",
           f"`{data['command']}` at {m.get('date')} (load average {m.get('load_avg_1m_at_start')} at its start, "
           f"{m.get('cores')} cores), embedder `{data['embedder']}`. After one first search of the change (every "
           "cache emptied), the work a resident engine does between calls (`Resident.embed_rest`, the engine's and "
           "the MCP server's own code) is run to its end and timed; then every query is ranked, as the calls after "
           "it are. Cells: MRR@10 / R@10; the target is after ÷ rebuilt >= 0.97 overall.\n",
           "| pair | files changed | queries (changed) | all: after the background embedding | all: rebuilt | after ÷ "
           "rebuilt (all, MRR) | changed: after | changed: rebuilt | first call s | texts embedded in the background "
           "| background embedding s |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in data["pairs"]:
        s, bg = r["scores"], r["background"]
        changed = sum(1 for k in r["kinds"] if k == "changed")
        out.append(f"| {r['pair']} | {r['changed_files']} of {r['files_new']} | {r['queries']} ({changed}) | "
                   f"{_cell(s['background']['all'])} | {_cell(s['rebuilt']['all'])} | "
                   f"{_ratio(s['background']['all'].get('mrr@10'), s['rebuilt']['all'].get('mrr@10'))} | "
                   f"{_cell(s['background']['changed'])} | {_cell(s['rebuilt']['changed'])} | {bg['first_call_s']} | "
                   f"{bg['embedded_in_background']} | {bg['background_s']} |")
    return "\n".join(out) + "\n"


# Each query asked once, with a pause between calls, on loaded cores (`--paced SECONDS`).
PACED_RESULTS = RESULTS.with_name("bench-overlay-paced.json")


def _mrr(ranks: list[int | None]) -> float | None:
    return round(sum(1 / r for r in ranks if r) / len(ranks), 3) if ranks else None


def _from_fifth(row: dict[str, Any], mode: str, kind: str) -> float | None:
    """MRR@10 of the `kind` queries from the fifth query of the session on."""
    return _mrr([r for n, (r, k) in enumerate(zip(row["ranks"][mode], row["kinds"])) if n >= 4 and k == kind])


def paced_section(path: Path = PACED_RESULTS) -> str:
    """A library user's session after a big change, on loaded cores: each query once, in order,
    with a pause between calls, against a rebuild."""
    data = read_json_if_exists(path)
    if data is None:
        return ""
    m = data["machine"]
    out = ["\n### A library session after a big change, on a loaded machine\n",
           "Rerun: `python -m codevouch_bench.overlay --only httpx flask --paced 3 --hogs 3 --out "
           "bench/results/bench-overlay-paced.json`\n",
           f"`{data['command']}` at {m.get('date')} (load average {m.get('load_avg_1m_at_start')} at its start, "
           f"{m.get('cores')} cores), embedder `{data['embedder']}`. Every cache emptied, then each query asked once, "
           "in order, through one library `Index` (its default: the rest of the overlay embedded on its own thread "
           "between calls), with a pause between calls (an agent reading the answer) while busy processes load the "
           "cores (another job on the machine). Targets: MRR@10 >= 0.97x a rebuild on changed code and overall; "
           "new functions >= 0.9x a rebuild from the fifth query on.\n",
           "| pair | queries (changed / new) | pause s | busy processes | load avg p50 (min) | all: session ÷ rebuilt | "
           "changed: session ÷ rebuilt | new from the fifth query: session ÷ rebuilt | first call s | call p50 / p95 ms |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in data["pairs"]:
        s, pc = r["scores"], r["paced"]
        changed = sum(1 for k in r["kinds"] if k == "changed")
        new_paced, new_rebuilt = _from_fifth(r, "paced", "new"), _from_fifth(r, "rebuilt", "new")
        out.append(f"| {r['pair']} | {r['queries']} ({changed} / {r['queries'] - changed}) | {pc['pause_s']:g} | "
                   f"{pc['hogs']} | {pc['load_p50']} ({pc['load_min']}) | "
                   f"{_cell(s['paced']['all'])} ÷ {_cell(s['rebuilt']['all'])} = "
                   f"{_ratio(s['paced']['all'].get('mrr@10'), s['rebuilt']['all'].get('mrr@10'))} | "
                   f"{_ratio(s['paced']['changed'].get('mrr@10'), s['rebuilt']['changed'].get('mrr@10'))} | "
                   f"{new_paced} ÷ {new_rebuilt} = {_ratio(new_paced, new_rebuilt)} | {pc['first_call_s']} | "
                   f"{pc['call_p50_ms']} / {pc['call_p95_ms']} |")
    overall = data.get("overall", {})
    if "paced" in overall:
        o, b = overall["paced"], overall["rebuilt"]
        out.append(f"\nPooled: all {_ratio(o['all'].get('mrr@10'), b['all'].get('mrr@10'))}, changed "
                   f"{_ratio(o['changed'].get('mrr@10'), b['changed'].get('mrr@10'))}, new "
                   f"{_ratio(o['new'].get('mrr@10'), b['new'].get('mrr@10'))} (MRR@10, session ÷ rebuilt).")
    return "\n".join(out) + "\n"


def _list(values: list[float] | None) -> str:
    return ", ".join(f"{v:g}" for v in values) if values else "–"
