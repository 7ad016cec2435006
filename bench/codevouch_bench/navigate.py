"""Navigation on real repositories: `show` at rank 1 against a grep for the definition line, and
`references` against Python's own parser, then four edits the index has not seen.

    python -m codevouch_bench.navigate [--names 150] [--functions 50] [--out FILE]

Corpora: the requests 2.31.0 and urllib3 2.1.0 source distributions (pinned; every file, tests
and docs included), each committed into a fresh repository and built with the fake embedder
(`show` reads the name tier, lexical: the embedder plays no part). Nothing here was tuned on:
show and references were written before this figure first ran.

- show: `names` definitions sampled (seeded) from the package's code by Python's `ast`: top-level
  functions and classes and methods (`Class.method`), dunder names left out. Rank 1: the first
  hit's lines hold the definition's `def`/`class` line. The grep baseline: `git grep -n -E
  '^\\s*(async\\s+)?(def|class)\\s+NAME\\b'` for the name's last part, rank 1 when its first line
  is that line.
- references: `functions` top-level functions of the package; the ground truth is every line
  of every .py file where `ast` sees the name used (a Name, an Attribute's attribute, an import
  of it), the definition itself aside; recall and precision by (path, line). Both sides match by
  name: neither resolves types.
- edits (requests): a changed and moved body, a deleted function, a new function, a renamed
  file, none committed or built; each `show` answer checked against the file now.
- latency: in-process, one `Index` kept warm, each show and references call timed, the first
  call apart; and through the resident engine (requests): whole `codevouch show` / `references`
  processes, the first with no engine running (it answers in-process and starts one), then warm.
"""
from __future__ import annotations

import argparse
import ast
import json
import random
import re
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from codevouch import Index
from codevouch_bench.lib.common import CACHE, RESULTS, log, machine, write_json
from codevouch_bench.lib.corpus import extract, git, repo_from_files, tree_files

CORPORA = (("requests==2.31.0", "requests"), ("urllib3==2.1.0", "src/urllib3"))
SEED = 48


