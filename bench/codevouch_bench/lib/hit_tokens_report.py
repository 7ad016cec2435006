"""The "Tokens per search hit" section of docs/BENCHMARKS.md, from bench/results/bench-hit-tokens.json
(what codevouch_bench.hit_tokens writes; rendered by the runner with the other figures)."""
from __future__ import annotations

from pathlib import Path

from codevouch_bench.lib.common import RESULTS as RESULTS_DIR
from codevouch_bench.lib.common import read_json_if_exists

RESULTS = RESULTS_DIR / "bench-hit-tokens.json"

WHAT = {
    "json_before": "`search --json` before: `text`, `code` and `current.text` each the code",
    "json": "`search --json --max-chars 0`: each piece of code once",
    "json_capped": "`search --json` (the default bound on a hit's code)",
    "json_agent": "`search --json --fields path,start_line,end_line,symbol,verdict,citation,code`",
    "mcp_text_before": "MCP search's text content before: its answer's JSON",
    "mcp_text": "MCP search's text content now: each hit written once",
    "text": "`search` (text output)",
}


def section(path: Path = RESULTS) -> str:
    data = read_json_if_exists(path)
    if data is None:
        return ""
    per, largest = data["tokens_per_hit"], data["largest_hit"]
    rows = [f"| {WHAT.get(name, name)} | {n} | {largest.get(name)} |" for name, n in per.items()]
    return "\n".join([
        "\n## Tokens per search hit\n",
        "Rerun: `python -m codevouch_bench.hit_tokens --repo . --index DIR` on a built index (writes "
        "bench/results/bench-hit-tokens.json).\n",
        f"`{data['command']}`: {data['queries']} queries (names and sentences), k={data['k']}, {data['hits']} hits "
        f"of validated searches, counted in cl100k_base tokens (as context packs count them) per hit, for each form "
        f"an agent may get. The index: {data.get('index_note', 'this repository')}. The code of a hit is bounded at "
        f"{data['hit_chars']:,} characters by default (docs/SEARCH.md).\n",
        "| form | tokens per hit | largest hit |", "|---|---|---|", *rows,
        f"\nThe JSON form before carried {data['json_before_over_json']}x the tokens of the form now; the rest of "
        "a hit's JSON is its record and check (ids, hashes, citation), which `--fields` leaves out.\n"])
