#!/usr/bin/env python
"""Figure 2: search latency, warm (library, one process) and cold (the CLI as a process).

Stores of 10k / 100k chunks hold real records with synthetic random vectors (see
codevouch_bench/lib/synthetic.py): the store's cost is measured, not the ranking. Queries are real
(first sentences of docstrings of the same code) and embedded by the real model.
Cold CLI times sit beside bare `import chromadb` and `import sentence_transformers`
processes, the part of a cold start no code of ours can remove.
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import resource
import shutil
import time
from pathlib import Path
from typing import Any

from codevouch_bench.lib import cli, corpus
from codevouch_bench.lib.common import PY, REPO_ROOT, log, machine, read_json, run_timed, summary, write_json
from codevouch_bench.lib.config import Profile
from codevouch_bench.lib.docstrings import strip_python
from codevouch_bench.lib.synthetic import build_synthetic_index


def queries_from(root: Path, n: int, seed: int) -> list[str]:
    found = [t.query for p, data in corpus.tree_files(root, suffixes=(".py",)).items()
             for t in strip_python(data.decode("utf-8", "replace"), p)[1]]
    return random.Random(seed).sample(found, min(n, len(found)))


def validator_available() -> bool:
    _, proc = run_timed([PY, "-c", "from codevouch.validator import validate"], check=False)
    return proc.returncode == 0


def warm(repo: Path, index_dir: Path, queries: list[str], fake: bool) -> dict[str, Any]:
    """Library latency in one process with the model loaded: search() by mode, and its parts."""
    import numpy as np

    from codevouch import SearchRequest
    from codevouch.embedding import FakeEmbedder, MiniLMEmbedder
    from codevouch.retriever.search import search
    from codevouch.store import VectorStore, space_name
    from codevouch.worktree.identity import identify

    emb = FakeEmbedder() if fake else MiniLMEmbedder()
    search(repo, SearchRequest(queries[0]), index_dir, embedder=emb)  # warm-up: model, Chroma's HNSW in memory
    modes = ["hybrid", "dense", "lexical"]
    times: dict[str, list[float]] = {f"search_{m}_ms": [] for m in modes}
    embeds, stores = [], []
    store = VectorStore(index_dir)
    live = space_name(identify(repo).id, emb.name)
    rng = np.random.default_rng(0)
    cpu: list[float] = []  # the default mode's CPU time, this process and its git children
    for q in queries:
        for m in modes:
            start, before = time.perf_counter(), _cpu()
            search(repo, SearchRequest(q, k=10, mode=m), index_dir, embedder=emb)
            times[f"search_{m}_ms"].append(time.perf_counter() - start)
            if m == "hybrid":
                cpu.append(_cpu() - before)
        start = time.perf_counter()
        emb.embed_query(q)
        embeds.append(time.perf_counter() - start)
        vec = rng.standard_normal(emb.dim)
        start = time.perf_counter()
        store.query(live, (vec / np.linalg.norm(vec)).tolist(), 10)
        stores.append(time.perf_counter() - start)
    out = {name: summary(t) for name, t in times.items()}
    out.update(_index_search(repo, index_dir, queries, emb))
    out["search_ms"] = out["search_hybrid_ms"]  # the default mode
    return {**out, "search_cpu_ms": summary(cpu), "query_embedding_ms": summary(embeds),
            "store_query_ms": summary(stores), "load_average": round(os.getloadavg()[0], 2)}


def _index_search(repo: Path, index_dir: Path, queries: list[str], emb: Any) -> dict[str, Any]:
    """What a library user runs: Index.search (k=10, overlay on), with the validator (the
    default) and without; the two interleaved per query so neither gets a quieter moment."""
    from codevouch import Index

    index = Index(repo, index_dir, embedder=emb, record=False)
    index.search(queries[0], k=10)  # warm-up: its caches and the lexical copy opened
    times: dict[str, list[float]] = {"index_search_validated_ms": [], "index_search_no_validate_ms": []}
    for i, q in enumerate(queries):
        order = [True, False] if i % 2 == 0 else [False, True]
        for validate in order:
            start = time.perf_counter()
            index.search(q, k=10, validate=validate)
            times["index_search_validated_ms" if validate else "index_search_no_validate_ms"].append(
                time.perf_counter() - start)
    return {name: summary(t) for name, t in times.items()}


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def cold(repo: Path, index_dir: Path, queries: list[str], repeats: int, validate: bool) -> dict[str, Any]:
    """The CLI as a new process each time, in-process (CODEVOUCH_SERVER=off: what every call cost
    before the resident engine, and what one costs where it is off); variants interleaved so that
    neither gets the page cache (or a quiet moment of a shared CPU) to itself. Then the same
    search through the engine: the first call (no engine running: it starts one) and the calls
    after it (the engine warm)."""
    variants = {"cli_search_no_validate": ["--no-validate"]}
    if validate:
        variants["cli_search_validated"] = []
    times: dict[str, list[float]] = {name: [] for name in variants}
    base = [PY, "-m", "codevouch", "search", "--repo", str(repo), "--index", str(index_dir), "--json"]
    for i in range(repeats):
        # Alternate which variant goes first: the second of a pair runs the same query on a
        # warmer page cache, which would otherwise always favour the same variant.
        order = list(variants.items()) if i % 2 == 0 else list(reversed(variants.items()))
        for name, extra in order:
            times[name].append(run_timed([*base, queries[i % len(queries)], *extra],
                                         env={"CODEVOUCH_SERVER": "off"})[0])
    out = {name: summary(t) for name, t in times.items()}
    out.update(_through_engine(base, index_dir, queries, repeats))
    out["bare_chroma_open_and_query"] = summary([run_timed([PY, "-c", CHROMA_PROBE, str(index_dir / "chroma")])[0]
                                                 for _ in range(repeats)])
    return out


def _through_engine(base: list[str], index_dir: Path, queries: list[str], repeats: int) -> dict[str, Any]:
    """`base` (a validated search) through the resident engine: each first call with no engine
    running (it answers in-process, then starts one), and `repeats` warm calls after each, once
    the engine it started listens."""
    on, stop = {"CODEVOUCH_SERVER": "on"}, [PY, "-m", "codevouch", "serve", "--stop", "--index", str(index_dir)]
    status = [PY, "-m", "codevouch", "serve", "--status", "--json", "--index", str(index_dir)]
    first: list[float] = []
    warm: list[float] = []
    warm_up: list[float] = []
    for i in range(max(1, repeats // 2)):
        run_timed(stop, check=False)
        first.append(run_timed([*base, queries[i % len(queries)]], env=on)[0])
        deadline = time.monotonic() + 300
        up: dict[str, Any] = {}
        while time.monotonic() < deadline:
            # Listening, and done with its warm-up search (server.Engine.warm_up; an engine without
            # one has no warm_up_s field: listening is enough).
            try:
                up = json.loads(run_timed(status, check=False)[1].stdout or "{}")
            except ValueError:
                up = {}
            if up.get("running") and (up.get("warm_up_s") is not None or "warm_up_s" not in up):
                break
            time.sleep(0.2)
        if up.get("warm_up_s") is not None:
            warm_up.append(float(up["warm_up_s"]))
        warm += [run_timed([*base, queries[(i + j) % len(queries)]], env=on)[0] for j in range(repeats)]
    run_timed(stop, check=False)
    return {"cli_search_engine_first": summary(first), "cli_search_engine_warm": summary(warm),
            **({"engine_warm_up": summary(warm_up)} if warm_up else {})}


# What Chroma alone pays to answer from this store in a new process: import, open the client and
# the largest collection (its HNSW graph is read here), one query. The part of a cold search that
# grows with the store and that no code of ours runs.
CHROMA_PROBE = """
import sys
import chromadb
from chromadb.config import Settings
client = chromadb.PersistentClient(path=sys.argv[1], settings=Settings(anonymized_telemetry=False))
col = max(client.list_collections(), key=lambda c: c.count())
# A stored vector as the query: the store's own dimension, whatever the model (--fake: 64).
col.query(query_embeddings=col.get(limit=1, include=["embeddings"])["embeddings"], n_results=10,
          include=["distances"])
