"""docs/BENCHMARKS.md from the results JSON: a headline table, then one section per figure."""
from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from codevouch_bench.lib.across_scale_report import section as across_scale_section
from codevouch_bench.lib.branches_report import section as branches_section
from codevouch_bench.lib.common import RESULTS as RESULTS_DIR
from codevouch_bench.lib.common import read_json_if_exists
from codevouch_bench.lib.config import BASELINES, SOURCE_BASELINE
from codevouch_bench.lib.encoder_report import section as encoder_section
from codevouch_bench.lib.engine_report import section as engine_section
from codevouch_bench.lib.hit_tokens_report import section as hit_tokens_section
from codevouch_bench.lib.large_report import headline as large_headline
from codevouch_bench.lib.large_report import section as large_section
from codevouch_bench.lib.million_report import headline as million_headline
from codevouch_bench.lib.million_report import section as million_section
from codevouch_bench.lib.names_c_family_report import section as names_c_family_section
from codevouch_bench.lib.names_scripting_report import section as names_scripting_section
from codevouch_bench.lib.navigate_report import section as navigate_section
from codevouch_bench.lib.overlay_report import first_section as overlay_first_section
from codevouch_bench.lib.overlay_report import headline as overlay_headline
from codevouch_bench.lib.overlay_report import section as overlay_section
from codevouch_bench.lib.parse_speed_report import section as parse_speed_section
from codevouch_bench.lib.small_build_report import section as small_build_section
from codevouch_bench.lib.truth import MEANING
from codevouch_bench.lib.validated_search_report import section as validated_search_section
from codevouch_bench.lib.whole_quality_report import section as whole_quality_section
from codevouch_bench.lib.windows_report import headline as windows_headline
from codevouch_bench.lib.windows_report import section as windows_section
from codevouch_bench.lib.windows_report import splitters_headline, splitters_section

VERDICTS = ("usable", "stale-but-ok", "historical-only", "excluded")


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def cell(v: Any) -> str:
        return "–" if v is None else str(v).replace("|", "\\|")
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def pct(v: float | None) -> str | None:
    return None if v is None else f"{v * 100:.1f}%"


def ms(s: dict[str, Any] | None, key: str = "p50") -> str | None:
    return None if not s else f"{s[key]:.0f} ms" if s[key] >= 100 else f"{s[key]:.1f} ms"


def _ok(fig: dict[str, Any] | None) -> bool:
    return bool(fig) and "error" not in fig and "skipped" not in fig


def machine_line(m: dict[str, Any]) -> str:
    v = m["versions"]
    return (f"{m['date']} · {m['cores']} cores, {m['cpu']}, {m['memory_gib']} GiB · load avg at start "
            f"{m['load_avg_1m_at_start']} · Python {m['python']}, torch {v.get('torch')}, chromadb "
            f"{v.get('chromadb')}, sentence-transformers {v.get('sentence-transformers')}, bm25s {v.get('bm25s')}, "
            f"langchain-text-splitters {v.get('langchain-text-splitters')}")


def headline(figs: dict[str, Any]) -> str:
    rows: list[list[Any]] = []
    b = figs.get("build")
    if _ok(b):
        rows.append(["build throughput vs bare embedding loop",
                     f"{b['full_build']['chunks_per_second']} vs {b['bare_embedding_loop']['chunks_per_second']} chunks/s",
                     f"overhead x{b['pipeline_overhead_ratio']}"])
        rows.append(["no-op rebuild / one-file change / 2nd branch (of full build)",
                     f"{pct(b['noop_rebuild']['fraction_of_full'])} / {pct(b['one_file_change']['fraction_of_full'])}"
                     f" / {pct(b['second_branch']['fraction_of_full'])}",
                     f"full build {b['full_build']['seconds']} s, {b['full_build']['chunks']} chunks"])
    rows += large_headline()
    s = figs.get("search")
    if _ok(s):
        for size, r in s["sizes"].items():
            cold = r["cold"]
            rows.append([f"search at {int(size):,} chunks: warm p50 / cold CLI p50",
                         f"{ms(r['warm']['search_ms'])} / {ms(cold.get('cli_search_no_validate'))}"
                         + (f" ({ms(cold['cli_search_validated'])} validated)" if "cli_search_validated" in cold else ""),
                         f"floor: import chromadb {ms(s['import_floor']['import_chromadb'])}"])
    rows += million_headline(ms)
    rows += overlay_headline()
    q = figs.get("quality")
    if _ok(q) and "held-out" in q.get("overall", {}) and "per_corpus" in q:
        o = q["overall"]["held-out"]["overlap"]
        best = best_baseline(o)
        rows.append([f"find a function by its doc's first sentence, held-out, {q.get('sampling', 'sampled')}: "
                     "MRR@10 (codevouch default vs best baseline)",
                     f"{o['codevouch']['mrr@10']} vs {o[best]['mrr@10']} ({best}): "
                     f"x{ratio(o['codevouch'], o[best])}",
                     f"{o['codevouch']['queries']} queries in {sum(p['split'] == 'held-out' for p in q['per_corpus'])} "
                     f"repositories; R@10 {o['codevouch']['recall@10']} vs {o[best]['recall@10']}"])
    rows += _whole_quality_rows()
    f = figs.get("freshness")
    if _ok(f) and "sources" in f:
        o, t = f["overall"]["codevouch-chunks"], f["overall"]["tool-definitions"]
        rows.append(["freshness: verdict accuracy / false-fresh (codevouch chunks; another tool's snippets)",
                     f"{pct(o['accuracy'])} / {o['codevouch']['false_fresh']} of {o['codevouch']['stale_truth']}; "
                     f"{pct(t['accuracy'])} / {t['codevouch']['false_fresh']} of {t['codevouch']['stale_truth']}",
                     f"exists+hash check: false-stale {pct(o['naive_exists_and_hash']['false_stale_rate'])}; "
                     f"exists-only: false-fresh {pct(o['naive_exists_only']['false_fresh_rate'])}"])
        rows += windows_headline(f)
    sp = figs.get("splitters")
    if _ok(sp):
        rows += splitters_headline(sp)
    return table(["figure", "result", "context"], rows)


