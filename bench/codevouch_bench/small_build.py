#!/usr/bin/env python
"""The build after a one-file commit against a no-op build of the same index, as the git hooks
run it: `codevouch index build` in a fresh process each time (start-up and imports included),
the real model, no engine.

The fixture is this repository's own `codevouch/worktree/` at a pinned commit (a real package
of ~30 files), committed into a temporary git repository and built once. Then, `--repeats`
times in alternation: a no-op build, a one-line edit committed to one file (a comment inserted
near its middle, as the build figure does), the build after it. The figure is the ratio of the
medians, one-file over no-op (target: at most 3x), with both medians and how many texts each
one-file build embedded. `--code DIR` runs another checkout's codevouch (an older release, for
the figure before a change) through PYTHONPATH.

Then the same alternation through the resident engine (`engine`, skipped with `--no-engine`):
an engine started for the index and warmed up before the first run, each build a fresh
`codevouch index build` process that hands the build to it (engine/handoff.py); its ratios are
against the no-op build through the engine and against the in-process no-op build. The engine's
log must show every one of them as its build, or the figure fails.

    python -m codevouch_bench.small_build --work /tmp/small-build --out small_build.json
"""
from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import statistics
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from codevouch_bench.lib.common import PY, REPO_ROOT, log, machine, run_timed, write_json
from codevouch_bench.lib.edits import commit_edits, python_files

FIXTURE_COMMIT = "5ce2dd86a9c89afc22d810d2965fe82306e49edd"   # this repository's main, 2026-12-06
FIXTURE_DIR = "codevouch/worktree"


def fixture(repo: Path) -> None:
    """FIXTURE_DIR at FIXTURE_COMMIT, committed as one commit in a fresh repository at `repo`."""
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir(parents=True)
    data = subprocess.run(["git", "-C", str(REPO_ROOT), "archive", FIXTURE_COMMIT, FIXTURE_DIR],
                          capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(repo, filter="data")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"],
                 ["-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", "fixture"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True)


def build(repo: Path, index: Path, env: dict[str, str]) -> tuple[float, dict[str, Any]]:
    """Wall seconds of one `index build` process, and its branch's summary."""
    # Run in the repository, as a hook does: `python -m` puts its working directory first on sys.path,
    # so the code is the one PYTHONPATH names, never a checkout the bench was started in.
    seconds, proc = run_timed([PY, "-m", "codevouch", "index", "build", "--repo", str(repo), "--index", str(index),
                               "--json"], cwd=repo, env=env)
    return seconds, json.loads(proc.stdout)["branches"][0]


def alternate(repo: Path, index: Path, env: dict[str, str], repeats: int, start: int, what: str
              ) -> tuple[list[float], list[float], list[int]]:
    """`repeats` times: a no-op build, a one-file commit, the build after it; (no-op seconds,
    one-file seconds, texts each one-file build embedded). `start` numbers the commits on."""
    files = python_files(repo)
    noops: list[float] = []
    ones: list[float] = []
    embedded: list[int] = []
    for i in range(start, start + repeats):
        seconds, summary = build(repo, index, env)
        assert summary["noop"], summary
        noops.append(round(seconds, 3))
        commit_edits(repo, [files[(i * 7) % len(files)]], f"one-file-{i}")
        seconds, summary = build(repo, index, env)
        ones.append(round(seconds, 3))
        embedded.append(summary["embedded"])
        log(f"small_build ({what}): no-op {noops[-1]:.2f} s, one file {ones[-1]:.2f} s ({embedded[-1]} embedded)")
    return noops, ones, embedded


@contextmanager
def engine_running(repo: Path, index: Path, env: dict[str, str]) -> Iterator[tuple[dict[str, str], dict[str, Any]]]:
    """An engine for `index`, started as a user's first read call starts one and warmed up on
    `repo`: (the environment that reaches it, its `serve --status`); stopped at the end."""
    runtime = Path(tempfile.mkdtemp(prefix="cvb-", dir="/tmp"))
    os.chmod(runtime, 0o700)
    on = {**{k: v for k, v in env.items() if k != "CI"}, "CODEVOUCH_SERVER": "on", "XDG_RUNTIME_DIR": str(runtime)}
    serve = [PY, "-m", "codevouch", "serve", "--index", str(index)]
    try:
        # A read call answered in-process starts the engine after its answer; it warms up on the repository.
        run_timed([PY, "-m", "codevouch", "search", "x", "--repo", str(repo), "--index", str(index)], cwd=repo, env=on)
        deadline = time.monotonic() + 300
        while True:
            _, status = run_timed([*serve, "--status", "--json"], cwd=repo, env=on)
            state = json.loads(status.stdout)
            if state.get("running") and state.get("warm_up_s") is not None:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"the engine did not start and warm up: {state}")
            time.sleep(0.2)
        yield on, state
    finally:
        run_timed([*serve, "--stop"], cwd=repo, env=on, check=False)
        shutil.rmtree(runtime, ignore_errors=True)