def definitions(root: Path, package: str) -> list[tuple[str, str, int]]:
    """(path, qualified name, line of its def/class) of each definition in the package's files."""
    out = []
    for file in sorted((root / package).rglob("*.py")):
        rel = file.relative_to(root).as_posix()
        try:
            tree = ast.parse(file.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.append((rel, node.name, node.lineno))
            if isinstance(node, ast.ClassDef):
                out += [(rel, f"{node.name}.{m.name}", m.lineno) for m in node.body
                        if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return [d for d in out if not d[1].split(".")[-1].startswith("__")]


def grep_first(root: Path, name: str) -> tuple[str, int] | None:
    last = name.split(".")[-1]
    done = subprocess.run(["git", "-C", str(root), "grep", "-n", "-E", rf"^\s*(async\s+)?(def|class)\s+{last}\b"],
                          capture_output=True, text=True)
    first = done.stdout.split("\n", 1)[0]
    path, _, rest = first.partition(":")
    line = rest.partition(":")[0]
    return (path, int(line)) if line.isdigit() else None


def uses(root: Path, name: str) -> set[tuple[str, int]]:
    """Every (path, line) where `ast` sees `name` used in a .py file of the working tree."""
    found = set()
    for file in sorted(root.rglob("*.py")):
        if ".git" in file.parts:
            continue
        try:
            tree = ast.parse(file.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        rel = file.relative_to(root).as_posix()
        for node in ast.walk(tree):
            # The line the name is on: an attribute's name ends it, an import's alias has its own line.
            if isinstance(node, ast.Name) and node.id == name:
                found.add((rel, node.lineno))
            elif isinstance(node, ast.Attribute) and node.attr == name:
                found.add((rel, node.end_lineno or node.lineno))
            elif isinstance(node, ast.ImportFrom):
                found |= {(rel, a.lineno) for a in node.names if a.name == name}
    return found


def _ms(values: list[float]) -> dict[str, float]:
    values = sorted(values)
    return {"p50": round(statistics.median(values) * 1000, 1),
            "p95": round(values[min(len(values) - 1, int(len(values) * 0.95))] * 1000, 1)}


def measure_show(idx: Index, root: Path, picked: list[tuple[str, set[tuple[str, int]]]]) -> dict[str, Any]:
    """Rank 1: the first answer is a definition of the name (a name defined twice, a property's
    getter and setter, an overload, is answered by either)."""
    ours = grep = 0
    misses = []
    seconds = []
    for name, where in picked:
        started = time.perf_counter()
        shown = idx.show(name)
        seconds.append(time.perf_counter() - started)
        first = shown.hits[0] if shown.hits else None
        if first is not None and any(first.path == p and first.record.start_line <= n <= first.record.end_line
                                     for p, n in where):
            ours += 1
        else:
            misses.append(f"{name} ({sorted(where)[0]}): {first.path + ':' + str(first.record.start_line) if first else 'none'}")
        grep += grep_first(root, name) in where
    return {"names": len(picked), "show_rank1": ours, "grep_rank1": grep, "show_misses": misses[:10],
            "first_call_ms": round(seconds[0] * 1000, 1), "warm_ms": _ms(seconds[1:])}


def measure_references(idx: Index, root: Path, functions: list[str]) -> dict[str, Any]:
    hit = listed = truth_n = 0
    seconds = []
    per = []
    wrong: list[tuple[str, int]] = []
    missed: list[tuple[str, int]] = []
    for name in functions:
        truth = uses(root, name)
        started = time.perf_counter()
        found = idx.references(name, limit=10_000)
        seconds.append(time.perf_counter() - started)
        got = {(r.path, r.line) for r in found.references if r.path.endswith(".py")}
        both = len(got & truth)
        wrong.extend(sorted(got - truth)[:2])
        missed.extend(sorted(truth - got)[:2])
        hit, listed, truth_n = hit + both, listed + len(got), truth_n + len(truth)
        per.append((name, len(truth), len(got), both))
    worst = sorted(per, key=lambda p: (p[3] / p[1] if p[1] else 1.0))[:5]
    return {"functions": len(functions), "truth": truth_n, "listed": listed, "correct": hit,
            "recall": round(hit / truth_n, 3) if truth_n else None, "precision": round(hit / listed, 3) if listed else None,
            "examples_not_in_truth": [f"{p}:{n}" for p, n in wrong[:8]],
            "examples_missed": [f"{p}:{n}" for p, n in missed[:8]],
            "worst_recall": [{"name": n, "truth": t, "listed": g, "correct": b} for n, t, g, b in worst],
            "warm_ms": _ms(seconds[1:]), "first_call_ms": round(seconds[0] * 1000, 1)}


def measure_edits(idx: Index, root: Path, defs: list[tuple[str, str, int]]) -> dict[str, Any]:
    """Four edits the index has not seen, and whether each `show` answer is current."""
    top = [d for d in defs if "." not in d[1]]
    by_file: dict[str, list[tuple[str, str, int]]] = {}
    for d in top:
        by_file.setdefault(d[0], []).append(d)
    files = [f for f, ds in sorted(by_file.items()) if len(ds) >= 2]
    changed_file, deleted_file, renamed_file = files[0], files[1], files[2]
    changed, deleted, renamed = by_file[changed_file][0][1], by_file[deleted_file][-1][1], by_file[renamed_file][0][1]
    text = (root / changed_file).read_text()
    new_body = f"def {changed}(*args, **kwargs):\n    return 'changed by the benchmark'\n"
    text = re.sub(rf"^def {changed}\(.*?(?=^\S)", lambda m: new_body + "\n\n", text, count=1, flags=re.S | re.M)
    (root / changed_file).write_text("# a line above moves every definition down\n" + text)
    text = (root / deleted_file).read_text()
    (root / deleted_file).write_text(re.sub(rf"^def {deleted}\(.*?(?=^\S|\Z)", "", text, count=1, flags=re.S | re.M))
    with (root / files[3]).open("a") as f:
        f.write("\n\ndef navigate_bench_new(x):\n    return x\n")
    new_path = renamed_file.replace(".py", "_renamed.py")
    git(root, "mv", renamed_file, new_path)
    checks = {
        # A definition's lines hold the comments directly above it (the chunker's rule).
        "changed body shown as it is now": any((h.code or "").endswith(new_body.rstrip("\n")) for h in idx.show(changed).hits),
        "deleted function gone": idx.show(deleted).gone,
        "new function found": [h.path for h in idx.show("navigate_bench_new").hits] == [files[3]],
        "renamed file's function at its new place": any(h.path == new_path for h in idx.show(renamed).hits)
        and not any(h.path == renamed_file for h in idx.show(renamed).hits),
    }
    return {"edits": {"changed": f"{changed_file}: {changed}", "deleted": f"{deleted_file}: {deleted}",
                      "new": f"{files[3]}: navigate_bench_new", "renamed": f"{renamed_file} -> {new_path}: {renamed}"},
            "current": checks, "stale_or_wrong": sum(not ok for ok in checks.values())}


def measure_engine(root: Path, index: Path, names: list[str], functions: list[str]) -> dict[str, Any]:
    """Wall seconds of whole CLI processes: the first call with no engine running, then each call
    answered by the warm engine (codevouch_bench.engine's helpers)."""
    import os
    import tempfile

    from codevouch_bench.engine import _cli, _stop, _up
    from codevouch_bench.lib.common import summary

    runtime = Path(tempfile.mkdtemp(prefix="cvn-", dir="/tmp"))
    os.chmod(runtime, 0o700)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTHONDONTWRITEBYTECODE")}
    env.update({"CODEVOUCH_INDEX": str(index), "XDG_RUNTIME_DIR": str(runtime), "CODEVOUCH_NO_RECORD": "1",
                "CODEVOUCH_SERVER": "on"})
    try:
        first = _cli(["show", names[0]], root, env)
        _up(root, env)
        show = [_cli(["show", n], root, env) for n in names[1:]]
        refs = [_cli(["references", f], root, env) for f in functions]
    finally:
        _stop(root, env)
    return {"first_call_s": round(first, 3), "show_warm": summary(show), "references_warm": summary(refs),
            "calls": len(show) + len(refs)}


def run(spec: str, package: str, work: Path, names: int, functions: int, edits: bool) -> dict[str, Any]:
    root = work / spec.replace("==", "-")
    repo_from_files(root, tree_files(extract(spec)))
    index = work / (root.name + "-index")
    idx = Index(root, index, embedder="fake-bow-64", record=False)
    started = time.perf_counter()
    idx.build()
    log(f"{spec}: built in {time.perf_counter() - started:.1f} s")
    defs = definitions(root, package)
    rng = random.Random(SEED)
    where: dict[str, set[tuple[str, int]]] = {}
    for path, name, line in defs:
        where.setdefault(name, set()).add((path, line))
    picked = [(n, where[n]) for n in rng.sample(sorted(where), min(names, len(where)))]
    tops = sorted({n for _, n, _ in defs if "." not in n and n[0].islower()})
    out = {"corpus": spec, "definitions": len(defs), "names_defined": len(where), "show": measure_show(idx, root, picked),
           "references": measure_references(idx, root, rng.sample(tops, min(functions, len(tops))))}
    if edits:
        out["engine"] = measure_engine(root, index, [n for n, _ in picked[:30]], tops[:20])
        out["after_edits"] = measure_edits(idx, root, defs)
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", type=int, default=150)
    parser.add_argument("--functions", type=int, default=50)
    parser.add_argument("--work", type=Path, default=CACHE / "work" / "navigate")
    parser.add_argument("--out", type=Path, default=RESULTS / "bench-navigate.json")
    args = parser.parse_args()
    corpora = [run(spec, package, args.work, args.names, args.functions, n == 0) for n, (spec, package) in enumerate(CORPORA)]
    result = {"command": "python -m codevouch_bench.navigate", "machine": machine(), "corpora": corpora}
    write_json(args.out, result)
    print(json.dumps(result, indent=2))