def section_build(b: dict[str, Any]) -> str:
    full, bare = b["full_build"], b["bare_embedding_loop"]
    rows = [
        ["full build", full["seconds"], full["chunks"], full["embedded"], full["chunks_per_second"], "100%",
         full["peak_rss_mib"]],
        ["bare embedding loop (same texts, same process)", bare["seconds"], bare["texts"], bare["texts"],
         bare["chunks_per_second"], pct(bare["seconds"] / full["seconds"]), "(in the build's process)"],
    ]
    for key, label in (("noop_rebuild", "no-op rebuild"), ("one_file_change", "one-file change"),
                       ("second_branch", f"second branch ({b['second_branch'].get('files_changed')} files differ)")):
        r = b[key]
        last = r["runs"][-1]
        rows.append([label, r["median_seconds"], last["chunks"], last["embedded"], None,
                     pct(r["fraction_of_full"]), r["peak_rss_mib_max"]])
    cli = b["noop_rebuild_cli_process_seconds"]
    where = ", ".join(b.get("subdirs") or []) or "the whole sdist: code, tests, docs"
    return (f"Source: `{b['source']}` ({where}; committed to a temp repo), embedder {b['embedder']}. "
            f"Library times, model pre-loaded (load: {full['model_load_seconds']} s). Memory: "
            f"{b['memory_method']}.\n\n"
            + table(["measurement", "seconds (median)", "chunks", "embedded", "chunks/s", "of full build",
                     "peak RSS MiB"], rows)
            + f"\nPipeline overhead (bare loop chunks/s ÷ build chunks/s, medians of {len(b.get('pair_ratios', [1]))} "
            f"alternating pairs): **x{b['pipeline_overhead_ratio']}**; per pair {b.get('pair_ratios')}, "
            f"1-min load average after each (build, bare): {b.get('pair_load_avg')}. Time inside `embed()` "
            f"during the build: {pct(b.get('embedding_share_of_build'))} of it. "
            f"A no-op `codevouch index build` as a process (start-up included): {cli['median']} s median "
            f"({cli['runs']}).\n")


def section_search(s: dict[str, Any]) -> str:
    rows, lib = [], []
    for size, r in s["sizes"].items():
        w, c = r["warm"], r["cold"]
        rows.append([f"{int(size):,}", f"{ms(w['search_ms'])} / {ms(w['search_ms'], 'p95')}",
                     f"{ms(w['search_cpu_ms'])} / {ms(w['search_cpu_ms'], 'p95')}" if "search_cpu_ms" in w else None,
                     w.get("load_average"), ms(w.get("search_dense_ms")), ms(w.get("search_lexical_ms")),
                     f"{ms(w['query_embedding_ms'])}", f"{ms(w['store_query_ms'])} / {ms(w['store_query_ms'], 'p95')}",
                     f"{ms(c.get('cli_search_no_validate'))} / {ms(c.get('cli_search_no_validate'), 'p95')}",
                     f"{ms(c.get('cli_search_validated'))} / {ms(c.get('cli_search_validated'), 'p95')}"
                     if "cli_search_validated" in c else "validator not available",
                     f"{ms(c.get('cli_search_engine_first'))} / {ms(c.get('cli_search_engine_warm'))} / "
                     f"{ms(c.get('cli_search_engine_warm'), 'p95')}" if "cli_search_engine_warm" in c else None,
                     r.get("search_process_peak_rss_mib"), r["fill_seconds"]])
        if "index_search_validated_ms" in w:
            lib.append([f"{int(size):,}", *(f"{ms(w[k])} / {ms(w[k], 'p95')}"
                                            for k in ("index_search_no_validate_ms", "index_search_validated_ms")),
                        r.get("fill_process_peak_rss_mib"), r.get("index_dir_mib")])
    floor = s["import_floor"]
    frows = [[k.replace("_", " "), ms(v), ms(v, "p95"), v["n"]] if "error" not in v else
             [k.replace("_", " "), "failed", None, None] for k, v in floor.items()]
    return (f"Stores: {s['vectors']} (source `{s['source']}`); {s['queries']} real queries. "
            "Warm = library `search()` in one process, model loaded, k=10; cold = `python -m codevouch "
            "search ... --json` as a new process each time, in-process (`CODEVOUCH_SERVER=off`); engine = the "
            "same validated search through the resident engine: the first call (no engine running: it starts "
            "one) and the warm calls after it.\n\n"
            + table(["chunks", "warm search p50 / p95 (default: hybrid)",
                     "its CPU p50 / p95 (process + git children)", "load avg (1 min)", "dense only p50", "lexical only p50",
                     "query embedding p50", "store query p50 / p95",
                     "cold CLI --no-validate p50 / p95", "cold CLI validated p50 / p95",
                     "engine: first call p50 / warm p50 / p95", "search process peak RSS MiB", "fill s"], rows)
            + ("\nWhat a library user runs, `Index(...).search(q, k=10)` (overlay on), without and with the "
               "validator, interleaved per query; beside it the filling process's peak RSS and the index "
               "directory's size:\n\n"
               + table(["chunks", "Index.search validate=False p50 / p95", "Index.search (validated) p50 / p95",
                        "fill process peak RSS MiB", "index dir MiB"], lib) if lib else "")
            + "\nWhat every cold process pays before codevouch runs (`python -c ...`, medians):\n\n"
            + table(["probe", "p50", "p95", "runs"], frows)
            + _cold_ratio(s)
            + "".join(f"\n{note}\n" for note in s.get("notes", [])))


