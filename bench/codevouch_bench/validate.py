#!/usr/bin/env python
"""Validator speed: `validate()` on 1,000 snippets against a naive per-snippet check.

A temporary git repository of a few thousand real Python files (the standard library,
copied and cycled to reach --files) is committed once; 1,000 search-hit-like snippets
(path, commit, blob_sha, lines, text, symbol), cut by codevouch's own chunker, are taken
from it at HEAD. Two scenarios:

  clean      the working tree equals HEAD;
  dirty_100  100 of the referenced files have uncommitted edits (a line appended to each;
             some also get a line inserted above a snippet or a line changed inside one,
             so verdicts vary).

For each scenario, in the same run and on the same tree, we time (median of --repeat
rounds, fewer if they would overrun --budget; the methods interleaved, the one right after the
naive check rotating; round one also
counts git processes and gives the verdicts):

  codevouch         validate(repo, snippets)
  codevouch strict  validate(repo, snippets, strict=True)   (hashes every referenced file)
  codevouch first   validate(repo, snippets) after clear_caches(): validate() keeps the
                    definitions it parsed, keyed by content, for later calls of the process; the
                    two figures above profit from that on the rounds after the first, this one
                    never does (imports, grammars and the rules' pattern caches are warm in every
                    column: the untimed call before the rounds loads them)
  naive             per snippet: `git rev-parse HEAD` plus a SHA-1 blob hash of the file in
                    Python, "fresh" when both equal the snippet's commit and blob_sha: what a
                    20-line script would do.

and report naive / codevouch. Usage:

    python -m codevouch_bench.validate [--files 3000] [--snippets 1000] [--repeat 5]
                                     [--budget 70] [--dirty 100] [--quick] [--json PATH]
                                     [--save-verdicts PATH] [--compare-verdicts PATH]

--save-verdicts with one version of codevouch and --compare-verdicts with another show that a
speed-up changed no verdict (reason, detail, citation and current code of every snippet).

`main(argv) -> dict` returns the same data that --json writes, for use from other modules.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sysconfig
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from codevouch.embedding import CHUNK_TOKEN_BUDGET
from codevouch.indexer.chunker import Chunk, chunk_text
from codevouch.validator import VERDICTS, clear_caches, validate
from codevouch_bench.lib.common import log, machine, timed_cpu

SEED = 20240611                      # fixed: the same files, snippets and edits on every run
QUICK_REPEAT = 2
MIN_ROUNDS = 3                       # fewest timed rounds the time budget may leave (unless --repeat is less)
DEFAULT_BUDGET_S = 70.0              # timed rounds, both scenarios together
SHARED_FILE_FRACTION = 0.2           # this share of snippets lands in a file another snippet uses


# ---------------------------------------------------------------- the test repository

def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> bytes:
    """Setup-only git calls (never timed); fail loudly, since a half-built repo skews everything."""
    proc = subprocess.run(("git", "-C", str(repo), *args), capture_output=True, env=env, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {proc.stderr.decode(errors='replace')}")
    return proc.stdout


def stdlib_sources() -> list[tuple[str, Path]]:
    """(relative path, absolute path) of every .py file of the standard library, sorted.

    site-packages is left out: it holds whatever was pip-installed here, so the corpus
    would differ between machines.
    """
    root = Path(sysconfig.get_paths()["stdlib"])
    found = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root).as_posix()
        if "site-packages" in rel.split("/") or not path.is_file():
            continue
        found.append((rel, path))
    found.sort()
    if not found:
        raise RuntimeError(f"no .py files found under {root}")
    return found


def make_repo(dest: Path, n_files: int) -> None:
    """Copy stdlib files into `dest` (cycled under lib0/, lib1/, ... to reach n_files) and commit."""
    sources = stdlib_sources()
    # An hour in the past: files whose mtime is in the same second as the index are
    # "racily clean" to git, and `git status` would re-hash them on every call, which a
    # real checkout does not do.
    past = time.time() - 3600
    for i in range(n_files):
        rel, src = sources[i % len(sources)]
        target = dest / f"lib{i // len(sources)}" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
        os.utime(target, (past, past))
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
           "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z"}
    git(dest, "init", "-q", env=env)
    git(dest, "add", "-A", env=env)
    # No signing prompts and no global hooks: the bench must run unattended anywhere.
    git(dest, "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null",
        "commit", "-q", "-m", "synthetic corpus", env=env)
    # One status now writes a fully refreshed index, so timed calls start from a steady state.
    git(dest, "status", "--porcelain", env=env)


def head_blobs(repo: Path) -> tuple[str, dict[str, str]]:
    """HEAD's commit and path -> blob id of every file, from one `ls-tree -r -z`."""
    head = git(repo, "rev-parse", "HEAD").decode().strip()
    blobs: dict[str, str] = {}
    for rec in git(repo, "ls-tree", "-r", "-z", "HEAD").decode("utf-8", "surrogateescape").split("\0"):
        if not rec:
            continue
        meta, _, path = rec.partition("\t")
        _mode, otype, sha = meta.split()
        if otype == "blob":
            blobs[path] = sha
    return head, blobs


