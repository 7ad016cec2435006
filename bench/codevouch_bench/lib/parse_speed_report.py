"""The "Parse against embed" section of docs/BENCHMARKS.md, from bench/results/bench-parse-speed.json
(what codevouch_bench.parse_speed writes)."""
from __future__ import annotations

from pathlib import Path

from codevouch_bench.lib.common import RESULTS as RESULTS_DIR
from codevouch_bench.lib.common import read_json_if_exists

RESULTS = RESULTS_DIR / "bench-parse-speed.json"


def section(path: Path = RESULTS) -> str:
    data = read_json_if_exists(path)
    if data is None:
        return ""
    m = data["machine"]
    rows = [f"| {r['language']} | {r['label']} | {r['files']} | {r['mb']:.2f} | {r['chunks']} | {r['chunks_per_mb']:.0f} | "
            f"{r['chunk_cpu_s_per_mb']:.2f} | {r['embed_cpu_s_per_mb']:.1f} | {100 * r['chunk_share']:.1f}% |"
            for r in data["rows"]]
    worst = max(data["rows"], key=lambda r: r["chunk_share"]) if data["rows"] else None
    return "\n".join([
        "\n## Parse against embed: chunking's share of a build, per language\n",
        f"Rerun: `{data['command']}` (writes bench/results/bench-parse-speed.json).\n",
        f"At {m.get('date')} (load average {m.get('load_avg_1m_at_start')} at its start, {m.get('cores')} cores), "
        f"embedder `{data['embedder']}`. Each row: the files codevouch reads as that language in a pinned release, "
        "chunked as a build chunks them (the model's token counter, the build's budget), and a seeded sample of "
        f"{data['sample']} of their chunks embedded as a whole build embeds (torch, in batches); CPU seconds "
        "(`time.process_time`, torch's threads counted), as the cores are shared. Embedding per MB is the "
        "sample's CPU per chunk times the language's chunks per MB.\n",
        "| language | repository | files | MB | chunks | chunks per MB | chunking CPU s/MB | embedding CPU s/MB | "
        "chunking's share |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        (f"Chunking is {100 * data['chunk_share_median']:.1f}% of the two in the median language and "
         f"{100 * data['chunk_share_max']:.1f}% at most ({worst['language']}): the parse is not a build's "
         "bottleneck in any language; embedding is." if worst is not None else ""),
        "JavaScript and Java have no pinned repository among the bench's mirrors and are not in the table.",
    ]) + "\n"