def _cold_ratio(s: dict[str, Any]) -> str:
    """The cold CLI against its floor (the target: at most 1.3x `import chromadb` plus the query
    encoder's load), from the same run's medians."""
    floor = s["import_floor"]
    chroma, encoder = floor.get("import_chromadb", {}), floor.get("load_numpy_query_encoder", {})
    if "p50" not in chroma or "p50" not in encoder:
        return ""
    base = chroma["p50"] + encoder["p50"]
    parts = []
    for size, r in s["sizes"].items():
        c = r["cold"]
        cells = [f"{label} {c[key]['p50'] / base:.2f}x" for key, label in
                 (("cli_search_no_validate", "--no-validate"), ("cli_search_validated", "validated"))
                 if key in c and "p50" in c[key]]
        bare = c.get("bare_chroma_open_and_query")
        if bare and "p50" in bare and "p50" in c.get("cli_search_no_validate", {}):
            # The bare process imports chromadb too: the floor plus what opening this store adds.
            with_store = bare["p50"] + encoder["p50"]
            cells.append(f"against import, open and query of this store in a bare chromadb process + the encoder "
                         f"({bare['p50']:.0f} + {encoder['p50']:.0f} ms) {c['cli_search_no_validate']['p50'] / with_store:.2f}x")
        parts.append(f"{int(size):,} chunks: " + ", ".join(cells))
    return (f"\nCold CLI against its floor, `import chromadb` + the query encoder's load "
            f"({ms(chroma)} + {ms(encoder)} = {base:.0f} ms; target at most 1.3x): " + "; ".join(parts) + ".\n")


BASELINE_NAMES = BASELINES


def best_baseline(scores: dict[str, Any]) -> str:
    return max((m for m in scores if m in BASELINE_NAMES), key=lambda m: scores[m].get("mrr@10", 0))


def ratio(a: dict[str, Any], b: dict[str, Any]) -> float | None:
    return round(a["mrr@10"] / b["mrr@10"], 2) if b.get("mrr@10") else None


def _queries_per_corpus(q: dict[str, Any]) -> str:
    most = q.get("max_queries_per_corpus")
    return f"at most {most} queries per repository" if most else "a query per documented library function"