# ---------------------------------------------------------------- snippets and edits

def word_count(text: str) -> int:
    """Stand-in token counter: chunk sizes only need to be roughly right, and the real
    tokenizer would load the embedding model just to cut snippets."""
    return len(text.split())


def file_chunks(repo: Path, path: str) -> list[Chunk]:
    """The chunks an index would hold for a file (the project's own chunker); [] for files
    that are not utf-8 text."""
    try:
        text = (repo / path).read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return []
    chunks, _lang = chunk_text(text, path, word_count, CHUNK_TOKEN_BUDGET)
    return [c for c in chunks if c.text.strip()]


def as_hit(path: str, chunk: Chunk, head: str, blob: str) -> dict[str, Any]:
    # The fields `codevouch search --json` gives each hit that the validator reads.
    return {"path": path, "commit": head, "blob_sha": blob, "start_line": chunk.start_line,
            "end_line": chunk.end_line, "text": chunk.text, "symbol": chunk.symbol}


def make_snippets(repo: Path, head: str, blobs: dict[str, str], count: int,
                  rng: random.Random) -> list[dict[str, Any]]:
    """`count` search-hit-like snippets: one chunk from each of ~80% as many distinct files,
    the rest (SHARED_FILE_FRACTION) further chunks of files already used."""
    n_distinct = max(1, round(count * (1 - SHARED_FILE_FRACTION)))
    order = sorted(blobs)
    rng.shuffle(order)
    chosen: dict[str, list[Chunk]] = {}
    for path in order:                      # chunk files only until enough are found
        if len(chosen) == n_distinct:
            break
        if chunks := file_chunks(repo, path):
            chosen[path] = chunks
    if not chosen:
        raise RuntimeError("no file in the repository yields a chunk")
    unused = {path: rng.sample(chunks, len(chunks)) for path, chunks in chosen.items()}
    snippets = [as_hit(path, unused[path].pop(), head, blobs[path]) for path in chosen]
    while len(snippets) < count:
        # Prefer files with chunks left; once all are used, repeat hits (search results do).
        left = [path for path, chunks in unused.items() if chunks]
        if left:
            path = rng.choice(left)
            chunk = unused[path].pop()
        else:
            path = rng.choice(list(chosen))
            chunk = rng.choice(chosen[path])
        snippets.append(as_hit(path, chunk, head, blobs[path]))
    rng.shuffle(snippets)   # search results do not come grouped by file
    return snippets


