"""The "One query across many repositories" section of docs/BENCHMARKS.md, from
bench/results/bench-across-scale.json (what codevouch_bench.across_scale writes)."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from codevouch_bench.lib.common import RESULTS as RESULTS_DIR
from codevouch_bench.lib.common import read_json_if_exists

RESULTS = RESULTS_DIR / "bench-across-scale.json"
# The same figure, its repositories built with the packaged model (`--model`): what a user waits for.
MODEL_RESULTS = RESULTS_DIR / "bench-across-scale-model.json"
# The same figure at a million chunks in all (`--chunks`): stores filled with random vectors.
MILLION_RESULTS = RESULTS_DIR / "bench-across-scale-million.json"
# The model's figure with work trees of a real project's size (`--tree-files`): what each call's check costs.
TREES_RESULTS = RESULTS_DIR / "bench-across-scale-trees.json"


SERVER = "Chroma server, builder"
READER = "Chroma server, reader (team snapshots)"


def _build(r: dict[str, Any]) -> str:
    return "earlier run" if r["build_s"] is None else f"{r['build_s']:.0f}"


def _row(label: str, r: dict[str, Any], repos: int, build: str) -> str:
    cli = ", ".join(f"{s:.2f}" for s in r["cold_cli_s"]) if "cold_cli_s" in r else "-"
    edit = (f"{r['edit_ms']:.0f} ms, {r['edit_git']} git, {'found' if r['edit_live'] else 'MISSED'}"
            if "edit_ms" in r else "-")
    e = r.get("engine")
    engine = (f"{e['warm_p50_ms']:.0f} / {e['warm_p95_ms']:.0f} ms (first {e['first_s']:.1f} s, the engine's "
              f"{e['engine_first_s']:.1f} s)" if e else "-")
    return (f"| {repos} | {label} | {build} | {r['first_ms']:.0f} | {r['warm_p50_ms']:.0f} | {r['warm_p95_ms']:.0f} | "
            f"{r.get('git_per_query', '-')} | {edit} | {cli} | {engine} |")


def _rows(data: dict[str, Any]) -> list[str]:
    rows = []
    for r in data["rows"]:
        rows.append(_row("this code", r, r["repos"], _build(r)))
        if "before" in r:
            rows.append(_row(f"before ({r['before']['code']})", r["before"], r["repos"], "same index"))
        if "server" in r:
            rows.append(_row(f"this code, {SERVER}", r["server"], r["repos"], _build(r["server"])))
        if "server_reader" in r:
            rows.append(_row(f"this code, {READER}", r["server_reader"], r["repos"], "the builder's"))
    return rows


_HEADER = ("| repositories | code | build s | first call ms | warm p50 ms | warm p95 ms | git processes per warm query | "
           "warm call after an edit | cold CLI s | CLI through the engine, warm p50 / p95 |\n"
           "|---|---|---|---|---|---|---|---|---|---|")


def _table(path: Path, intro: Callable[[dict[str, Any]], str]) -> list[str]:
    """A run's own table under its introduction, with its notes, if the run is there."""
    data = read_json_if_exists(path)
    if data is None:
        return []
    return [intro(data), _HEADER, *_rows(data), *(f"\n{note}" for note in data.get("notes", []))]


def _when(data: dict[str, Any]) -> str:
    m = data["machine"]
    return (f"{', '.join(str(r['repos']) for r in data['rows'])} repositories, at {m.get('date')}, load average "
            f"{m.get('load_avg_1m_at_start')} at its start")


def _model_intro(data: dict[str, Any]) -> str:
    """The run whose repositories were built with a real model."""
    return (f"\nThe same figure with the repositories built with `{data.get('model')}` (`--model`; {_when(data)}): a "
            "query first bounds each repository and searches only those whose bound can place a hit in the fused top "
            "k (docs/SEARCH.md, \"Only the repositories that can place a hit\"), so the model's similarities decide "
            f"how many are searched. Rerun: `{data['command']} --work DIR --sizes 100 --before CHECKOUT --out FILE`. "
            "Its last column (`--engine`): whole `codevouch search QUERY --all-repos --json -k 10` processes in one of "
            "the repositories, answered by the resident engine, as an agent's calls are.\n")


def _million_intro(data: dict[str, Any]) -> str:
    """The run whose repositories were filled to `--chunks` in all."""
    return (f"\nThe same figure at {data['chunks']:,} chunks in all (`--chunks`; {_when(data)}). Each repository is "
            "committed as above, then its index is filled as a build writes it instead of built: its own chunks "
            "repeated under distinct ids and text hashes up to its share, each with a random unit vector (the store "
            "that \"Search at a million chunks\" fills; bench/codevouch_bench/lib/synthetic.py), written to the "
            f"embedding cache too, as a build leaves them, and the model `{data.get('model')}` recorded, so each query "
            "is embedded by it. Random vectors make every repository's dense bound alike and low, so the words decide "
            "which repositories are searched (the notes say how many): the table is the stores' cost at this size, "
            "not a model's pruning (embedding a million real chunks takes ~8 hours on this machine's 2 cores). "
            f"Rerun: `{data['command']} --work DIR --sizes 100 --out FILE`.\n")


