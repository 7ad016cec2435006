"""The resident engine: CLI calls answered by a warm engine against the same calls in-process.

    python -m codevouch_bench.engine --out bench/results/bench-engine.json [--repo PATH] [--quick]
    python -m codevouch_bench.engine --url URL --commit SHA --edit PATH --work DIR --out PATH

On a real repository (a clone of codevouch's own by default; with --url, a clone of that
repository at --commit, queried with the first sentences of its Python docstrings), fake
embedder (no model load, so the figures are the CLI's own cost), four figures, wall time of
whole `codevouch` processes:

- `search` in-process (CODEVOUCH_SERVER=off), p50/p95, and the import floor beside it;
- `search` with the engine not running (the call answers in-process, then starts it);
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


def _up(cwd: Path, env: dict[str, str], timeout: float = 120.0) -> None:
    """Wait until the engine listens and has warmed up: a call with none running answers
    in-process and starts one after its answer, so the next call (or --stop) must not find it
    half started, nor compete with its warm-up search (an engine of a codevouch without one has
    no `warm_up_s`: listening is enough)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = subprocess.run([PY, "-m", "codevouch", "serve", "--status", "--json"], cwd=cwd, env=env,
                              capture_output=True, text=True)
        found = json.loads(done.stdout) if done.returncode == 0 else {}
        if found.get("running") and (found.get("warm_up_s") is not None or "warm_up_s" not in found):
            return
        time.sleep(0.2)
    raise RuntimeError("the engine did not start")


# The file the mixed calls edit in this repository's clone. Not a file of the package itself: the
# CLI imports the clone's `codevouch/` (the current directory is first on sys.path), and an edit
# there is a new version of codevouch.
OWN_EDIT = "tests/gitrepo.py"
OWN_ANSWER = "`Repo.commit` in tests/gitrepo.py:1-20 and `Repo.write` too; see codevouch/api.py:10.\n"


def _mixed(repo: Path, env: dict[str, str], calls: int, queries: list[str], edit: str, answer: str) -> float:
    """`calls` agent-like calls with an edit of `edit` before every fifth; total wall seconds."""
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    target = repo / edit
    original = target.read_text()
    snippet = json.dumps({"path": edit, "commit": head, "start_line": 1, "end_line": 5})
    total = 0.0
    try:
        for n in range(calls):
            if n % 5 == 0:
                target.write_text(original + f"\n\ndef added_{n}(text):\n    return text.strip()\n")
            kind = n % 4
            if kind == 0:
                total += _cli(["search", queries[n % len(queries)]], repo, env)
            elif kind == 1:
                total += _cli(["validate", "-"], repo, env, snippet + "\n")
            elif kind == 2:
                total += _cli(["context", queries[n % len(queries)], "--budget", "2000"], repo, env)
            else:
                total += _cli(["check-refs", "-"], repo, env, answer)
    finally:
        target.write_text(original)
    return total


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _corpus(repo_src: Path, work: Path, url: str | None, commit: str | None) -> Path:
    repo = work / "repo"
    if url is not None:
        from codevouch_bench.validated_search import clone
        return clone(url, commit or "HEAD", repo)
    if not repo.exists():
        subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(repo_src), str(repo)], check=True)
    return repo