"""


# The probe's own peak is VmHWM, its address space's high-water mark: getrusage's ru_maxrss
# carries the parent's resident set across fork and exec, and the parent here holds the store
# it just filled (at a million chunks it reported the 3.8 GB filling process as the search's).
MEMORY_PROBE = """
import sys
from codevouch import SearchRequest
from codevouch.retriever.search import search
from pathlib import Path
repo, index, queries = sys.argv[1], Path(sys.argv[2]), sys.argv[3:]
for q in queries:
    search(repo, SearchRequest(q, k=10), index)
with open("/proc/self/status") as status:
    print(next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024)
"""


def search_memory(repo: Path, index_dir: Path, queries: list[str]) -> float:
    """Peak RSS (MiB) of a process that opens the index and runs the queries (hybrid, k=10)."""
    _, proc = run_timed([PY, "-c", MEMORY_PROBE, str(repo), str(index_dir), *queries[:20]])
    return round(float(proc.stdout.strip().splitlines()[-1]), 1)


def import_floor(repeats: int) -> dict[str, Any]:
    """What every cold process pays before codevouch does anything."""
    probes = {"python_startup": "pass", "import_chromadb": "import chromadb",
              "import_sentence_transformers": "import sentence_transformers",
              "import_codevouch_cli": "import codevouch.cli",
              # codevouch's torch-free query path: NumPy MiniLM, weights loaded, one query embedded
              "load_numpy_query_encoder": "from codevouch.embedding.numpy_minilm import numpy_minilm; "
                                          "numpy_minilm().embed(['warm up'])"}
    floor = {}
    for name, code in probes.items():
        try:
            floor[name] = summary([run_timed([PY, "-c", code])[0] for _ in range(repeats)])
        except RuntimeError as exc:  # a probe of a module this codevouch lacks: say so, go on
            floor[name] = {"error": str(exc)[-300:]}
    return floor


# CODEVOUCH_BENCH_REUSE_STORES=1 keeps the synthetic stores of the last run (a 100k fill takes
# ~7 min on 2 cores) when they were written for the same source, seed and size by the same store
# code: the hash of the files that decide what a store holds (below). Search code may differ, so
# a change to ranking or reading can be measured again in minutes. Default: fill afresh.
REUSE_ENV = "CODEVOUCH_BENCH_REUSE_STORES"
STORE_CODE = ("codevouch/store", "codevouch/indexer", "codevouch/syntax", "bench/codevouch_bench/lib/synthetic.py")


def store_code_hash() -> str:
    digest = hashlib.sha256()
    for name in STORE_CODE:
        top = REPO_ROOT / name
        if not top.exists():    # a moved module must not silently drop out of the hash
            raise SystemExit(f"bench_search: STORE_CODE names {name}, which does not exist; update the list")
        for f in sorted([top] if top.is_file() else top.rglob("*.py")):
            digest.update(str(f.relative_to(REPO_ROOT)).encode() + b"\0" + f.read_bytes() + b"\0")
    return digest.hexdigest()


def _reusable(marker: Path, expected: dict[str, Any]) -> bool:
    return marker.exists() and read_json(marker) == expected


def run_figure(prof: Profile, fake: bool, store_sizes: tuple[int, ...] | None = None) -> dict[str, Any]:
    spec = prof.build_source.spec
    corpus.fetch([spec])
    reuse = os.environ.get(REUSE_ENV) == "1"
    work = cli.workdir(prof, "search", fresh=not reuse)
    root = corpus.extract(spec)
    repo = work / "repo"
    marker = {"spec": spec, "seed": prof.seed, "fake": fake, "store_code": store_code_hash()}
    if not (reuse and _reusable(work / "repo.json", marker)):
        shutil.rmtree(repo, ignore_errors=True)
        corpus.repo_from_files(repo, corpus.tree_files(root), spec)
        write_json(work / "repo.json", marker)
    queries = queries_from(root, prof.warm_queries, prof.seed)
    has_validator = validator_available()
    sizes: dict[str, Any] = {}
    for size in store_sizes or prof.search_sizes:
        index_dir = work / f"index-{size}"
        stored = {**marker, "size": size, "repo_made": read_json(work / "repo.json")}
        fill: float | None = None
        phases: dict[str, float] = {}
        if not (reuse and _reusable(work / f"index-{size}.json", stored)):
            shutil.rmtree(index_dir, ignore_errors=True)
            start = time.perf_counter()
            if fake:
                from codevouch.embedding import FakeEmbedder
                build_synthetic_index(repo, index_dir, size, prof.seed, embedder=FakeEmbedder.name,
                                      dim=FakeEmbedder.dim, phases=phases)
            else:
                build_synthetic_index(repo, index_dir, size, prof.seed, phases=phases)
            fill = time.perf_counter() - start
            write_json(work / f"index-{size}.json", stored)
        log(f"search: {size} synthetic chunks " + (f"stored in {fill:.1f} s" if fill is not None else "reused") +
            "; warm and cold queries next")
        sizes[str(size)] = {"fill_seconds": round(fill, 1) if fill is not None else "reused",
                            **({"fill_phases_seconds": phases} if phases else {}),
                            # the filling process's peak so far (it only grows: read with the size order)
                            "fill_process_peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                                                               / 1024, 1) if fill is not None else None,
                            "index_dir_mib": round(sum(f.stat().st_size for f in index_dir.rglob("*")
                                                       if f.is_file()) / 2**20, 1),
                            "warm": warm(repo, index_dir, queries, fake),
                            "cold": cold(repo, index_dir, queries, prof.repeats, has_validator and not fake),
                            "search_process_peak_rss_mib": None if fake else search_memory(repo, index_dir, queries)}
    return {"figure": "search", "profile": prof.name, "machine": machine(), "source": spec,
            "vectors": "synthetic random unit vectors over real chunk records (lexical index real too); "
                       "real query embeddings",
            "queries": len(queries), "validator_available": has_validator,
            **({"notes": [f"Stores reused from an earlier run ({REUSE_ENV}=1): written by the same store code "
                          "for the same source, seed and size."]}
               if any(v["fill_seconds"] == "reused" for v in sizes.values()) else {}),
            "sizes": sizes, "import_floor": import_floor(prof.repeats)}


def main() -> None:
    p = cli.parser(__doc__ or "")
    p.add_argument("--sizes", type=int, nargs="+", metavar="CHUNKS",
                   help="store sizes to measure instead of the profile's (e.g. 1000000; a 1M fill takes tens of "
                        "minutes and a few GB of memory on 2 cores)")
    args = p.parse_args()
    result = run_figure(cli.profile(args), args.fake, tuple(args.sizes) if args.sizes else None)
    if args.out:
        write_json(args.out, result)
    for size, r in result["sizes"].items():
        log(f"search {size}: warm p50 {r['warm']['search_ms']['p50']} ms, cold {r['cold']}")


if __name__ == "__main__":
    main()