def section_quality(q: dict[str, Any]) -> str:
    corpora = [[p["corpus"], f"`{p['spec']}`", p["language"], p["split"], p["repo_files"], p["sampled_files"],
                f"{p['sampled_bytes'] // 1000} kB", p["indexed_files"], p["documented_functions"], p["queries"]]
               for p in q["per_corpus"]]
    parts = [f"Embedder {q['embedder']}. Each repository is sampled to at most {q['corpus_bytes'] // 1000} kB of "
             f"text files (≤ {q['max_file_bytes'] // 1000} kB each; a seeded hash order, library code first up to "
             f"half of it) and committed with its docs stripped; {_queries_per_corpus(q)} "
             f"(seed {q['seed']}). {q['texts_embedded']} texts embedded in this run (the rest from the "
             f"cache), {q['seconds']} s.\n",
             table(["corpus", "pinned source", "language", "split", "files in repo", "sampled", "bytes",
                    "indexed by codevouch", "documented library functions", "queries"], corpora)]
    for split in ("held-out", "tuning"):
        if split not in q["overall"]:
            continue
        o, sym = q["overall"][split]["overlap"], q["overall"][split]["symbol"]
        best = best_baseline(o)
        parts.append(f"\n**{split}, all corpora** (micro-average over queries; codevouch default ÷ best baseline "
                     f"({best}): x{ratio(o['codevouch'], o[best])}):\n")
        parts.append(table(["method", "queries", "MRR@10", "R@1", "R@5", "R@10", "symbol MRR@10", "symbol R@10"],
                           [[f"**{m}**" if m == "codevouch" else m, sc["queries"], sc["mrr@10"], sc["recall@1"],
                             sc["recall@5"], sc["recall@10"], sym[m]["mrr@10"], sym[m]["recall@10"]]
                            for m, sc in o.items()]))
    rows = []
    for p in q["per_corpus"]:
        o, sym = p["scores"]["overlap"], p["scores"]["symbol"]
        if not o["codevouch"].get("queries"):
            continue
        best = best_baseline(o)
        for m, sc in o.items():
            chunks = p["chunks"].get(m, p["chunks"]["codevouch"] if m.startswith("codevouch") else None)
            rows.append([p["corpus"], p["split"], f"**{m}**" if m == "codevouch" else m, sc["mrr@10"],
                         sc["recall@1"], sc["recall@5"], sc["recall@10"], sym[m]["mrr@10"], chunks,
                         f"x{ratio(o['codevouch'], o[best])} vs {best}" if m == "codevouch" else None])
    behind = [f"{p['corpus']} ({p['split']}: {p['scores']['overlap']['codevouch']['mrr@10']} vs "
              f"{p['scores']['overlap'][best_baseline(p['scores']['overlap'])]['mrr@10']}, "
              f"{best_baseline(p['scores']['overlap'])})" for p in q["per_corpus"]
              if p["scores"]["overlap"]["codevouch"].get("queries")
              and p["scores"]["overlap"]["codevouch"]["mrr@10"]
              < p["scores"]["overlap"][best_baseline(p["scores"]["overlap"])]["mrr@10"]]
    parts.append("\ncodevouch's default is below the best baseline on: " + ("; ".join(behind) or "no corpus")
                 + ". Per corpus:\n")
    parts.append(table(["corpus", "split", "method", "MRR@10", "R@1", "R@5", "R@10", "symbol MRR@10", "chunks",
                        "codevouch ÷ best baseline"], rows))
    # Written beside the figure by whoever ran it: which knobs were tried, what won and what lost.
    parts += [f"\n{note}\n" for note in q.get("notes", [])]
    return "\n".join(parts)


def _identifier_rows(ids: dict[str, Any]) -> list[list[Any]]:
    name, words = ids.get("name", {}), ids.get("words", {})
    rows = []
    for m in dict.fromkeys([*name, *words]):
        n, w = name.get(m, {}), words.get(m, {})
        rows.append([f"**{m}**" if m == "codevouch" else m, n.get("queries"), n.get("recall@1"), n.get("mrr@10"),
                     w.get("queries"), w.get("recall@1"), w.get("mrr@10")])
    return rows


IDENTIFIERS = RESULTS_DIR / "bench-identifiers.json"
SENTENCES = RESULTS_DIR / "bench-quality-sentences.json"


def section_identifiers(path: Path = IDENTIFIERS) -> str:
    """The "Identifier queries" section, from bench/results/bench-identifiers.json: {"runs": [the quality
    figure's JSON of each run, with "commit"], "notes": [...]} (codevouch_bench.quality --out)."""
    data = read_json_if_exists(path)
    if data is None:
        return ""
    parts = ["## Identifier queries\n",
             "Rerun: `python -m codevouch_bench.quality --split held-out --whole --out FILE` (its JSON, with "
             "\"commit\", is one of bench/results/bench-identifiers.json's `runs`).\n",
             "A function, method or class whose short name the repository's parsed files define once (the "
             "benchmark's own parsers: Python's `ast`, the tree-sitter walk of codevouch_bench/lib/doccomments.py; never "
             "codevouch's), asked for by its name (`raise_for_status`) and by its words (`raise for status`; "
             "names of two words or more). The answer is that definition, scored at the line level (right file, "
             "overlapping lines) for every method. `grep` lists the definition lines of the name (`def NAME`, "
             "`fn NAME`, `func (r T) NAME`, `NAME(...) {`) in path order; `bm25` is the docstring figure's. "
             "Same corpora, same tuning / held-out split and same indexes as the docstring figure (section 3), "
             "whose MRR@10 is given beside each split. `codevouch-no-names` is the search without the name "
             "list (name_weight 0, name_first_words 0): the ranking before it.\n"]
    for run in data["runs"]:
        parts.append(f"\n**{run.get('sampling', 'sampled')}**, at {run.get('commit', '?')}, "
                     f"{run.get('seconds')} s: `{run.get('command', '')}` "
                     f"(at most {run.get('identifier_queries_per_form')} queries per repository and form):\n")
        for split in ("held-out", "tuning"):
            ids = run["overall"].get(split, {}).get("identifiers")
            if not ids:
                continue
            doc = run["overall"][split]["overlap"]
            others = ", ".join(f"{m} {doc[m]['mrr@10']}" for m in ("codevouch-no-names", "bm25", "window-40",
                                                                   "langchain-1000", SOURCE_BASELINE) if m in doc)
            parts.append(f"\n{split} ({', '.join(p['corpus'] for p in run['per_corpus'] if p['split'] == split)}): "
                         f"docstring MRR@10 codevouch {doc['codevouch']['mrr@10']} ({others}; "
                         f"{doc['codevouch']['queries']} queries)\n")
            parts.append(table(["method", "name queries", "name: definition at rank 1", "name MRR@10",
                                "words queries", "words: at rank 1", "words MRR@10"], _identifier_rows(ids)))
    parts += [f"\n{note}\n" for note in data.get("notes", [])]
    # The sentence priors' runs (tuning and held-out, codevouch_bench.quality --out), with their text.
    sentences = read_json_if_exists(SENTENCES) or {}
    parts += [f"\n{note}\n" for note in sentences.get("notes", [])]
    return "\n".join(parts)