def dirty_files(repo: Path, snippets: Sequence[dict[str, Any]], n_dirty: int,
                rng: random.Random) -> dict[str, int]:
    """Uncommitted edits to `n_dirty` referenced files; returns how many got each kind of edit.

    Every one gets a line appended (the file changes, the snippet's text stays put). On top:
    a quarter get a line inserted at the top (the text moves), a quarter get a line inside
    one of their snippets changed (the text is gone, the symbol stays).
    """
    first_snippet: dict[str, dict[str, Any]] = {}
    for s in snippets:
        first_snippet.setdefault(s["path"], s)
    paths = rng.sample(sorted(first_snippet), min(n_dirty, len(first_snippet)))
    kinds: Counter[str] = Counter()
    for i, path in enumerate(paths):
        target = repo / path
        lines = target.read_text(encoding="utf-8").split("\n")
        if i % 4 == 1:
            lines.insert(0, "# inserted locally")
            kinds["line_inserted_above"] += 1
        elif i % 4 == 2:
            s = first_snippet[path]
            mid = (s["start_line"] + s["end_line"]) // 2
            lines[mid - 1] = lines[mid - 1] + "  # edited locally"
            kinds["line_changed_inside_snippet"] += 1
        else:
            kinds["append_only"] += 1
        if lines[-1] != "":
            lines.append("")            # keep the file ending in a newline before appending
        lines.insert(len(lines) - 1, "# appended locally")
        target.write_text("\n".join(lines), encoding="utf-8")
    return dict(kinds)


# ---------------------------------------------------------------- measuring

@contextmanager
def count_git_processes() -> Iterator[Counter[str]]:
    """Count git processes started while the block runs (counting only, behaviour unchanged).

    Only Popen is wrapped: subprocess.run starts its child through the module's Popen, so
    wrapping both would count every run() twice. A subclass keeps isinstance checks and
    the context-manager protocol that run() relies on.
    """
    counts: Counter[str] = Counter()
    original = subprocess.Popen

    class CountingPopen(original):  # type: ignore[misc,valid-type]
        def __init__(self, args: Any, *a: Any, **kw: Any) -> None:
            argv = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args)
            if argv and os.path.basename(os.fsdecode(argv[0])) == "git":
                # The subcommand follows git's global options: `-C <dir>`, `-c <key=value>` and
                # flags such as `--no-pager` (gitio passes all three to every git).
                rest = [os.fsdecode(a) for a in argv[1:]]
                while rest and (rest[0] in ("-C", "-c") or rest[0].startswith("--")):
                    rest = rest[2:] if rest[0] in ("-C", "-c") else rest[1:]
                counts[rest[0] if rest else "?"] += 1
            super().__init__(args, *a, **kw)

    subprocess.Popen = CountingPopen  # type: ignore[misc]
    try:
        yield counts
    finally:
        subprocess.Popen = original  # type: ignore[misc]


def naive_check(repo: Path, snippets: Sequence[dict[str, Any]]) -> int:
    """The baseline as a short script would write it: per snippet, ask git for HEAD and hash
    the file; fresh when both match the snippet. Returns how many it calls fresh."""
    fresh = 0
    for s in snippets:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"],
                              capture_output=True, check=True).stdout.decode().strip()
        try:
            data = (repo / s["path"]).read_bytes()
        except OSError:
            continue
        blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        fresh += head == s["commit"] and blob == s["blob_sha"]
    return fresh


def verdict_records(results: Sequence[Any]) -> list[dict[str, Any]]:
    """Everything validate() says about each snippet, in order: to compare two versions of the
    validator (--save-verdicts / --compare-verdicts) and the plain and strict runs of one."""
    return [{"reason": r.reason, "detail": r.detail, "citation": r.citation,
             "current": r.current.to_json() if r.current else None} for r in results]


def verdict_differences(a: Sequence[dict[str, Any]], b: Sequence[dict[str, Any]],
                        keys: Sequence[str] = ("reason", "detail", "citation", "current")) -> list[int]:
    """Indexes of the snippets whose records differ in `keys` (all when the counts differ)."""
    if len(a) != len(b):
        return list(range(max(len(a), len(b))))
    return [i for i, (x, y) in enumerate(zip(a, b)) if any(x[k] != y[k] for k in keys)]


