"""Latency of `codevouch mcp` as an agent sees it: the server as a subprocess, the SDK's stdio client.

    python -m codevouch_bench.mcp --repo PATH --index DIR --query "..." [--answer FILE] [--rounds 5]

Reports the time to start and initialize the server, then per tool the first call and the
median of the following ones (milliseconds). The index must already be built (any model).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters


async def timed(client: Client, tool: str, args: dict[str, Any], rounds: int) -> dict[str, Any]:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        result = await client.call_tool(tool, args)
        times.append((time.perf_counter() - started) * 1000)
        if result.is_error:
            raise SystemExit(f"{tool} failed: {result.content}")
    rest = times[1:] or times
    return {"first_ms": round(times[0], 1), "median_ms": round(statistics.median(rest), 1), "calls": rounds}


async def main(args: argparse.Namespace) -> dict[str, Any]:
    env = {k: os.environ[k] for k in ("PYTHONPATH", "HF_HUB_OFFLINE") if k in os.environ}
    params = StdioServerParameters(command=sys.executable, env=env, args=[
        "-m", "codevouch", "mcp", "--repo", str(args.repo), "--index", str(args.index)])
    started = time.perf_counter()
    async with Client(params, mode="legacy") as client:
        connected = (time.perf_counter() - started) * 1000
        out: dict[str, Any] = {"connect_ms": round(connected, 1)}
        out["status"] = await timed(client, "status", {}, args.rounds)
        for mode in ("hybrid", "lexical"):
            out[f"search_{mode}"] = await timed(client, "search", {"query": args.query, "k": 10, "mode": mode},
                                                args.rounds)
        out["context"] = await timed(client, "context", {"query": args.query, "k": 10}, args.rounds)
        if args.answer:
            out["check_refs"] = await timed(client, "check_refs", {"text": args.answer.read_text()}, args.rounds)
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--query", required=True)
    parser.add_argument("--answer", type=Path, help="An answer (markdown or patch) for check_refs.")
    parser.add_argument("--rounds", type=int, default=5)
    print(json.dumps(anyio.run(main, parser.parse_args()), indent=2))