FRESHNESS_SOURCES = {"codevouch-chunks": "codevouch's own chunks",
                     "tool-definitions": "another tool's snippets (every definition, nested included)"}


def _whole_quality_rows(path: Path = IDENTIFIERS) -> list[list[Any]]:
    """Headline rows from the whole-repository quality run kept in bench/results/bench-identifiers.json
    (codevouch_bench.quality --whole; too long for a default run), when there is one."""
    data = read_json_if_exists(path)
    if data is None:
        return []
    runs = [r for r in data.get("runs", []) if r.get("sampling") == "whole repositories"]
    held = runs[0]["overall"].get("held-out") if runs else None
    if not held or "identifiers" not in held:
        return []
    o, ids = held["overlap"], held["identifiers"]
    best = best_baseline(o)
    n, w = ids["name"], ids["words"]
    return [["find a function by its doc's first sentence, held-out, whole repositories: MRR@10 (codevouch vs "
             "best baseline)", f"{o['codevouch']['mrr@10']} vs {o[best]['mrr@10']} ({best}): x{ratio(o['codevouch'], o[best])}",
             f"{o['codevouch']['queries']} queries; {runs[0].get('commit', '?')}, `{runs[0].get('command', '')}`"],
            ["a definition by its exact name / by its words, held-out, whole repositories: at rank 1",
             f"{n['codevouch'].get('recall@1')} / {w['codevouch'].get('recall@1')}",
             f"grep {n.get('grep', {}).get('recall@1')} / –; bm25 {n.get('bm25', {}).get('recall@1')} / "
             f"{w.get('bm25', {}).get('recall@1')}; {n['codevouch'].get('queries')} / {w['codevouch'].get('queries')} queries"]]


def section_freshness(f: dict[str, Any]) -> str:
    if "sources" not in f:
        return "(an older freshness result without snippet sources; rerun codevouch_bench.freshness)\n"
    classes = list(f["expected"])
    meaning = table(["class", "what happened (ground truth)", "expected verdict"],
                    [[c, f.get("meaning", {}).get(c) or MEANING.get(c, ""), " or ".join(f["expected"][c])]
                     for c in classes])
    pairs = []
    for p in f["pairs"]:
        for src in FRESHNESS_SOURCES:
            r = p[src]
            naive = r.get("naive_exists_and_hash")
            pairs.append([f"{p['old']} → {p['new']}", src, r["snippets"], pct(r["accuracy"]),
                          r["codevouch"]["false_fresh"], pct(r["codevouch"]["false_stale_rate"]),
                          pct(naive["false_stale_rate"]) if naive else "–",
                          pct(r["naive_exists_only"]["false_fresh_rate"]) if naive else "–",
                          r["renamed_current_points_at_new_path"], f"{r['validate_seconds']} s"])
    out = ("Every snippet of release N is validated with the working tree at release N+1, from two sources: "
           + "; ".join(f"**{k}**: {v}" for k, v in f["sources"].items())
           + f". Index embedder: {f['index_embedder']}. Ground truth: `git diff -M` between the releases and "
           "the benchmark's own parsers on both versions (Python's `ast`, a tree-sitter query for Rust, a "
           "tree-sitter walk of its own for C, C++, C#, Kotlin, Swift, Ruby, Lua, PHP, Scala and shell: "
           "codevouch_bench/lib/tooldefs.py, codevouch_bench/lib/truth.py), never the validator or codevouch's chunker. "
           f"False-fresh counts snippets whose code is gone or changed ({', '.join(f['stale_truth'])}) "
           f"labelled usable or stale-but-ok; false-stale counts snippets whose code is current "
           f"({', '.join(f['fresh_truth'])}) labelled historical-only; "
           f"{', '.join(f['ambiguous'])} are in neither rate (either verdict defensible).\n\n"
           + meaning + "\n"
           + table(["pair", "source", "snippets", "accuracy", "false-fresh", "false-stale", "hash-check false-stale",
                    "exists-check false-fresh", "renames → new path", "validate time"], pairs))
    for src, label in FRESHNESS_SOURCES.items():
        o = f["overall"][src]
        crow = [[c, "/".join(f["expected"][c]), *[o["confusion"].get(c, {}).get(v, 0) for v in VERDICTS],
                 sum(o["confusion"].get(c, {}).values())] for c in classes if c in o["confusion"]]
        out += (f"\nConfusion matrix, {label}, all pairs ({o['snippets']} snippets, accuracy "
                f"{pct(o['accuracy'])}, false-fresh {o['codevouch']['false_fresh']}):\n\n"
                + table(["ground truth", "expected", *VERDICTS, "total"], crow))
        for p in f["pairs"]:
            r = p[src]
            prow = [[c, *[r["confusion"][c].get(v, 0) for v in VERDICTS]] for c in classes if c in r["confusion"]]
            out += (f"\n{p['old']} → {p['new']}, {label}:\n\n" + table(["ground truth", *VERDICTS], prow))
    o = f["overall"]["codevouch-chunks"]
    if "naive_exists_and_hash" in o:
        checks = [[name, o[key]["false_fresh"], pct(o[key]["false_fresh_rate"]), o[key]["false_stale"],
                   pct(o[key]["false_stale_rate"])]
                  for key, name in (("codevouch", "codevouch validate"),
                                    ("naive_exists_and_hash", "file exists and hash equals indexed hash"),
                                    ("naive_exists_only", "file exists"))]
        out += "\ncodevouch's chunks under each check:\n\n" + table(["check", "false-fresh", "rate", "false-stale",
                                                                       "rate"], checks)
    disagreements = [(src, w) for p in f["pairs"] for src in FRESHNESS_SOURCES for w in p[src]["disagreements_sample"]]
    out += ("\nDisagreements (verdict outside the expected set), first ones:\n\n"
            + table(["source", "class", "verdict", "reason", "path", "symbol", "lines", "validator's current"],
                    [[src, w["class"], w["verdict"], w["reason"], w["path"], w["symbol"], w["lines"], w.get("current")]
                     for src, w in disagreements[:20]])) if disagreements else "\nNo disagreements.\n"
    return out + windows_section(f, table)


