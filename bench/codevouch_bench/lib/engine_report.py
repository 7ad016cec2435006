"""The "Resident engine" section of docs/BENCHMARKS.md, from bench/results/bench-engine.json (what
codevouch_bench.engine writes; rendered by the runner with the other figures)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from codevouch_bench.lib.common import RESULTS as RESULTS_DIR
from codevouch_bench.lib.common import read_json_if_exists
from codevouch_bench.lib.first_call_report import section as first_call_section

RESULTS = RESULTS_DIR / "bench-engine.json"
# The paired comparison against the codevouch before a change (codevouch_bench.engine_large --before
# DIR --compare-only), rendered beside the large figure.
COMPARED = RESULTS_DIR / "bench-engine-large-ab.json"
# The first CLI search after a one-file edit, real model, no engine (codevouch_bench.edit_first).
EDIT_FIRST = RESULTS_DIR / "bench-edit-first.json"
EDIT_FIRST_JS = RESULTS_DIR / "bench-edit-first-js.json"


def _ms(s: dict[str, Any]) -> str:
    return f"{s['p50']:.0f} / {s['p95']:.0f} ms (n={s['n']})"


def section(path: Path = RESULTS, large: dict[str, Any] | None = None, compared: Path = COMPARED) -> str:
    data = read_json_if_exists(path)
    if data is None:
        return large_section(large, compared)
    m, c, mixed = data["machine"], data["corpus"], data["mixed_calls"]
    chunks = sum(c["chunks_by_kind"].values())
    floor = data["floor_ms"]
    rows = [
        ("bare `python -c pass`", _ms(floor["python_startup"])),
        ("bare `python -c 'import chromadb'`", _ms(floor["import_chromadb"])),
        ("`codevouch search`, in-process (`CODEVOUCH_SERVER=off`)", _ms(data["search_in_process_ms"])),
        ("`codevouch search`, engine not running (the call starts it)", _ms(data["search_first_call_no_engine_ms"])),
        ("`codevouch search`, engine warm", _ms(data["search_engine_warm_ms"])),
        (f"{mixed['calls']} mixed calls (search, validate, context, check-refs; an edit before every "
         f"{mixed['edit_every']}th), total", f"in-process {mixed['in_process_s']} s, engine {mixed['engine_s']} s "
                                           f"({mixed['speedup']}× faster)"),
    ]
    out = ["\n## Resident engine: CLI calls answered warm\n",
           "Rerun: `python -m codevouch_bench.engine --out bench/results/bench-engine.json` "
           "(`--quick`: fewer repeats, 20 mixed calls).\n",
           f"At {m.get('date')}, load average {m.get('load_avg_1m_at_start')} at the start and "
           f"{data.get('load_avg_1m_at_end')} at the end, on a {m.get('cores')}-core machine shared with other "
           "work: every figure is wall time of a whole `codevouch` process, and the load moves all of them. "
           f"Corpus: {c['repo']}, {chunks} chunks, embedder `{c['embedder']}` (no model is loaded, so the "
           "figures are the CLI's own cost). Cells: p50 / p95.\n",
           "| call | wall |", "|---|---|"]
    out += [f"| {a} | {b} |" for a, b in rows]
    out.append("\nA warm call is a Python start (the `python -c pass` row), the client's few imports, one round trip "
               "and the engine's own work (git status for the overlay, the search, the validation): on an idle "
               "machine the start is ~20 ms, under this load it is the largest part, so the issue's targets "
               "(80 / 120 ms at 45k chunks) cannot be judged from these rows. The first call without an engine "
               "pays the same imports as an in-process call, in the engine instead (its figure came out below the "
               "in-process one in this run: 5 samples against 20, both dominated by importing the stack under load). "
               "The mixed calls are what an agent sees: each edit is seen by the next call (the overlay is derived "
               "from git per call, in the engine as in-process).\n")
    out.append("\nThe 45,000-chunk repository and the first search after an edit with the real model: below; the "
               "1,000,000-chunk store through the engine: \"Search at a million chunks\", \"Through the resident engine\".\n")
    return "\n".join(out) + "\n" + large_section(large, compared) + first_call_section() + edit_first_section()


def edit_first_section(paths: tuple[Path, ...] = (EDIT_FIRST, EDIT_FIRST_JS)) -> str:
    """The first CLI search after editing one file, real model, no engine: codevouch's own
    repository (a Python file) and, where it was run, a JavaScript one (`--url ... --edit`)."""
    out = ["\n### The first search after an edit, real model, no engine\n",
           "Rerun: `python -m codevouch_bench.edit_first --out bench/results/bench-edit-first.json`; on another "
           "repository, `--url URL --commit SHA --edit PATH` (bench/results/bench-edit-first-js.json: preact, "
           "a JavaScript file).\n"]
    runs = [data for data in map(read_json_if_exists, paths) if data is not None]
    if not runs:
        out.append("Not run yet.\n")
        return "\n".join(out) + "\n"
    for data in runs:
        out.append(_edit_first_run(data))
    return "\n".join(out) + "\n"


def _edit_first_run(data: dict[str, Any]) -> str:
    out: list[str] = []
    m, c, rw, rc = data["machine"], data["corpus"], data["ratio_wall"], data["ratio_cpu"]
    chunks = sum(c["chunks_by_kind"].values())
    heavy = ", ".join(data["heavy_modules_imported"]) or "neither torch nor sentence-transformers"
    out.append(f"`{data.get('command')}` at {m.get('date')}, load average {data['load_avg_1m']['start']} at the "
               f"start and {data['load_avg_1m']['end']} at the end, on {m.get('cores')} cores. Corpus: {c['repo']} "
               f"at {str(c['commit'])[:10]}, {chunks} chunks, model `{c['model']}`; query \"{c['query']}\". "
               f"Whole `codevouch search` processes, `CODEVOUCH_SERVER=off`, alternated pair by pair: edited = "
               f"`{c['edited']}` restored and new code appended (new text each time: no cache holds its "
               f"vector), clean = the file restored. The edited call's note: \"{data['overlay_note']}\". Under "
               f"`python -X importtime` an edited call imported: {heavy}.\n")
    out += ["| call | wall p50 / p95 | CPU p50 / p95 |", "|---|---|---|",
            f"| first search after the edit | {_ms(data['edited_wall_ms'])} | {_ms(data['edited_cpu_ms'])} |",
            f"| clean cold search | {_ms(data['clean_wall_ms'])} | {_ms(data['clean_cpu_ms'])} |",
            f"| edited ÷ clean, per pair (median, min-max) | {rw['median']} ({rw['min']}-{rw['max']}) | "
            f"{rc['median']} ({rc['min']}-{rc['max']}) |"]
    met = "met" if rw["median"] <= 1.3 else "not met"
    out.append(f"\nTarget: at most 1.3× a clean cold CLI search: {rw['median']}× by wall, {met}. Before the numpy "
               "encoder embedded the overlay, the same call imported torch (8-17 s on a loaded machine).\n")
    return "\n".join(out)


def _ratio(a: dict[str, Any], b: dict[str, Any]) -> str:
    return f"{a['p50'] / b['p50']:.2f}×"


def large_section(data: dict[str, Any] | None, compared: Path = COMPARED) -> str:
    """The engine on SQLAlchemy (~45k chunks): `python -m codevouch_bench --only engine_large`."""
    out = ["\n### The engine on a 45,000-chunk repository\n",
           "Rerun: `python -m codevouch_bench --only engine_large` (kept in bench/results/benchmarks.json, its run "
           "in `reruns`); the paired comparison with an older codevouch: `python -m codevouch_bench.engine_large "
           "--before DIR --compare-only --out bench/results/bench-engine-large-ab.json`.\n"]
    if not data or "error" in data or "skipped" in data:
        out.append("Not run yet.\n")
        return "\n".join(out) + "\n"
    m, c, mixed, floor = data["machine"], data["corpus"], data["mixed_calls"], data["floor_ms"]
    chunks = sum(c["chunks_by_kind"].values())
    loads = ", ".join(f"{k} {v}" for k, v in data.get("load_avg_1m_by_phase", {}).items())
    first, inproc, warm = (data["search_first_call_no_engine_ms"], data["search_in_process_ms"],
                           data["search_engine_warm_ms"])
    chroma = floor["import_chromadb"]
    rows = [
        ("bare `python -c pass`", _ms(floor["python_startup"]), "", ""),
        ("bare `python -c 'import chromadb'` (the floor: the fake embedder loads no encoder)", _ms(chroma), "", ""),
        ("`codevouch search`, in-process (`CODEVOUCH_SERVER=off`)", _ms(inproc), _ratio(inproc, chroma) + " the floor",
         "–"),
        ("`codevouch search`, engine not running (the call starts it)", _ms(first), _ratio(first, chroma) + " the floor",
         "≤ 1.3× the floor"),
        ("`codevouch search`, engine warm", _ms(warm), "", "≤ 80 / 120 ms"),
        (f"{mixed['calls']} mixed calls (search, validate, context, check-refs; an edit of `{c.get('edited')}` before "
         f"every {mixed['edit_every']}th), total", f"in-process {mixed['in_process_s']} s, engine {mixed['engine_s']} s",
         f"{mixed['speedup']}× faster", "–"),
    ]
    out.append(f"`{data.get('command')}` at {m.get('date')}, on {m.get('cores')} cores shared with other engineers' "
               f"work; 1-minute load average by phase: {loads}; at the end {data.get('load_avg_1m_at_end')}. "
               f"Corpus: {c['repo']} at {str(c.get('commit'))[:10]}, {chunks} chunks, embedder `{c['embedder']}` (no "
               "model: the CLI's own cost); queries: the first sentences of 8 of its docstrings. Wall time of whole "
               "processes, p50 / p95.\n")
    out += ["| call | wall | ratio | target |", "|---|---|---|---|"]
    out += [f"| {a} | {b} | {r} | {t} |" for a, b, r, t in rows]
    met = lambda ok: "met" if ok else "not met"  # noqa: E731
    out.append(f"\nTargets in this run: warm p50 / p95 {warm['p50']:.0f} / {warm['p95']:.0f} ms against 80 / 120: "
               f"{met(warm['p50'] <= 80 and warm['p95'] <= 120)}; first call {first['p50'] / chroma['p50']:.2f}× the floor "
               f"against 1.3×: {met(first['p50'] <= 1.3 * chroma['p50'])}. The reasons, measured apart on this machine "
               "(2026-12-03, load average 4-9):\n")
    out.append("- Warm: a call is about 80-90 ms of CPU in all: the client process ~60 ms (a bare `python -c pass` is "
               "~25 ms of it; its imports, the identity walk, the repository's pyproject.toml read for the off switch, "
               "one round trip), the engine ~20 ms per search at 45k chunks (cProfile of warm searches in one process: "
               "two git processes, rev-parse and status, ~6 ms; the vector query ~3 ms; the ledger's reads ~2 ms; the "
               "metadata guard's walk ~1.5 ms; ranking, validation and rendering the rest), and the two git children's "
               "own. On 2 cores at a load average of 6-10 each CPU millisecond costs 3-4 ms of wall time, which is "
               "the 190-300 ms here; the 80 ms target wants an idle machine, where the same CPU is ~90 ms of wall.\n")
    out.append("- First call and in-process: the floor is only the import; a search also opens the store (Chroma's "
               "client and its HNSW graph: the first query of a fresh client loads it, ~0.3 s at 45k chunks under this "
               "load, the count check after it 5 ms), imports codevouch's own stack (typer, numpy for the validator, "
               "tantivy: ~0.3 s), starts 5-7 git processes (the first-parent walk to the root commit that names the "
               "repository is ~60 ms of CPU on SQLAlchemy's 13,857 commits) and starts the engine's process beside "
               "it. By CPU, whole processes: a cold in-process search 1.21 s against `import chromadb` 0.66 s "
               "(1.85×) at a load average of 5-6.\n")
    ab = read_json_if_exists(compared)
    if ab is not None and "against_before" in ab:
        cmp = ab["against_before"]
        w, i = cmp["engine_warm"], cmp["in_process"]
        out.append(f"\nAgainst the codevouch before this change (`{ab.get('command')}` at {ab['machine'].get('date')}, "
                   f"load average {ab['machine'].get('load_avg_1m_at_start')} at its start, "
                   f"{ab.get('load_avg_1m_at_end')} at its end), the same queries alternated call by call, "
                   "this ÷ before per pair (median, min-max); bytecode as that shell had it (not written: every "
                   "process compiled codevouch's modules, both sides alike):\n")
        out += ["| call | this p50 / p95 | before p50 / p95 | ratio |", "|---|---|---|---|",
                f"| `codevouch search`, engine warm | {_ms(w['this_ms'])} | {_ms(w['before_ms'])} | "
                f"{w['ratio_median']} ({w['ratio_min']}-{w['ratio_max']}) |",
                f"| `codevouch search`, in-process | {_ms(i['this_ms'])} | {_ms(i['before_ms'])} | "
                f"{i['ratio_median']} ({i['ratio_min']}-{i['ratio_max']}) |"]
    return "\n".join(out) + "\n"
