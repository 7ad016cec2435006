"""The "Search encoder" section of docs/BENCHMARKS.md, from bench/results/bench-encoder.json (what
codevouch_bench.encoder writes; rendered by the runner with the other figures)."""
from __future__ import annotations

from pathlib import Path

from codevouch_bench.lib.common import RESULTS as RESULTS_DIR
from codevouch_bench.lib.common import read_json_if_exists

RESULTS = RESULTS_DIR / "bench-encoder.json"


def section(path: Path = RESULTS) -> str:
    data = read_json_if_exists(path)
    if data is None:
        return ""
    m = data["machine"]
    langs = ", ".join(f"{lang} {v['min_cosine']:.6f}" for lang, v in data["by_language"].items())
    return "\n".join([
        "\n## Search encoder: NumPy MiniLM against sentence-transformers\n",
        "Rerun: `python -m codevouch_bench.encoder` (writes bench/results/bench-encoder.json).\n",
        f"`{data['command']}` at {m.get('date')} (load average {m.get('load_avg_1m_at_start')} at its start, "
        f"{m.get('cores')} cores shared with other work: the speeds are noisy). {data['chunks']} real chunks "
        f"(mean {data['mean_tokens']} tokens), chunked and embedded as a build does, from four repositories of "
        "four languages; each embedded by the NumPy pass a search uses (queries and the working-tree overlay's "
        "new chunks) and by sentence-transformers, as a build does.\n",
        "| figure | value |", "|---|---|",
        f"| cosine between the two, min / 1st percentile / median (six decimals) | {data['min_cosine']:.6f} / "
        f"{data['p01_cosine']:.6f} / {data['median_cosine']:.6f} (target: >= 0.9999 each; {data['below_target']} below) |",
        f"| min cosine per language | {langs} |",
        f"| NumPy, one text at a time, one BLAS thread | {data['numpy_chunks_per_s']} chunks/s "
        f"({data['numpy_ms_per_chunk']} ms a chunk): the overlay's time budget, 0.5 s a search, embeds about "
        f"{max(1, round(data['numpy_chunks_per_s'] / 2))} |",
        f"| torch, the build's batches | {data['torch_chunks_per_s']} chunks/s |",
    ]) + "\n"
