"""Many branches of one real repository: storage, build time per extra branch, query latency,
before (an older codevouch release, given as a git revision of codevouch) and after (this tree).

    python -m codevouch_bench.branches SOURCE COMMIT [--branches 23] [--before REV] [--out FILE]

SOURCE is a path or URL of a git repository; COMMIT is the commit its `main` is built at.
The other branches are the repository's own branches (refs/heads/*), then its pull-request
heads (refs/pull/*/head, highest number first) whose tips are no newer than COMMIT and share
history with it: real branches, as a nightly `--all-branches` of a team's clone would see. The
chosen (branch, commit) pairs are printed and written to the JSON, so a run can be checked.

Each side runs in its own process on a fresh index with the real embedding model (loaded
before the clock starts): `main` first, then every other branch, one build each; then 20
queries (first docstring lines of the repository's functions) on 3 branches, warm, k=10,
default (hybrid) mode. Storage is the index directory on disk (Chroma + ledger; the ledger
includes the embedding cache, the same size on both sides).
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent     # bench/codevouch_bench
CODEVOUCH = HERE.parents[1]                # the repository: its codevouch/ is the "after" side
CACHE = CODEVOUCH / ".bench-cache"
DEFAULT_OUT = HERE.parent / "results" / "bench-branches.json"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout


def prepare(source: str, commit: str, count: int, where: Path | None = None) -> tuple[Path, list[tuple[str, str]]]:
    """A work clone under .bench-cache with `main` at COMMIT and count-1 real branches."""
    work = (where or CACHE) / f"branches-{commit[:12]}"
    if not work.exists():
        work.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
        git(work, "fetch", "-q", "--no-tags", source, "+refs/heads/*:refs/remotes/src/*")
        git(work, "reset", "-q", "--hard", commit)
    when = int(git(work, "show", "-s", "--format=%ct", commit).strip())
    # Pull-request heads, newest number first, fetched one at a time: a mirror may lack the
    # objects of a few (a refused fetch skips that one).
    heads = [line.split()[1] for line in git(work, "ls-remote", source, "refs/pull/*/head").splitlines()]
    heads.sort(key=lambda ref: -int(ref.split("/")[2]))
    candidates = git(work, "for-each-ref", "--format=%(refname:lstrip=2)", "refs/remotes/src/").split()
    chosen: list[tuple[str, str]] = [("main", commit)]
    seen = {commit}
    for ref in [*candidates, *heads]:
        if len(chosen) >= count:
            break
        if ref.startswith("refs/pull/"):
            local = f"refs/remotes/pr/{ref.split('/')[2]}"
            if subprocess.run(["git", "-C", str(work), "fetch", "-q", "--no-tags", source, f"+{ref}:{local}"],
                              capture_output=True).returncode != 0:
                continue
            ref = local
        sha = git(work, "rev-parse", ref).strip()
        if sha in seen or int(git(work, "show", "-s", "--format=%ct", sha).strip()) > when:
            continue
        if subprocess.run(["git", "-C", str(work), "merge-base", commit, sha], capture_output=True).returncode:
            continue  # an unrelated history (a docs site, say) is no branch of this code
        seen.add(sha)
        chosen.append((ref.replace("refs/remotes/", "").replace("/", "-"), sha))
    for name, sha in chosen[1:]:
        git(work, "branch", "-f", name, sha)
    return work, chosen


def queries(repo: Path, commit: str, n: int = 20) -> list[str]:
    """First docstring lines of the repository's Python functions (else path words)."""
    out: list[str] = []
    for path in sorted(git(repo, "ls-tree", "-r", "--name-only", commit).splitlines()):
        if not path.endswith(".py") or len(out) >= n:
            continue
        try:
            tree = ast.parse(git(repo, "show", f"{commit}:{path}"))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc and len(doc.split()) >= 4:
                    out.append(doc.strip().splitlines()[0])
                    if len(out) >= n:
                        break
    return out or [Path(p).stem.replace("_", " ") for p in git(repo, "ls-files").splitlines()[:n]]