def section_validate(v: dict[str, Any]) -> str:
    if isinstance(v.get("scenarios"), dict):
        rows = [[name, sc.get("rounds"), f"{sc['codevouch_s'] * 1000:.1f} ms", f"{sc['codevouch_strict_s'] * 1000:.1f} ms",
                 f"{sc['naive_s'] * 1000:.1f} ms", f"x{sc['ratio']}",
                 f"{sc['git_processes']}/{sc['git_processes_strict']}/{sc['git_processes_naive']}",
                 ", ".join(f"{k} {n}" for k, n in sc["verdicts"].items())]
                for name, sc in v["scenarios"].items()]
        m = v.get("machine", {})
        out = (f"From `codevouch_bench.validate` (written with the validator; run by the runner): `validate()` on "
               f"{v.get('snippets')} snippets over a {v.get('files')}-file repository (stdlib copies), against a "
               f"naive per-snippet check (`git rev-parse HEAD` + a SHA-1 of the file per snippet). Median of up to "
               f"{v.get('repeat')} runs; load average at its start {m.get('load_avg_1m_at_start')}.\n\n"
               + table(["scenario", "runs", "codevouch", "strict", "naive", "naive ÷ codevouch",
                        "git processes cv/strict/naive", "verdicts"], rows))
        cpu = [[name, f"{sc['cpu_s']['codevouch'] * 1000:.1f} ms", f"{sc['cpu_s']['codevouch_strict'] * 1000:.1f} ms",
                f"{sc['cpu_s']['naive'] * 1000:.1f} ms", f"x{sc['ratio_cpu']}", f"{sc['best_s']['codevouch'] * 1000:.1f} ms"]
               for name, sc in v["scenarios"].items() if "cpu_s" in sc]
        if cpu:
            out += ("\nCPU time of the same runs (the process and its git children; other people's load inflates "
                    "it far less than wall time), median, and the best wall time:\n\n"
                    + table(["scenario", "codevouch CPU", "strict CPU", "naive CPU", "naive ÷ codevouch (CPU)",
                             "codevouch best wall"], cpu))
        first = [[name, f"{sc['codevouch_first_s'] * 1000:.1f} ms", f"{sc['cpu_s']['codevouch_first'] * 1000:.1f} ms",
                  f"x{sc['ratio_first']}"]
                 for name, sc in v["scenarios"].items() if "codevouch_first_s" in sc]
        if first:
            out += ("\nFirst call: the same `validate()` right after `clear_caches()` (validate() keeps the "
                    "definitions it parsed, keyed by their text, for later calls of the process; the figures "
                    "above profit from that after their first round, these never do), median:\n\n"
                    + table(["scenario", "first call", "first call CPU", "naive ÷ first call"], first))
        # Written beside the figure by whoever ran it: what it was compared with, and how.
        out += "".join(f"\n{note}\n" for note in v.get("notes", []))
        return out
    body = {k: val for k, val in v.items() if k not in ("machine", "wall_seconds")}
    if isinstance(body.get("markdown"), str):
        return body["markdown"] + "\n"
    rows = []

    def flat(prefix: str, val: Any) -> None:
        if isinstance(val, dict):
            for k, x in val.items():
                flat(f"{prefix}.{k}" if prefix else str(k), x)
        elif not isinstance(val, list) or len(val) <= 6:
            rows.append([prefix, val])
    flat("", body)
    return "From `codevouch_bench.validate` (written with the validator), run by the runner:\n\n" + \
        table(["key", "value"], rows[:80])


SECTIONS = (("build", "1. Index build", section_build), ("search", "2. Search latency", section_search),
            ("quality", "3. Retrieval quality: docstring → function", section_quality),
            ("freshness", "4. Freshness verdicts on real evolution", section_freshness),
            ("validate", "5. Validation speed", section_validate))


