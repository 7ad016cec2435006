"""Timing, statistics, machine facts and JSON I/O shared by every figure script."""
from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

# bench/ (this project, installed editable: `pip install -e bench/`) sits in codevouch's repository.
BENCH = Path(__file__).resolve().parents[2]
REPO_ROOT = BENCH.parent
CACHE = REPO_ROOT / ".bench-cache"
DOCS = REPO_ROOT / "docs"
RESULTS = BENCH / "results"   # the committed results JSON, rendered into docs/BENCHMARKS.md
PY = sys.executable
T = TypeVar("T")

# No code path may reach a model hub; the packaged model loads from disk.
OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
               "ANONYMIZED_TELEMETRY": "False"}
os.environ.update(OFFLINE_ENV)


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def timed(fn: Callable[[], T]) -> tuple[T, float]:
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (git processes, workers): on a
    shared machine wall time grows with other people's load, CPU time much less."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def timed_cpu(fn: Callable[[], T]) -> tuple[float, float, T]:
    """(wall seconds, CPU seconds as cpu_seconds counts them, result) of one call."""
    start, cpu = time.perf_counter(), cpu_seconds()
    out = fn()
    return time.perf_counter() - start, cpu_seconds() - cpu, out


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile: with few samples an interpolated p95 would be invented."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def summary(values: Sequence[float], scale: float = 1000.0, digits: int = 1) -> dict[str, Any]:
    """Median, p50/p95, min and count of timings in seconds, reported in ms by default."""
    return {"n": len(values), "median": round(statistics.median(values) * scale, digits),
            "p50": round(percentile(values, 50) * scale, digits),
            "p95": round(percentile(values, 95) * scale, digits),
            "min": round(min(values) * scale, digits)}


def peak_rss_mib() -> float:
    """This process's peak resident set (getrusage ru_maxrss, KiB on Linux)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def run_timed(cmd: Sequence[str], cwd: Path | None = None, env: dict[str, str] | None = None,
              check: bool = True) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Wall time of a whole child process (start-up and imports included)."""
    start = time.perf_counter()
    proc = subprocess.run(list(cmd), cwd=cwd, env={**os.environ, **(env or {})}, text=True,
                          capture_output=True)
    elapsed = time.perf_counter() - start
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr[-2000:]}")
    return elapsed, proc


def run_streaming(cmd: Sequence[str], stdout: Path | None = None) -> tuple[float, int, str]:
    """Run a child with its stderr echoed live (progress) and kept (the tail, for the report);
    its stdout goes to the file `stdout` (None: dropped)."""
    start = time.perf_counter()
    tail: list[str] = []
    with open(stdout or os.devnull, "w") as sink, \
            subprocess.Popen(list(cmd), stdout=sink, stderr=subprocess.PIPE, text=True) as proc:
        assert proc.stderr is not None
        for line in proc.stderr:
            sys.stderr.write(line)
            tail = (tail + [line])[-200:]
        code = proc.wait()
    return time.perf_counter() - start, code, "".join(tail)


def run_json_worker(module: str, args: Sequence[str]) -> dict[str, Any]:
    """Run a worker mode of a figure module (`python -m MODULE`) in its own process and read its
    JSON (last stdout line).

    One process per measurement, so each peak-memory figure is that measurement's alone.
    """
    _, proc = run_timed([PY, "-m", module, *args])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def usable_cores() -> int | None:
    """The cores this process may run on (a container or taskset may allow fewer than exist)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count()


def git_version() -> str:
    return subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()


def machine() -> dict[str, Any]:
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "cores": os.cpu_count(), "cores_usable": usable_cores(), "cpu": cpu_model(), "memory_gib": round(mem_gib, 1),
        # Other work on a shared machine slows every method; the load says how much was there.
        "load_avg_1m_at_start": round(os.getloadavg()[0], 2),
        "python": platform.python_version(), "platform": platform.platform(), "git": git_version(),
        "versions": {d: _version(d) for d in ("torch", "chromadb", "sentence-transformers", "transformers",
                                              "tree-sitter", "bm25s", "langchain-text-splitters",
                                              "codevouch")},
    }


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n")


def write_figure(out: Path | None, kept: Path, data: Any) -> None:
    """A figure's JSON where the runner asked (`--out`), and where the report reads it (`kept`,
    under bench/results) too."""
    write_json(out or kept, data)
    if out is not None and out != kept:
        write_json(kept, data)


def read_json(path: Path) -> Any:
    return json.loads(path.read_text())


def read_json_if_exists(path: Path) -> Any:
    """A results file's JSON, or None when that figure was never run."""
    return read_json(path) if path.exists() else None
