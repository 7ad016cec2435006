#!/usr/bin/env python
"""The git hooks' build after a one-file commit, on this repository: the wall time from `git
commit` to the hook's line in hooks.log, with no engine (the hook's process builds) and with a
warm engine running for the index (the hook's process hands it the build: engine/handoff.py).

This checkout's HEAD is cloned into WORK/repo and built once into WORK/index with the real model
(`--seed-index DIR` copies an index of this repository built before, so that the first build
embeds only what changed since; its ledger is copied with SQLite's backup, never mid-write).
`codevouch hooks install` then puts the hooks in; `--commits` times per mode, a comment line is
appended to one of the clone's benchmark modules and committed, and the time until the hook's
line is taken. The benchmark modules, not the codevouch package: in the clone, `python -m
codevouch` runs the clone's own package, and the engine's identity is a stat walk of it, so an
edit there would make every hook replace the engine (as an upgrade does).

    python -m codevouch_bench.hook_build --work /tmp/hook-build --seed-index ~/.local/share/codevouch
"""
from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from codevouch_bench.lib.common import PY, REPO_ROOT, log, machine, run_timed, write_json
from codevouch_bench.small_build import engine_builds, engine_running

HOOK_WAIT = 120.0      # seconds a commit's hook line may take before the figure fails


def prepare(work: Path, seed: Path | None) -> tuple[Path, Path, dict[str, Any]]:
    """The clone, its index (seeded, then built), and the build's summary line."""
    repo, index = work / "repo", work / "index"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", str(REPO_ROOT), str(repo)], check=True)
    if seed is not None:
        index.mkdir()
        for name in ("chroma", "lexical", "root-commits"):
            if (seed / name).is_dir():
                shutil.copytree(seed / name, index / name)
            elif (seed / name).is_file():
                shutil.copy2(seed / name, index / name)
        with sqlite3.connect(seed / "state.sqlite") as source, sqlite3.connect(index / "state.sqlite") as dest:
            source.backup(dest)
    env = {**os.environ, "CODEVOUCH_SERVER": "off", "HF_HUB_OFFLINE": "1"}
    seconds, done = run_timed([PY, "-m", "codevouch", "index", "build", "--index", str(index)], cwd=repo, env=env)
    log(f"hook_build: first build {seconds:.1f} s: {done.stdout.strip().splitlines()[0]}")
    head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.strip()
    return repo, index, {"repo": f"this repository at {head}", "first_build_seconds": round(seconds, 1),
                         "first_build": done.stdout.strip().splitlines()[0]}


def one_commit(repo: Path, log_path: Path, files: list[str], i: int, env: dict[str, str]) -> tuple[float, str]:
    """Commit a one-line change; seconds until the hook's line in hooks.log, and that line."""
    path = repo / files[(i * 7) % len(files)]
    path.write_text(path.read_text() + f"\n# hook bench {i}\n")
    before = log_path.stat().st_size if log_path.exists() else 0
    start = time.perf_counter()
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-qam",
                    f"hook bench {i}"], cwd=repo, env=env, check=True)
    while time.perf_counter() - start < HOOK_WAIT:
        with open(log_path, "rb") as handle:
            handle.seek(before)
            new = handle.read().decode(errors="replace")
        ends = [line for line in new.splitlines() if any(w in line for w in (": built ", ": failed", ": skipped"))]
        if ends and new.endswith("\n"):
            if ": built " not in ends[-1]:
                raise RuntimeError(f"the hook did not build: {ends[-1]}")
            return round(time.perf_counter() - start, 3), ends[-1]
        time.sleep(0.01)
    raise RuntimeError(f"no hook line within {HOOK_WAIT:g} s")


def run_figure(work: Path, commits: int, seed: Path | None) -> dict[str, Any]:
    repo, index, first = prepare(work, seed)
    base = {k: v for k, v in os.environ.items() if k != "CI"}
    base.update({"CODEVOUCH_SERVER": "off", "HF_HUB_OFFLINE": "1"})
    run_timed([PY, "-m", "codevouch", "hooks", "install", "--index", str(index)], cwd=repo, env=base)
    files = sorted(p for p in subprocess.run(["git", "ls-files", "bench/codevouch_bench/*.py"], cwd=repo,
                                             capture_output=True, text=True, check=True).stdout.split()
                   if not p.endswith("__init__.py"))
    log_path = index / "hooks.log"
    modes: dict[str, Any] = {}
    here = [one_commit(repo, log_path, files, i, base) for i in range(commits)]
    with engine_running(repo, index, base) as (on, state):
        there = [one_commit(repo, log_path, files, commits + i, on) for i in range(commits)]
        engine_builds(state, commits)
    for name, runs in (("in-process", here), ("through the engine", there)):
        seconds = [s for s, _ in runs]
        modes[name] = {"runs": seconds, "median": round(statistics.median(seconds), 3), "lines": [line for _, line in runs]}
        log(f"hook_build ({name}): commit to the hook's line {modes[name]['median']} s ({seconds})")
    return {"figure": "hook_build", "machine": machine(), "seeded": seed is not None, **first, "modes": modes,
            "load_avg_1m": round(os.getloadavg()[0], 2)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--work", type=Path, required=True, help="scratch directory (emptied)")
    p.add_argument("--out", type=Path, help="write the figure's JSON here")
    p.add_argument("--commits", type=int, default=4, help="one-file commits per mode")
    p.add_argument("--seed-index", type=Path, help="an index of this repository to start from (copied)")
    args = p.parse_args()
    result = run_figure(args.work, args.commits, args.seed_index)
    if args.out:
        write_json(args.out, result)


if __name__ == "__main__":
    main()