def section_drift(d: dict[str, Any]) -> str:
    return ("From `codevouch_bench.drift`: `Index.drift()` on a repository of stdlib copies with some files "
            "edited (definitions changed, added, removed).\n\n"
            + table(["files", "modified", "first call", "warm median", "warm CPU median", "load avg (1 min)"],
                    [[d.get("files"), d.get("modified"), f"{d.get('first_call_s')} s", f"{d.get('warm_median_s')} s",
                      f"{d.get('warm_cpu_median_s')} s", d.get("load_average_1m")]])
            + f"\nFiles by state: {d.get('files_by_state')}; definitions by state: {d.get('definitions_by_state')}.\n")


def section_mcp(m: dict[str, Any]) -> str:

    shown = {k: v for k, v in m.items() if k != "wall_seconds"}
    return ("From `codevouch_bench.mcp`: `codevouch mcp` as a subprocess, called through the MCP SDK's stdio "
            "client (milliseconds; first call and median of the rest), over this repository's index.\n\n"
            f"```json\n{json.dumps(shown, indent=1)}\n```\n")


def section_output(o: dict[str, Any]) -> str:
    return "```\n" + "\n".join(o.get("output", [])) + "\n```\n"


def section_branches_run(b: dict[str, Any]) -> str:
    sides = {label: {k: v for k, v in side.items() if k != "raw"} for label, side in b.items()
             if label in ("before", "after") and isinstance(side, dict)}
    return (f"From `{b.get('command')}` (source {b.get('source_label')}, {len(b.get('branches', []))} branches):"
            f"\n\n```\n{sides}\n```\n")


# Figures a default run leaves out (--only NAME): a section only once they ran, so a
# results file without them renders as before.
OPTIONAL_SECTIONS = (("drift", "6. Drift speed", section_drift),
                     ("branches", "7. Many branches (--only branches)", section_branches_run),
                     ("mcp", "8. MCP server latency", section_mcp),
                     ("gitpython", "9. GitPython against codevouch's git plumbing", section_output),
                     ("splitters", "Splitter windows per splitter: a line above, a rename, a release",
                      lambda f: splitters_section(f, table)))


NOTES = """
## How each figure is made (and what it does not say)

- **Data.** Real code only: sdists from PyPI (`pip download --no-deps --no-binary :all:`), unpacked and
  committed to temp git repos under `.bench-cache/work/`, and packages of the local standard library.
  Rust comes from maturin's sdist (its `src/*.rs`). Real evolution = release N committed on a branch,
  release N+1 committed after it on main.
- **Build.** Library times with the model pre-loaded (its load time is given apart). The bare loop is
  `MiniLMEmbedder.embed` over the very texts the build embedded, same batches, in the same process right
  after the build. Incremental builds: a comment line inserted at the blank line nearest the middle of
  one Python file (one-file change), or of 3 files on a new branch (second branch; its unchanged chunks
  come from the embedding cache, but every record and vector is written to the branch's own collection).
- **Search.** Store-bound figures use synthetic random vectors over real records (the lexical index,
  FTS5 and its tantivy copy, is real), so they measure cost, not ranking. Warm = one process that
  keeps its Chroma reader between searches (no build in between); the search process's memory is the
  peak RSS of a fresh process running 20 hybrid searches. The records repeat one repository's chunks to reach the
  size, so lexical posting lists are longer than in 100k distinct chunks: the lexical half is, if
  anything, pessimistic. Cold = a new `python -m codevouch search` process.
- **Quality.** Whole repositories, pinned by version (PyPI sdists: package, tests, docs, examples) or by
  commit (`git:URL@COMMIT`, read from a bare clone or from `$CODEVOUCH_BENCH_GIT_MIRRORS`). Docstrings
  removed with `ast` (lines kept: blanked, or `pass` when the docstring was the whole body); `///`, `/** */`
  and Go doc comments blanked by the benchmark's own tree-sitter walk (codevouch_bench/lib/doccomments.py), never by
  codevouch's chunker. Query = the doc's first sentence (>= 4 words; a Go doc's leading function name
  dropped). Targets are library functions (not under tests/, docs/, examples/); the rest of the repository
  stays in every index as distractors. **overlap**: a hit counts when it is in the function's file and its
  lines overlap the function's, for every method alike. **symbol**: a codevouch hit must name the function;
  a baseline chunk must hold its `def`/`fn` line. LangChain's defaults (4,000 characters) give chunks longer
  than MiniLM's 256-token window: the model reads their start only, which is what a user of the defaults
  gets. BM25 (bm25s) runs over the LangChain 1000/100 chunks with identifiers split on snake_case and
  camelCase. Dense baselines rank by exact cosine. The corpora are split into tuning and held-out sets by
  name in codevouch_bench/lib/config.py; codevouch's knobs were set on the tuning set only.
- **Freshness.** The index for this figure is built with the fake embedder (verdicts never read vectors;
  every chunk is validated, not the nearest ones). Ground truth is computed by `codevouch_bench/lib/truth.py` from
  `git diff -M` and `ast`, independently of the validator. A file git calls renamed and edited is judged at
  its new path as a modified file is at its own (each snippet by its definitions and lines there), so a
  function unchanged in a moved package is current, as the truth's `function-moved-to-file` calls a function
  moved alone with identical source, and as a snippet verbatim at its rename target is current in the
  product's rule (docs/VALIDATION.md); results recorded before this rule labelled every snippet of such a file
  stale (`file-renamed-changed`). Splitter windows need no index; their truth is a
  plain string search in `codevouch_bench/lib/windows.py` (the window's text with the stripped blanks put back
  to the line edge, at its path or git's rename target), never codevouch's matcher. Their held-out pairs
  (2-3 years apart: Python, Go from `spf13/cobra`, TypeScript from `ReactiveX/rxjs`'s `src/`, Rust from
  `serde-rs/json`, pinned by commit) are fixed in codevouch_bench/lib/config.py and never tuned on.
- **Noise.** The machine's 2 cores are shared with other work; load averages are recorded. Compare
  ratios measured in the same run, not absolute times across runs.
"""