def verdict_counts(results: Sequence[Any]) -> dict[str, int]:
    counts = Counter(r.verdict for r in results)
    return {v: counts.get(v, 0) for v in VERDICTS}


def measure(repo: Path, snippets: Sequence[dict[str, Any]], repeat: int, budget_s: float) -> dict[str, Any]:
    """One scenario: up to `repeat` rounds, each timing every method once on the same tree.

    Rounds stop early once another would overrun `budget_s` (0: no limit), but never
    before MIN_ROUNDS: with validate() at seconds per call, five rounds of two scenarios
    would take the bench past two minutes on a small shared machine.

    Methods alternate within a round rather than running back to back: on a shared machine
    the load drifts over a minute, and interleaving gives each method the same drift. Each round
    starts with the naive check, and which codevouch method comes right after it (and pays for
    its 1,000 processes) rotates, so that none always does.
    Round one also counts git processes and keeps results (the counter costs microseconds
    against milliseconds per git process; a separate counted call would cost a third more
    run time). A cold first round is one sample of `repeat`; the median absorbs it.
    """
    methods: dict[str, Callable[[], Any]] = {
        "codevouch": lambda: validate(repo, snippets),
        "codevouch_strict": lambda: validate(repo, snippets, strict=True),
        "naive": lambda: naive_check(repo, snippets),
        # validate() keeps the definitions it parsed, by content, for later calls
        # (validator/parsecache.py): the figures above profit from the rounds before them.
        # This one empties that cache first: no definitions kept from earlier calls.
        "codevouch_first": lambda: (clear_caches(), validate(repo, snippets))[1],
    }
    times: dict[str, list[float]] = {name: [] for name in methods}
    cpu: dict[str, list[float]] = {name: [] for name in methods}
    first: dict[str, Any] = {}
    procs: dict[str, dict[str, int]] = {}
    started = time.perf_counter()
    ours = [name for name in methods if name != "naive"]
    for round_no in range(repeat):
        spent = time.perf_counter() - started
        if budget_s and round_no >= min(MIN_ROUNDS, repeat) and spent * (round_no + 1) / round_no > budget_s:
            break
        # The naive check's 1,000 processes slow whatever runs right after them, so which of
        # codevouch's methods that is rotates from round to round (a plain rotation of all four
        # would not do: in a cycle every method keeps its predecessor).
        shift = round_no % len(ours)
        for name in ["naive", *ours[shift:], *ours[:shift]]:
            fn = methods[name]
            if round_no == 0:
                with count_git_processes() as counts:
                    elapsed, used, first[name] = timed_cpu(fn)
                procs[name] = dict(counts)
            else:
                elapsed, used, _ = timed_cpu(fn)
            times[name].append(elapsed)
            cpu[name].append(used)
    cv_s, st_s, nv_s, first_s = (statistics.median(times[name]) for name in methods)
    results, strict_results, naive_fresh = first["codevouch"], first["codevouch_strict"], first["naive"]
    c_plain, c_strict, c_naive = procs["codevouch"], procs["codevouch_strict"], procs["naive"]
    reasons = Counter(r.reason for r in results)
    records = verdict_records(results)
    return {"records": records,
        # The strict run hashes every file instead of trusting git's status: the same reasons
        # and locations from both say the fast path decided nothing differently (the details
        # differ by design: they say how the file was found unchanged).
        "strict_differs": len(verdict_differences(records, verdict_records(strict_results),
                                                  ("reason", "current"))),
        "codevouch_s": round(cv_s, 4), "codevouch_strict_s": round(st_s, 4), "naive_s": round(nv_s, 4),
        "codevouch_first_s": round(first_s, 4), "ratio_first": round(nv_s / first_s, 2),
        "ratio": round(nv_s / cv_s, 2), "ratio_strict": round(nv_s / st_s, 2),
        "best_s": {name: round(min(ts), 4) for name, ts in times.items()},
        "cpu_s": {name: round(statistics.median(ts), 4) for name, ts in cpu.items()},
        "ratio_cpu": round(statistics.median(cpu["naive"]) / statistics.median(cpu["codevouch"]), 2),
        "git_processes": sum(c_plain.values()), "git_processes_strict": sum(c_strict.values()),
        "git_processes_naive": sum(c_naive.values()),
        "git_subcommands": dict(sorted(c_plain.items())),
        "git_subcommands_strict": dict(sorted(c_strict.items())),
        "verdicts": verdict_counts(results), "verdicts_strict": verdict_counts(strict_results),
        "reasons": dict(sorted(reasons.items())), "naive_fresh": naive_fresh,
        "rounds": len(times["naive"]),
        "runs_s": {name: [round(t, 4) for t in ts] for name, ts in times.items()},
    }


