"""The "Resident engine" section of docs/BENCHMARKS.md, from bench/results/bench-engine.json (what
codevouch_bench.engine writes; rendered by the runner with the other figures)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from codevouch_bench.lib.common import RESULTS as RESULTS_DIR
from codevouch_bench.lib.common import read_json_if_exists

RESULTS = RESULTS_DIR / "bench-engine.json"


def _ms(s: dict[str, Any]) -> str:
    return f"{s['p50']:.0f} / {s['p95']:.0f} ms (n={s['n']})"


def section(path: Path = RESULTS) -> str:
    data = read_json_if_exists(path)
    if data is None:
        return ""
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
    out.append("\nNot measured here: the 45,000-chunk SQLAlchemy index and the 1,000,000-chunk store (too heavy "
               "for this shared 2-core machine in the time available), and the real model's figures (the fake "
               "embedder keeps the model out of both paths).\n")
    return "\n".join(out) + "\n"