def engine_builds(state: dict[str, Any], expected: int) -> None:
    """Fail unless the engine's log shows `expected` builds that it ran to exit 0."""
    engine_log = Path(state["log"]).read_text(errors="replace")
    served = engine_log.count(": exit 0 in ")
    if served != expected:
        raise RuntimeError(f"the engine ran {served} of the {expected} builds: {engine_log[-2000:]}")


def through_engine(repo: Path, index: Path, env: dict[str, str], repeats: int, noop_here: float) -> dict[str, Any]:
    """The alternation with the engine started and warm first; every build handed to it."""
    with engine_running(repo, index, env) as (on, state):
        noops, ones, embedded = alternate(repo, index, on, repeats, repeats, "through the engine")
        engine_builds(state, 2 * repeats)
    noop, one = statistics.median(noops), statistics.median(ones)
    return {"warm_up_s": state["warm_up_s"], "noop_runs": noops, "one_file_runs": ones, "one_file_embedded": embedded,
            "noop_median": round(noop, 3), "one_file_median": round(one, 3), "ratio": round(one / noop, 2),
            "ratio_to_in_process_noop": round(one / noop_here, 2), "load_avg_1m": round(os.getloadavg()[0], 2)}


def run_figure(work: Path, repeats: int, code: Path | None, engine: bool = True) -> dict[str, Any]:
    repo, index = work / "repo", work / "index"
    fixture(repo)
    shutil.rmtree(index, ignore_errors=True)
    env = {**os.environ, "CODEVOUCH_SERVER": "off", "HF_HUB_OFFLINE": "1"}
    env["PYTHONPATH"] = os.pathsep.join([str(code if code is not None else REPO_ROOT), env.get("PYTHONPATH", "")])
    full_s, full = build(repo, index, env)
    log(f"small_build: full build {full_s:.1f} s, {full['embedded']} texts")
    noops, ones, embedded = alternate(repo, index, env, repeats, 0, "in-process")
    noop, one = statistics.median(noops), statistics.median(ones)
    result = {"figure": "small_build", "machine": machine(), "fixture": f"{FIXTURE_DIR}@{FIXTURE_COMMIT[:12]}",
              "code": str(code) if code is not None else "this checkout", "files": full["files"],
              "chunks": full["chunks"], "full_build_seconds": round(full_s, 3), "noop_runs": noops,
              "one_file_runs": ones, "one_file_embedded": embedded, "noop_median": round(noop, 3),
              "one_file_median": round(one, 3), "ratio": round(one / noop, 2),
              "load_avg_1m": round(os.getloadavg()[0], 2)}
    if engine:
        result["engine"] = through_engine(repo, index, env, repeats, noop)
    return result


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--work", type=Path, required=True, help="scratch directory (emptied)")
    p.add_argument("--out", type=Path, help="write the figure's JSON here")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--code", type=Path, help="run the codevouch in this checkout instead (PYTHONPATH)")
    p.add_argument("--no-engine", action="store_true", help="leave out the builds through the resident engine")
    args = p.parse_args()
    result = run_figure(args.work, args.repeats, args.code, engine=not args.no_engine)
    if args.out:
        write_json(args.out, result)
    log(f"small_build: one-file build {result['one_file_median']} s against a no-op {result['noop_median']} s: "
        f"{result['ratio']}x")
    if "engine" in result:
        e = result["engine"]
        log(f"small_build: through the engine {e['one_file_median']} s against a no-op {e['noop_median']} s: "
            f"{e['ratio']}x ({e['ratio_to_in_process_noop']}x the in-process no-op)")


if __name__ == "__main__":
    main()
