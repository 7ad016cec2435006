"""The resident engine: CLI calls answered by a warm engine against the same calls in-process.

    python -m codevouch_bench.engine --out bench/results/bench-engine.json [--repo PATH] [--quick]

On a modest real repository (a clone of codevouch's own, fake embedder: no model load, so the
figures are the CLI's own cost), four figures, wall time of whole `codevouch` processes:

- `search` in-process (CODEVOUCH_SERVER=off), p50/p95, and the import floor beside it;
- `search` with the engine not running (the call starts it, then it answers);
- `search` with the engine warm, p50/p95;
- 50 mixed agent-like calls (search, validate, context, check-refs) with a file edited before
  every fifth call: total wall time, engine against in-process.

Nothing is asserted: the machine's load (recorded) moves every figure.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from codevouch_bench.lib.common import PY, REPO_ROOT, log, machine, summary, write_json

QUERIES = ["cancel the build when the lock is held", "validate a snippet against the working tree",
           "socket path too long", "token budget of a context pack", "escape control characters",
           "rename detection in a diff", "usage records and index health", "overlay of changed files"]


def _cli(args: list[str], cwd: Path, env: dict[str, str], stdin: str | None = None) -> float:
    start = time.perf_counter()
    done = subprocess.run([PY, "-m", "codevouch", *args], cwd=cwd, env=env, input=stdin, text=True,
                          capture_output=True)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 3):
        raise RuntimeError(f"codevouch {' '.join(args)} exited {done.returncode}: {done.stderr[-1000:]}")
    return elapsed


def _floor(env: dict[str, str], repeats: int) -> dict[str, Any]:
    out = {}
    for name, code in (("python_startup", "pass"), ("import_chromadb", "import chromadb")):
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            subprocess.run([PY, "-c", code], env=env, check=True, capture_output=True)
            times.append(time.perf_counter() - start)
        out[name] = summary(times)
    return out


def _stop(cwd: Path, env: dict[str, str]) -> None:
    subprocess.run([PY, "-m", "codevouch", "serve", "--stop"], cwd=cwd, env=env, capture_output=True)


def _mixed(repo: Path, env: dict[str, str], calls: int) -> float:
    """`calls` agent-like calls with an edit before every fifth; total wall seconds."""
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    # Not a file of the package itself: the CLI imports the clone's `codevouch/` (the current
    # directory is first on sys.path), and an edit there is a new version of codevouch.
    target = repo / "tests" / "gitrepo.py"
    original = target.read_text()
    snippet = json.dumps({"path": "tests/gitrepo.py", "commit": head, "start_line": 1, "end_line": 5})
    answer = "`Repo.commit` in tests/gitrepo.py:1-20 and `Repo.write` too; see codevouch/api.py:10.\n"
    total = 0.0
    try:
        for n in range(calls):
            if n % 5 == 0:
                target.write_text(original + f"\n\ndef added_{n}(text):\n    return text.strip()\n")
            kind = n % 4
            if kind == 0:
                total += _cli(["search", QUERIES[n % len(QUERIES)]], repo, env)
            elif kind == 1:
                total += _cli(["validate", "-"], repo, env, snippet + "\n")
            elif kind == 2:
                total += _cli(["context", QUERIES[n % len(QUERIES)], "--budget", "2000"], repo, env)
            else:
                total += _cli(["check-refs", "-"], repo, env, answer)
    finally:
        target.write_text(original)
    return total


def run(repo_src: Path, work: Path, quick: bool) -> dict[str, Any]:
    repeats = 5 if quick else 20
    work.mkdir(parents=True, exist_ok=True)
    repo = work / "repo"
    if not repo.exists():
        subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(repo_src), str(repo)], check=True)
    index = work / "index"
    runtime = Path(tempfile.mkdtemp(prefix="cvb-", dir="/tmp"))
    os.chmod(runtime, 0o700)
    base = {k: v for k, v in os.environ.items() if k != "CI"}
    base.update({"CODEVOUCH_INDEX": str(index), "XDG_RUNTIME_DIR": str(runtime), "CODEVOUCH_NO_RECORD": "1"})
    off, on = {**base, "CODEVOUCH_SERVER": "off"}, {**base, "CODEVOUCH_SERVER": "on"}
    try:
        log("engine: building the index (fake embedder)")
        subprocess.run([PY, "-m", "codevouch", "index", "build", "--embedder", "fake-bow-64"], cwd=repo, env=off,
                       check=True, capture_output=True)
        chunks = json.loads(subprocess.run([PY, "-m", "codevouch", "index", "status", "--json"], cwd=repo, env=off,
                                           check=True, capture_output=True, text=True).stdout)["branches"][0]
        floor = _floor(off, repeats)
        _cli(["search", QUERIES[0]], repo, off)            # the overlay cache and the page cache warm
        log("engine: in-process searches")
        inprocess = [_cli(["search", QUERIES[n % len(QUERIES)]], repo, off) for n in range(repeats)]
        log("engine: first calls (no engine running)")
        first = []
        for _ in range(max(3, repeats // 4)):
            _stop(repo, on)
            first.append(_cli(["search", QUERIES[1]], repo, on))
        log("engine: warm searches")
        warm = [_cli(["search", QUERIES[n % len(QUERIES)]], repo, on) for n in range(repeats * 2)]
        calls = 20 if quick else 50
        log(f"engine: {calls} mixed calls, in-process then engine")
        mixed_off = _mixed(repo, off, calls)
        mixed_on = _mixed(repo, on, calls)
    finally:
        _stop(repo, on)
        shutil.rmtree(runtime, ignore_errors=True)
    return {
        "machine": machine(), "load_avg_1m_at_end": round(os.getloadavg()[0], 2),
        "corpus": {"repo": "codevouch (this repository, a clone)", "chunks_by_kind": chunks["chunks_by_kind"],
                   "files_by_kind": chunks["files_by_kind"], "embedder": "fake-bow-64"},
        "floor_ms": floor,
        "search_in_process_ms": summary(inprocess),
        "search_first_call_no_engine_ms": summary(first),
        "search_engine_warm_ms": summary(warm),
        "mixed_calls": {"calls": calls, "edit_every": 5, "in_process_s": round(mixed_off, 2),
                        "engine_s": round(mixed_on, 2), "speedup": round(mixed_off / mixed_on, 2)},
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--repo", type=Path, default=REPO_ROOT)
    p.add_argument("--work", type=Path, default=REPO_ROOT / ".bench-cache" / "engine")
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()
    result = run(args.repo, args.work, args.quick)
    write_json(args.out, result)
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