def _trees_intro(data: dict[str, Any]) -> str:
    """The model's run with a vendored tree in every repository (`--tree-files`)."""
    return (f"\nThe same figure with work trees of a real project's size (`--tree-files`; {_when(data)}): each "
            f"repository also commits {data['tree_files']:,} files under `vendor/` (the pooled files again, copy after "
            "copy, their first 2 KB), which a build does not embed (the built-in vendor rule), so the chunks and the "
            f"bounds are those of a repository without them, built with `{data.get('model')}`. What changes is the "
            "check every call makes of each working tree: past 1,000 entries a work tree is not looked at by stat "
            "data (a walk in Python would cost more than git's), so each call asks `git status` of every repository "
            "bounded (docs/SEARCH.md, \"Bounded\"). Rerun: "
            f"`{data['command']} --work DIR --sizes 100 --out FILE`.\n")


def section(path: Path = RESULTS, model_path: Path = MODEL_RESULTS, million_path: Path = MILLION_RESULTS,
            trees_path: Path = TREES_RESULTS) -> str:
    data = read_json_if_exists(path)
    if data is None:
        return ""
    m = data["machine"]
    rows = _rows(data)
    return "\n".join([
        "\n## One query across many repositories\n",
        f"Rerun: `{data['command']} --work DIR [--before CHECKOUT]"
        f"{'' if '--server' in data['command'] else ' [--server]'}` (writes "
        "bench/results/bench-across-scale.json).\n",
        f"At {m.get('date')} (load average {m.get('load_avg_1m_at_start')} at its start, {m.get('cores')} cores, shared: "
        "absolute times are inflated by the other work on the machine; compare the rows of one size, measured in "
        f"the same run). The {data['files']} Python files of six pinned sdists (requests, urllib3, werkzeug, flask, "
        "click, httpx) dealt round-robin into N repositories, each committed and built into one index directory "
        f"with `{data.get('model', 'fake-bow-64')}`; {data['queries']} queries, the first doc-comment sentence of "
        "sampled functions. "
        "`Indexes.search(k=10)`, every returned hit validated against its own working tree: the first call (a "
        "fresh `Indexes`, codevouch's caches emptied), then the warm calls on the same `Indexes` (p50, p95), the "
        "git processes a warm call starts, one warm call right after an uncommitted edit in one repository (its "
        "time, its git processes, and whether that repository's overlay searched the edited file live), and three "
        "cold CLI processes (`codevouch search --all-repos --json`, no engine). A `before` row: the same timings "
        "by an older checkout's codevouch, in its own process, on the same repositories and index. "
        f"`{SERVER}` rows (`--server`): the same repositories built again into an index directory of their own with "
        "their vectors on a Chroma server the bench starts for the size (`chroma run` of the installed chromadb, "
        "on loopback, on the same machine, new data each run) and timed the same way by that index directory "
        f"(`CODEVOUCH_CHROMA_URL` set: the ledger local, each repository's dense query sent to the server); `{READER}`"
        " rows: by a reader's empty index directory, each repository's published snapshot fetched by its first "
        "call (so the first call is every repository's download) and searched locally, the dense half on the "
        "server.\n",
        _HEADER,
        *rows,
        "",
        "A warm search keeps each repository's `Index` and remote label (the label re-read when .git/config "
        "changes), searches the repositories on up to 8 threads, and checks only the hits that make the fused top "
        "k. A repository nobody touched since the last call starts no git process: its HEAD and its `git status` "
        "are git's last answers, kept while a look at stat data alone (the git directory's HEAD, refs, index and "
        "configuration files, and every folder and entry of the working tree, inode, size, mtime and ctime) finds "
        "nothing changed, and nothing it looked at was written within 2 s of the look "
        "(codevouch/worktree/git/unchanged.py); an edited repository is asked again, as the edit row shows. A "
        "repository's own search (its ledger connection, its space's nearest vectors, a tantivy search, its "
        "ranking) is about 10 ms of one core on this machine. Past 8 repositories a query first bounds each one "
        "on one ledger (~0.8 ms warm, what did not change since the last query kept; "
        "codevouch/retriever/bound.py) and searches only those whose bound can place a "
        "hit; with the fake embedder here the bounds are flat (its similarities all 0.3-0.75), so 33-95 of 100 "
        "are still searched: the table below, built with the packaged model, is what a user waits for.",
        *(f"\n{note}" for note in data.get("notes", [])),
        *_table(model_path, _model_intro),
        *_table(million_path, _million_intro),
        *_table(trees_path, _trees_intro),
    ]) + "\n"