def disk(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def cpu_seconds() -> float:
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def ledger_tables(ledger: Path) -> dict[str, int]:
    """Bytes per table (and index) of the ledger, from SQLite's dbstat: what dominates."""
    with sqlite3.connect(f"file:{ledger}?mode=ro", uri=True) as db:
        try:
            rows = db.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()
        except sqlite3.OperationalError:  # SQLite built without dbstat
            return {}
    return {name: int(size) for name, size in rows}


def worker(repo: Path, index_dir: Path, branches: list[str], qs: list[str], fake: bool = False,
           seed: str | None = None, fake_dim: int = 0, save: str | None = None) -> dict[str, object]:
    """Runs with whichever codevouch is first on the import path (PYTHONPATH) (the release under test)."""
    from codevouch.embedding import FakeEmbedder, MiniLMEmbedder
    from codevouch.indexer.build import build_index
    from codevouch.store import Ledger

    class WideFake(FakeEmbedder):
        # The fake embedder at the real model's width: vectors (and the embedding cache) take
        # the real model's bytes, so storage figures hold; times and rankings do not.
        name = f"fake-bow-{fake_dim}"
        dim = fake_dim

    emb = (WideFake() if fake_dim else FakeEmbedder()) if fake else MiniLMEmbedder()
    if seed:
        # The first branch's vectors, embedded by an earlier run: its build is then a warm one.
        Ledger(index_dir).close()
        with sqlite3.connect(index_dir / "state.sqlite") as db:
            db.execute("ATTACH DATABASE ? AS seed", (seed,))
            db.execute("INSERT OR IGNORE INTO embeddings SELECT model, text_hash, vector FROM seed.embeddings")
    emb.embed(["warm up"])
    seconds: dict[str, float] = {}
    cpu: dict[str, float] = {}   # CPU time of the build: this process and its children (git)
    chunks: dict[str, int] = {}
    for name in branches:
        start, cpu0 = time.perf_counter(), cpu_seconds()
        [s] = build_index(repo, index_dir, emb, branches=[name])
        seconds[name] = round(time.perf_counter() - start, 3)
        cpu[name] = round(cpu_seconds() - cpu0, 3)
        chunks[name] = s.chunks
        if name == branches[0]:
            first_bytes = disk(index_dir)
    Ledger(index_dir).close()  # a checkpoint: the write-ahead log goes into the file
    sizes = {"first": first_bytes, "total": disk(index_dir), "chroma": disk(index_dir / "chroma"),
             "ledger": sum(disk(p) if p.is_dir() else p.stat().st_size for p in index_dir.glob("state.sqlite*")),
             "lexical": disk(index_dir / "lexical"), "ledger_tables": ledger_tables(index_dir / "state.sqlite")}
    times: list[float] = []
    query_cpu = 0.0
    for name in [branches[0], branches[len(branches) // 2], branches[-1]]:
        search = searcher(repo, index_dir, name, emb)
        search(qs[0])  # warm: HNSW in memory
        for q in qs:
            start, cpu0 = time.perf_counter(), cpu_seconds()
            search(q)
            times.append(time.perf_counter() - start)
            query_cpu += cpu_seconds() - cpu0
    times.sort()
    if save:  # the embedding cache, to seed later runs (both sides then start from the same vectors)
        Path(save).unlink(missing_ok=True)
        with sqlite3.connect(index_dir / "state.sqlite") as db:
            db.execute("VACUUM INTO ?", (save,))
    return {"seconds": seconds, "cpu_seconds": cpu, "chunks": chunks, "bytes": sizes,
            "query_ms": {"p50": round(1000 * times[len(times) // 2], 1),
                         "p95": round(1000 * times[int(len(times) * 0.95) - 1], 1), "n": len(times),
                         "cpu_mean": round(1000 * query_cpu / len(times), 1)}}


def searcher(repo: Path, index_dir: Path, branch: str, emb: object) -> Callable[[str], object]:
    """The library search of one branch, k=10, as the release under test spells it: this tree's
    takes a SearchRequest (codevouch.retriever.search.search(repo, request, index_dir, ...)); a
    release before it (the 'before' side) took the request's fields as keywords."""
    import inspect

    from codevouch.retriever.search import search

    if "request" not in inspect.signature(search).parameters:
        return lambda q: search(repo, q, index_dir, branch=branch, k=10, embedder=emb)
    from codevouch import SearchRequest

    return lambda q: search(repo, SearchRequest(q, branch=branch, k=10), index_dir, embedder=emb)


def run_side(code: Path, repo: Path, branches: list[str], qs: list[str], fake: bool,
             seed: Path | None = None, fake_dim: int = 0, save: Path | None = None) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="cv-branches-") as tmp:
        spec = json.dumps({"repo": str(repo.resolve()), "index": str(Path(tmp) / "index"), "branches": branches,
                           "queries": qs, "fake": fake, "seed": str(seed.resolve()) if seed else None, "fake_dim": fake_dim,
                           "save": str(save) if save else None})
        # The release under test first on the path, then this package (its worker mode); run in
        # the temp dir, since `python -m` puts the working directory ahead of PYTHONPATH.
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(code), str(HERE.parent)]), "HF_HUB_OFFLINE": "1",
               "CODEVOUCH_CHROMA_URL": ""}
        proc = subprocess.run([sys.executable, "-m", "codevouch_bench.branches", "--worker", spec], env=env,
                              cwd=tmp, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"worker with {code} failed:\n{proc.stderr[-3000:]}")
        return json.loads(proc.stdout.strip().splitlines()[-1])


def summarise(side: dict[str, object], first: str) -> dict[str, object]:
    seconds: dict[str, float] = side["seconds"]  # type: ignore[assignment]
    extra = sorted(v for k, v in seconds.items() if k != first)
    cpu: dict[str, float] = side.get("cpu_seconds") or {}  # type: ignore[assignment]
    extra_cpu = sorted(v for k, v in cpu.items() if k != first)
    return {"first_branch_s": seconds[first], "extra_branch_s_median": extra[len(extra) // 2],
            "extra_branch_s_max": extra[-1], "extra_branches_s_total": round(sum(extra), 1),
            "extra_branch_median_of_first": round(extra[len(extra) // 2] / seconds[first], 4),
            **({"first_branch_cpu_s": cpu[first], "extra_branch_cpu_s_median": extra_cpu[len(extra_cpu) // 2],
                "extra_branches_cpu_s_total": round(sum(extra_cpu), 1)} if cpu else {}),
            "mb_total": round(side["bytes"]["total"] / 1e6, 1),  # type: ignore[index]
            "mb_chroma": round(side["bytes"]["chroma"] / 1e6, 1),  # type: ignore[index]
            "mb_ledger": round(side["bytes"]["ledger"] / 1e6, 1),  # type: ignore[index]
            "mb_lexical": round(side["bytes"].get("lexical", 0) / 1e6, 1),  # type: ignore[attr-defined]
            "mb_first": round(side["bytes"]["first"] / 1e6, 1),  # type: ignore[index]
            "storage_ratio": round(side["bytes"]["total"] / side["bytes"]["first"], 2),  # type: ignore[index]
            "query_ms": side["query_ms"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", nargs="?")
    parser.add_argument("commit", nargs="?")
    parser.add_argument("--branches", type=int, default=23)
    parser.add_argument("--before", help="codevouch revision for the 'before' side (omit to skip it)")
    parser.add_argument("--no-after", action="store_true", help="measure the 'before' side only")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--label", help="how to name the source in the report (default: SOURCE)")
    parser.add_argument("--fake", action="store_true", help="fake embedder: plumbing check, figures meaningless "
                        "(written under .bench-cache unless --out says otherwise)")
    parser.add_argument("--fake-dim", type=int, default=0, help="with --fake: vectors of this width (384 = the "
                        "real model's), so storage figures are the real model's; times still meaningless")
    parser.add_argument("--work", type=Path, help="where to make the work clone (default: under .bench-cache)")
    parser.add_argument("--seed-embeddings", type=Path, help="a SQLite file with an `embeddings` table (model, "
                        "text_hash, vector) copied into the 'after' side's fresh index first: its first branch "
                        "is then a warm build (recorded in the results)")
    parser.add_argument("--seed-both", action="store_true", help="seed the 'before' side too (then both "
                        "sides' builds take every vector the seed has from the cache: times compare like for like)")
    parser.add_argument("--save-embeddings", type=Path, help="write the last side's ledger (its embedding cache) "
                        "to this file, to seed later runs")
    parser.add_argument("--merge", type=Path, help="take sides missing from this run from this results file")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        spec = json.loads(args.worker)
        print(json.dumps(worker(Path(spec["repo"]), Path(spec["index"]), spec["branches"], spec["queries"],
                                spec.get("fake", False), spec.get("seed"), spec.get("fake_dim", 0),
                                spec.get("save"))))
        return
    if not args.source or not args.commit:
        parser.error("SOURCE and COMMIT are required")
    if args.fake and args.out == DEFAULT_OUT:  # never let plumbing numbers land where real ones live
        args.out = CACHE / "bench-branches-fake.json"
    repo, chosen = prepare(args.source, args.commit, args.branches, args.work)
    names = [n for n, _ in chosen]
    qs = queries(repo, args.commit)
    print(f"{len(chosen)} branches in {repo}:", ", ".join(f"{n}@{s[:8]}" for n, s in chosen), file=sys.stderr)
    result: dict[str, object] = {
        "command": " ".join(["python -m codevouch_bench.branches", *sys.argv[1:]]), "source": args.source,
        "source_label": args.label or args.source, "commit": args.commit, "branches": chosen, "queries": qs,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "load_avg_1m_at_start": round(os.getloadavg()[0], 2)}
    sides = [] if args.no_after else [("after", CODEVOUCH)]
    if args.before:
        from codevouch_bench.make_old_index import export_release

        old = Path(tempfile.mkdtemp(prefix="cv-before-"))
        export_release(CODEVOUCH, args.before, old)
        sides.insert(0, ("before", old))
        result["before_rev"] = args.before
    if args.seed_embeddings:
        result["after_seeded_with"] = str(args.seed_embeddings)
        if args.seed_both:
            result["before_seeded_with"] = str(args.seed_embeddings)
    if args.merge:
        earlier = json.loads(args.merge.read_text())
        if earlier["branches"] != [list(c) for c in chosen]:
            raise SystemExit(f"{args.merge} measured other branches; not merged.")
        for label in ("before", "after"):
            if label in earlier and label not in dict(sides):
                result[label] = earlier[label]
        result["merged_from"] = {"file": str(args.merge), "command": earlier.get("command"),
                                 "measured_at": earlier.get("measured_at")}
    try:
        run_sides(sides, repo, names, qs, args.fake, result, args.seed_embeddings, args.fake_dim,
                  args.seed_both, args.save_embeddings)
    finally:
        if args.before:
            shutil.rmtree(sides[0][1], ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)
    if args.out == DEFAULT_OUT:  # the section of docs/BENCHMARKS.md, with the other figures
        subprocess.run([sys.executable, "-m", "codevouch_bench", "--render"], check=True)


def run_sides(sides: list[tuple[str, Path]], repo: Path, names: list[str], qs: list[str], fake: bool,
              result: dict[str, object], seed: Path | None, fake_dim: int = 0, seed_both: bool = False,
              save: Path | None = None) -> None:
    for n, (label, code) in enumerate(sides):
        t0 = time.perf_counter()
        raw = run_side(code, repo, names, qs, fake, seed if label == "after" or seed_both else None, fake_dim,
                       save.resolve() if save and n == len(sides) - 1 else None)
        result[label] = {"raw": raw, **summarise(raw, "main"), "wall_s": round(time.perf_counter() - t0, 1)}
        print(label, json.dumps(result[label], indent=1)[:2000], file=sys.stderr)


if __name__ == "__main__":
    main()
