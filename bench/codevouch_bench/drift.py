#!/usr/bin/env python
"""Drift speed: `Index.drift()` on a repository of --files files with --modified edited ones.

A temporary git repository of real Python files (the standard library, copied and cycled
to reach --files, as codevouch_bench.validate does) is
committed once and registered in a fresh index as the branch's indexed commit (only the
branch row: drift reads nothing else from the index). Then --modified files get edits that
touch definitions (a body line changed, a signature changed, a function added and one
removed), and `Index.drift()` is timed: the first call (tree-sitter grammars load) and the
median of --repeat warm calls. The target is <= 1 s for 1,000 files / 50 modified.

    python -m codevouch_bench.drift [--files 1000] [--modified 50] [--repeat 5] [--json PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import statistics
import tempfile
import time
from pathlib import Path

from codevouch import Index
from codevouch.store import BranchState, BuildChange, Ledger, collection_base, space_name
from codevouch.worktree.identity import identify
from codevouch_bench.lib.common import cpu_model
from codevouch_bench.validate import git, make_repo

SEED = 20261130
DEF = re.compile(r"^(\s*)def (\w+)\((.*)$", re.M)


def register(repo: Path, index_dir: Path) -> str:
    head = git(repo, "rev-parse", "HEAD").decode().strip()
    branch = git(repo, "symbolic-ref", "--short", "HEAD").decode().strip()
    ident = identify(repo)
    ledger = Ledger(index_dir)
    try:
        ledger.commit(BuildChange(state=BranchState(collection_base(ident.id, branch), str(ident.root), branch,
                                                    head, "2024-01-01T00:00:00Z", "2024-01-01T00:00:00Z",
                                                    "fake-bow-64", "{}", ident.id, ident.remote,
                                                    space_name(ident.id, "fake-bow-64"))))
    finally:
        ledger.close()
    return head


def edit(path: Path, rng: random.Random) -> None:
    """Change one function's body, one signature, drop one function's name, add one."""
    text = path.read_text("utf-8", "replace")
    defs = list(DEF.finditer(text))
    if len(defs) >= 3:
        a, b, c = rng.sample(defs, 3)
        repl = {a.start(): f"{a.group(1)}def {a.group(2)}({a.group(3)}\n{a.group(1)}    pass  # bench edit",
                b.start(): f"{b.group(1)}def {b.group(2)}(bench_extra, {b.group(3)}",
                c.start(): f"{c.group(1)}def {c.group(2)}_renamed({c.group(3)}"}
        out, last = [], 0
        for m in sorted((a, b, c), key=lambda m: m.start()):
            out += [text[last:m.start()], repl[m.start()]]
            last = m.end()
        text = "".join(out) + text[last:]
    path.write_text(text + "\n\ndef bench_added(x):\n    return x\n", "utf-8")


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--modified", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    rng = random.Random(SEED)
    with tempfile.TemporaryDirectory(prefix="cv-bench-drift-") as tmp:
        repo, index_dir = Path(tmp) / "repo", Path(tmp) / "index"
        repo.mkdir()
        make_repo(repo, args.files)
        register(repo, index_dir)
        py = sorted(p for p in repo.rglob("*.py") if ".git" not in p.parts)
        for path in rng.sample(py, min(args.modified, len(py))):
            edit(path, rng)
        idx = Index(repo, index_dir)
        t0 = time.perf_counter()
        report = idx.drift()
        first = time.perf_counter() - t0
        warm, cpu = [], []
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            idx.drift()
            warm.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
    result = {
        "machine": {"cpu": cpu_model(), "python": platform.python_version()},
        "files": args.files, "modified": args.modified,
        "first_call_s": round(first, 3), "warm_median_s": round(statistics.median(warm), 3),
        "warm_runs_s": [round(w, 3) for w in warm],
        # CPU time of this process (git children excluded): what a shared, loaded machine
        # cannot inflate the way it inflates wall time.
        "warm_cpu_median_s": round(statistics.median(cpu), 3),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "files_by_state": report.file_counts(), "definitions_by_state": report.definition_counts(),
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