# ---------------------------------------------------------------- report

def render(report: dict[str, Any]) -> str:
    m = report["machine"]
    out = [f"validate(): {report['snippets']} snippets, {report['files']} files, "
           f"median of up to {report['repeat']} runs (budget {report['budget_s']:g} s)",
           f"machine: {m['cpu']}, {m['cores']} cores ({m['cores_usable']} usable), "
           f"load {m['load_avg_1m_at_start']}, Python {m['python']}, {m['git']}, {report['date']}",
           ""]
    head = f"{'scenario':<11} {'runs':>4} {'codevouch':>10} {'strict':>10} {'naive':>10} {'naive/cv':>9} " \
           f"{'naive/strict':>13} {'git procs cv/strict/naive':>26}"
    out += [head, "-" * len(head)]
    for name, s in report["scenarios"].items():
        procs = f"{s['git_processes']}/{s['git_processes_strict']}/{s['git_processes_naive']}"
        out.append(f"{name:<11} {s['rounds']:>4} {s['codevouch_s'] * 1000:>8.1f}ms "
                   f"{s['codevouch_strict_s'] * 1000:>8.1f}ms "
                   f"{s['naive_s'] * 1000:>8.1f}ms {s['ratio']:>8.2f}x {s['ratio_strict']:>12.2f}x "
                   f"{procs:>26}")
    out.append("")
    out.append("first call (parse cache emptied before it; the figures above reuse definitions parsed "
               "by earlier calls), median:")
    for name, s in report["scenarios"].items():
        out.append(f"{name:<11} codevouch first call {s['codevouch_first_s'] * 1000:.1f}ms wall, "
                   f"{s['cpu_s']['codevouch_first'] * 1000:.1f}ms CPU, naive/first {s['ratio_first']:.2f}x")
    out.append("")
    out.append("CPU time (this process + its git children; less sensitive to other load), median:")
    for name, s in report["scenarios"].items():
        c = s["cpu_s"]
        out.append(f"{name:<11} codevouch {c['codevouch'] * 1000:.1f}ms, strict {c['codevouch_strict'] * 1000:.1f}ms, "
                   f"naive {c['naive'] * 1000:.1f}ms, naive/cv {s['ratio_cpu']:.2f}x; best wall codevouch "
                   f"{s['best_s']['codevouch'] * 1000:.1f}ms")
    out.append("")
    for name, s in report["scenarios"].items():
        verdicts = ", ".join(f"{k} {v}" for k, v in s["verdicts"].items())
        out.append(f"{name:<11} verdicts: {verdicts}; naive fresh: {s['naive_fresh']}; "
                   f"strict run differs on {s['strict_differs']}")
        out.append(f"{'':<11} reasons:  " + ", ".join(f"{k} {v}" for k, v in s["reasons"].items()))
    return "\n".join(out)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--files", type=int, default=3000, help="files in the synthetic repository")
    p.add_argument("--snippets", type=int, default=1000, help="snippets per validate() call")
    p.add_argument("--repeat", type=int, default=5, help="timed runs per method (median reported)")
    p.add_argument("--budget", type=float, default=DEFAULT_BUDGET_S,
                   help="seconds for the timed rounds of both scenarios together: fewer rounds "
                        f"(at least {MIN_ROUNDS}) when --repeat would overrun it; 0 for no limit")
    p.add_argument("--dirty", type=int, default=100, help="files edited in the dirty scenario")
    p.add_argument("--quick", action="store_true", help=f"{QUICK_REPEAT} timed runs instead of --repeat")
    # --out and --fake as every figure script has them (codevouch_bench/lib/cli.py), so the runner runs this one alike.
    p.add_argument("--json", "--out", dest="json", type=Path, help="also write the results as JSON to this path")
    p.add_argument("--fake", action="store_true", help="accepted for the runner; the validator uses no model")
    p.add_argument("--save-verdicts", type=Path,
                   help="write every snippet's reason, detail, citation and current code (JSON) here")
    p.add_argument("--compare-verdicts", type=Path,
                   help="compare every snippet's verdict with a file from --save-verdicts (another version "
                        "of codevouch, same options) and report the snippets that differ")
    args = p.parse_args(argv)
    if min(args.files, args.snippets, args.repeat) < 1 or args.dirty < 0 or args.budget < 0:
        p.error("--files, --snippets and --repeat must be positive, --dirty and --budget not negative")
    return args


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    repeat = QUICK_REPEAT if args.quick else args.repeat
    started = time.perf_counter()
    report: dict[str, Any] = {"machine": machine(),
                              "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                              "scenarios": {}, "snippets": args.snippets, "files": args.files,
                              "repeat": repeat, "budget_s": args.budget}
    rng = random.Random(SEED)
    with tempfile.TemporaryDirectory(prefix="codevouch-bench-validate-") as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        log(f"building a {args.files}-file repository in {repo}")
        make_repo(repo, args.files)
        head, blobs = head_blobs(repo)
        snippets = make_snippets(repo, head, blobs, args.snippets, rng)
        report["distinct_files_referenced"] = len({s["path"] for s in snippets})

        # One untimed call first: it imports the tree-sitter grammar and codevouch's lazy
        # modules, a one-off cost no later call in either scenario pays.
        validate(repo, snippets)
        log(f"clean: {len(snippets)} snippets, up to {repeat} runs per method")
        report["scenarios"]["clean"] = measure(repo, snippets, repeat, args.budget / 2)

        edits = dirty_files(repo, snippets, args.dirty, rng)
        name = f"dirty_{args.dirty}"
        log(f"{name}: edits {edits}")
        report["scenarios"][name] = measure(repo, snippets, repeat, args.budget / 2)
        report["scenarios"][name]["edits"] = edits
    report["total_s"] = round(time.perf_counter() - started, 1)
    records = {name: sc.pop("records") for name, sc in report["scenarios"].items()}
    if args.save_verdicts:
        args.save_verdicts.parent.mkdir(parents=True, exist_ok=True)
        args.save_verdicts.write_text(json.dumps(records) + "\n")
    if args.compare_verdicts:
        before = json.loads(args.compare_verdicts.read_text())
        # Reasons (and so verdicts) apart from the rest: the citation's or current code's
        # wording may change on purpose, a verdict never silently.
        report["verdicts_changed"] = {name: verdict_differences(before.get(name, []), recs, ("reason",))
                                      for name, recs in records.items()}
        report["records_changed"] = {name: verdict_differences(before.get(name, []), recs)
                                     for name, recs in records.items()}

    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(render(report))
    for name, changed in report.get("verdicts_changed", {}).items():
        other = report["records_changed"][name]
        print(f"{name}: {len(changed)} verdicts (reasons) differ from {args.compare_verdicts}"
              + (f" (snippets {changed[:10]})" if changed else "")
              + f"; {len(other)} records differ in any of reason, detail, citation, current"
              + (f" (snippets {other[:10]})" if other else ""))
    print(f"\ntotal {report['total_s']} s")
    return report


if __name__ == "__main__":
    main()