def _paired(args_of: Any, repo: Path, now: dict[str, str], before: dict[str, str], n: int) -> dict[str, Any]:
    """`n` calls of this codevouch and of the one before, alternated (A B A B ...): each side's
    summary and the median of the per-pair ratios (this ÷ before), so a drift of the machine's
    speed moves both sides of a pair alike."""
    mine, theirs = [], []
    for k in range(n):
        mine.append(_cli(args_of(k), repo, now))
        theirs.append(_cli(args_of(k), repo, before))
    ratios = sorted(a / b for a, b in zip(mine, theirs))
    return {"this_ms": summary(mine), "before_ms": summary(theirs),
            "ratio_median": round(ratios[len(ratios) // 2], 3), "ratio_min": round(ratios[0], 3),
            "ratio_max": round(ratios[-1], 3)}


def _paired_first(repo: Path, on: dict[str, str], on_b: dict[str, str], query: str, n: int) -> dict[str, Any]:
    """`n` first calls (no engine running) of this codevouch and of the one before, alternated,
    each side's engine stopped before its call and, after it, waited for until it listens (this
    codevouch starts it after the answer: a half-started one must not compete with the other
    side's call or outlive the stop); with the floor (`import chromadb`) run beside each pair."""
    def first(env: dict[str, str]) -> float:
        _stop(repo, env)
        took = _cli(["search", query], repo, env)
        _up(repo, env)
        return took

    mine, theirs, floor = [], [], []
    for _ in range(n):
        mine.append(first(on))
        theirs.append(first(on_b))
        start = time.perf_counter()
        subprocess.run([PY, "-c", "import chromadb"], env=on, check=True, capture_output=True)
        floor.append(time.perf_counter() - start)
    ratios = sorted(a / b for a, b in zip(mine, theirs))
    to_floor = sorted(a / f for a, f in zip(mine, floor))
    return {"this_ms": summary(mine), "before_ms": summary(theirs), "floor_import_chromadb_ms": summary(floor),
            "ratio_median": round(ratios[len(ratios) // 2], 3), "ratio_min": round(ratios[0], 3),
            "ratio_max": round(ratios[-1], 3), "this_to_floor_median": round(to_floor[len(to_floor) // 2], 3)}


def _before_env(env: dict[str, str], before: Path) -> dict[str, str]:
    """`env` with the older codevouch first on the path (its engine is its own: the engine's
    key names the package's directory)."""
    rest = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and not Path(p, "codevouch").is_dir()]
    return {**env, "PYTHONPATH": os.pathsep.join([str(before.resolve()), *rest])}


def _compare(repo: Path, off: dict[str, str], on: dict[str, str], before: Path, queries: list[str],
             repeats: int) -> dict[str, Any]:
    """Warm engine and in-process searches against the codevouch at `before`, paired."""
    off_b, on_b = _before_env(off, before), _before_env(on, before)
    search = lambda k: ["search", queries[k % len(queries)]]  # noqa: E731
    try:
        _cli(search(0), repo, on), _cli(search(0), repo, on_b)        # both engines started
        _up(repo, on), _up(repo, on_b)
        loads = {"warm": _load()}
        warm = _paired(search, repo, on, on_b, repeats * 2)
        loads["in_process"] = _load()
        cold = _paired(search, repo, off, off_b, repeats)
        loads["first_call"] = _load()
        first = _paired_first(repo, on, on_b, queries[1], max(5, repeats // 2))
    finally:
        _stop(repo, on_b)
    return {"before": str(before), "load_avg_1m_by_phase": loads, "engine_warm": warm, "in_process": cold,
            "first_call": first}


def run(repo_src: Path, work: Path, quick: bool, url: str | None = None, commit: str | None = None,
        edit: str | None = None, before: Path | None = None, compare_only: bool = False) -> dict[str, Any]:
    repeats = 5 if quick else 20
    started = machine()          # its date and load average: the run's start
    work = work.resolve()        # the CLI runs in the clone: a relative index path would be inside it
    work.mkdir(parents=True, exist_ok=True)
    repo = _corpus(repo_src, work, url, commit)
    if url is not None:
        from codevouch_bench.validated_search import queries_of
        queries = queries_of(repo, len(QUERIES))
        edit = edit or "README.rst"
        answer = f"See {edit}:1-20 and `main` in {edit}:10.\n"
    else:
        queries, edit, answer = QUERIES, edit or OWN_EDIT, OWN_ANSWER
    index = work / "index"
    runtime = Path(tempfile.mkdtemp(prefix="cvb-", dir="/tmp"))
    os.chmod(runtime, 0o700)
    # Not CI (it turns the engine off); not PYTHONDONTWRITEBYTECODE (a shell may set it): an
    # installed codevouch has its bytecode compiled, as chromadb's is for the floor, and without
    # it every process compiles codevouch's modules again (~10 ms of a warm call's client alone).
    base = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTHONDONTWRITEBYTECODE")}
    base.update({"CODEVOUCH_INDEX": str(index), "XDG_RUNTIME_DIR": str(runtime), "CODEVOUCH_NO_RECORD": "1"})
    off, on = {**base, "CODEVOUCH_SERVER": "off"}, {**base, "CODEVOUCH_SERVER": "on"}
    loads: dict[str, float] = {"start": _load()}
    try:
        log("engine: building the index (fake embedder)")
        subprocess.run([PY, "-m", "codevouch", "index", "build", "--embedder", "fake-bow-64"], cwd=repo, env=off,
                       check=True, capture_output=True)
        chunks = json.loads(subprocess.run([PY, "-m", "codevouch", "index", "status", "--json"], cwd=repo, env=off,
                                           check=True, capture_output=True, text=True).stdout)["branches"][0]
        if compare_only and before is not None:
            log(f"engine: this codevouch against the one at {before}, paired")
            return {"machine": started, "corpus": {"repo": url or "codevouch (this repository, a clone)",
                                                     "chunks_by_kind": chunks["chunks_by_kind"],
                                                     "embedder": "fake-bow-64", "queries": queries},
                    "against_before": _compare(repo, off, on, before, queries, repeats),
                    "load_avg_1m_at_end": _load()}
        loads["floor"] = _load()
        floor = _floor(off, repeats)
        _cli(["search", queries[0]], repo, off)            # the overlay cache and the page cache warm
        log("engine: in-process searches")
        loads["in_process"] = _load()
        inprocess = [_cli(["search", queries[n % len(queries)]], repo, off) for n in range(repeats)]
        log("engine: first calls (no engine running)")
        loads["first_call"] = _load()
        first = []
        for _ in range(max(3, repeats // 4)):
            _stop(repo, on)
            first.append(_cli(["search", queries[1]], repo, on))
            _up(repo, on)           # it starts after the answer: stopped only once it listens
        log("engine: warm searches")
        loads["warm"] = _load()
        warm = [_cli(["search", queries[n % len(queries)]], repo, on) for n in range(repeats * 2)]
        calls = 20 if quick else 50
        log(f"engine: {calls} mixed calls, in-process then engine")
        loads["mixed"] = _load()
        mixed_off = _mixed(repo, off, calls, queries, edit, answer)
        mixed_on = _mixed(repo, on, calls, queries, edit, answer)
        compared = None
        if before is not None:
            log(f"engine: this codevouch against the one at {before}, paired")
            compared = _compare(repo, off, on, before, queries, repeats)
    finally:
        _stop(repo, on)
        shutil.rmtree(runtime, ignore_errors=True)
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    return {
        "machine": started, "load_avg_1m_at_end": _load(), "load_avg_1m_by_phase": loads,
        "bytecode": "written and read (PYTHONDONTWRITEBYTECODE unset for every measured process)",
        "corpus": {"repo": url or "codevouch (this repository, a clone)", "commit": head,
                   "chunks_by_kind": chunks["chunks_by_kind"], "files_by_kind": chunks["files_by_kind"],
                   "embedder": "fake-bow-64", "edited": edit, "queries": queries},
        "floor_ms": floor,
        "search_in_process_ms": summary(inprocess),
        "search_first_call_no_engine_ms": summary(first),
        "search_engine_warm_ms": summary(warm),
        "mixed_calls": {"calls": calls, "edit_every": 5, "in_process_s": round(mixed_off, 2),
                        "engine_s": round(mixed_on, 2), "speedup": round(mixed_off / mixed_on, 2)},
        **({"against_before": compared} if compared is not None else {}),
    }


def corpus_arguments(p: argparse.ArgumentParser, work: str) -> None:
    """--out, and the corpus: a clone of --repo (this repository by default) or of --url at
    --commit, made under --work (default .bench-cache/<work>)."""
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--repo", type=Path, default=REPO_ROOT)
    p.add_argument("--work", type=Path, default=REPO_ROOT / ".bench-cache" / work)
    p.add_argument("--url", help="clone this repository at --commit (into --work) instead of --repo")
    p.add_argument("--commit", help="with --url: the commit to measure")


def main(defaults: dict[str, Any] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    corpus_arguments(p, "engine")
    p.add_argument("--edit", help="the tracked file the mixed calls edit (default: tests/gitrepo.py; with --url, "
                                  "README.rst)")
    p.add_argument("--before", type=Path, help="a directory holding an older `codevouch/` package: warm engine and "
                                              "in-process searches of both, alternated, with per-pair ratios")
    p.add_argument("--compare-only", action="store_true", help="with --before: only the paired comparison")
    p.add_argument("--quick", action="store_true")
    p.set_defaults(**{"script": "codevouch_bench.engine", **(defaults or {})})
    args = p.parse_args()
    if args.url and not args.commit:
        p.error("--url needs --commit: a benchmark measures a pinned commit")
    result = run(args.repo, args.work, args.quick, args.url, args.commit, args.edit, args.before,
                 args.compare_only)
    result["command"] = " ".join(["python", "-m", args.script, *sys.argv[1:]])
    write_json(args.out, result)
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