# Commands recorded in the results JSON before the benchmarks became the codevouch_bench package
# (bench/): shown in today's form, which runs the same code with the same arguments.
_OLD_COMMANDS = ((re.compile(r"python (?:/\S*/)?scripts/bench_(\w+)\.py"), r"python -m codevouch_bench.\1"),
                 (re.compile(r"python (?:/\S*/)?scripts/bench\.py"), "python -m codevouch_bench"),
                 (re.compile(r"(--out |--json )docs/(bench-[\w-]+\.json)"), r"\1bench/results/\2"))


def current_commands(text: str) -> str:
    for old, new in _OLD_COMMANDS:
        text = old.sub(new, text)
    return text


def rerun_command(key: str, profile: str) -> str:
    return f"python -m codevouch_bench --only {key}" + (" --quick" if profile == "quick" else "")


HOUSE = RESULTS_DIR / "house-passes.md"
# Freshness per pair before and after a ground-truth rule change, run by hand (pair by pair, not the
# whole figure): kept as written, after the freshness figure's section.
FRESHNESS_RENAMES = RESULTS_DIR / "freshness-renames.md"


def house_section(path: Path = HOUSE) -> str:
    """The house passes' before-and-after timings of a user's first call (alternated whole-process pairs, run by
    hand against two commits: no figure module reruns them), kept as written in `path` so that a
    render never drops them."""
    return path.read_text() if path.exists() else ""


def render(results: dict[str, Any]) -> str:
    figs = results["figures"]
    results_file = "bench/results/benchmarks-quick.json" if results["profile"] == "quick" else "bench/results/benchmarks.json"
    reruns = results.get("reruns", [])
    out = ["# codevouch benchmarks\n",
           "The last full run's figures, headline first, then one section per figure with the command that reruns "
           "it. How to run them: [BENCHMARKING.md](BENCHMARKING.md).\n",
           "## Headline\n", headline(figs),
           f"\nRun: `{results.get('command')}`, profile **{results['profile']}**, "
           f"{results.get('wall_seconds')} s in all. Machine: {machine_line(results['machine'])}."
           + (f" Single figures rerun since: {len(reruns)} times, the last at {reruns[-1]['machine']['date']}; each "
              f"rerun's command, time and machine are in `{results_file}` (`reruns`)." if reruns else "") + "\n",
           "Generated by `python -m codevouch_bench` (full profile) into `bench/results/benchmarks.json` and this file. "
           "`python -m codevouch_bench --quick` (a few minutes) writes `bench/results/benchmarks-quick.json` and "
           "`.bench-cache/BENCHMARKS-quick.md` instead, so a quick run never overwrites these results; "
           "`--render` re-renders this file from the JSON. Sources are downloaded once with `pip download "
           "--no-deps --no-binary :all:` into `.bench-cache/` (git-ignored). Timings are medians of repeated "
           "runs where a run is cheap; ratios compare measurements of the same run.\n"]
    for key, title, fn in SECTIONS + tuple(o for o in OPTIONAL_SECTIONS if o[0] in figs):
        fig = figs.get(key)
        out.append(f"\n## {title}\n")
        out.append(f"Rerun: `{rerun_command(key, results['profile'])}`\n")
        if not fig:
            out.append("Not run.\n")
        elif "skipped" in fig:
            out.append(f"Skipped: {fig['skipped']}.\n")
        elif "error" in fig:
            out.append(f"Failed ({fig['error']}):\n\n```\n{fig['stderr_tail'][-1500:]}\n```\n")
        else:
            try:
                out.append(fn(fig))
            except KeyError as missing:  # kept from an older run's JSON, written before a key existed
                out.append(f"Recorded by an older version of the benchmark (no {missing} in its results): rerun "
                           f"`{rerun_command(key, results['profile'])}` to render it.\n")
            out.append(f"\n_{fig.get('wall_seconds')} s wall for this figure._\n")
        if key == "freshness":
            out.append(house_section(FRESHNESS_RENAMES))
    out.append(branches_section())
    out.append(overlay_section())
    out.append(house_section())
    out.append(engine_section(large=figs.get("engine_large")))
    out.append(overlay_first_section())
    out.append(encoder_section())
    out.append(small_build_section(figs.get("small_build"), hook_figure=figs.get("hook_build")))
    out.append(hit_tokens_section())
    out.append(names_scripting_section())
    out.append(names_c_family_section())
    out.append(parse_speed_section())
    out.append(across_scale_section())
    out.append(navigate_section())
    out.append(section_identifiers())
    out.append(whole_quality_section())
    out.append(validated_search_section())
    out.append(large_section())
    out.append(million_section(section_search))
    out.append(NOTES)
    return current_commands("\n".join(out))
