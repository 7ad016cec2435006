#!/usr/bin/env python
"""Figure 3: find a function by the first sentence of its doc, in a whole repository.

Each corpus is a whole repository as a user clones it (package, tests, docs, examples), pinned
by version or commit (codevouch_bench/lib/config.py), with every docstring / doc comment removed from the
code. Queries are the first sentences of those docs; the function they documented is the
answer. Ground truth comes from the benchmark's own parsing (Python's `ast`, tree-sitter
walks in codevouch_bench/lib/doccomments.py), never from codevouch.

Methods, all in this one process, same model (MiniLM), queries embedded the same way:
  codevouch*        codevouch.Index over the repository: the default search and its variants
  langchain-1000    RecursiveCharacterTextSplitter.from_language, chunk_size=1000, overlap=100
  langchain-1000-source the same over only the language's source files (`**/*.py`, ...), as its
                    users load a repository: the baseline the targets are set against
  langchain-default the same splitter at its defaults (4000/200), as most tutorials leave it
  window-40         fixed 40-line windows
  bm25              bm25s over the langchain-1000 chunks, identifiers split (snake, camel)
Dense baselines rank by exact cosine over all their chunks. Every other method sees the same files:
those codevouch indexed (text files, lockfiles and minified bundles left out by its rules).

Identifier queries (codevouch_bench/lib/identifiers.py), on the same indexes: the name of a function,
method or class defined exactly once (`raise_for_status`), and its words (`raise for status`);
the answer is that definition. Baselines: `grep` (the definition lines of the name, in path
order: `def NAME`, `fn NAME`, ...; names only) and `bm25`; every method scored at the line level.

`--whole` indexes every file `index build` indexes (no sampling): the held-out headline. Without
it each repository is sampled to the profile's corpus_bytes: a quick profile, labelled as such.

Scoring: `overlap` = the hit is in the right file and its lines overlap the function (the same
rule for every method); `symbol` = codevouch's hit names the function, a baseline's hit holds
its `def`/`fn` line. Embeddings are cached by text hash in .bench-cache/embeddings.sqlite.
"""
from __future__ import annotations

import hashlib
import random
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from codevouch_bench.lib import cli, corpus, testqueries
from codevouch_bench.lib.acronyms import AcronymQuery, acronym_queries
from codevouch_bench.lib.common import log, machine, write_json
from codevouch_bench.lib.config import HELD_OUT, SOURCE_BASELINE, SOURCE_SUFFIXES, TUNING, Corpus, Profile
from codevouch_bench.lib.doccomments import SUFFIX_LANGUAGE, strip_docs
from codevouch_bench.lib.docstrings import Target
from codevouch_bench.lib.embcache import CachedEmbedder
from codevouch_bench.lib.identifiers import Grep, all_definitions, words_targets
from codevouch_bench.lib.identifiers import targets as identifier_targets
from codevouch_bench.lib.retrieval import (
    BM25Index,
    DenseMatrix,
    Span,
    langchain_chunks,
    line_windows,
    overlap_hit,
    paired,
    rank_of,
    ratio,
    scores,
    symbol_hit,
    window_hit,
)

if TYPE_CHECKING:
    from codevouch.retriever.settings import Settings

ALL_KINDS = ("source", "test", "docs", "config")
SOURCE = "codevouch-source-only"
_SENTENCE = {"source": 1.0, "test": 0.5, "config": 1.0, "docs": 0.3}   # Settings.sentence_kind_weights, as shipped
# Knobs are fields of codevouch.retriever.settings.Settings; a row names the ones it changes
# from the defaults (see settings_of).
UNWEIGHTED = {"kind_weights": {k: 1.0 for k in ALL_KINDS}}
CONTEXT, MERGE = "embed_context", "merge_target"
# The retriever as it was before this figure's tuning: every kind alike, no collapsing, equal lists.
BEFORE = {**UNWEIGHTED, "sentence_kind_weights": None, "name_words_weight": 0.0, "own_words_weight": 0.0, "fusion": "rrf",
          "collapse": False, "lexical_weight": 1.0, "rrf_k": 60, "lexical_pairs": None,
          CONTEXT: None, MERGE: None}
# codevouch rows: name -> (Index.search keyword arguments, Settings fields changed for the row).
# "codevouch" is the library as shipped: its defaults, nothing overridden.
CODEVOUCH: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "codevouch": ({}, {}),
    "codevouch-before-tuning": ({}, BEFORE),
    SOURCE: ({"kinds": ("source",)}, {}),
    "codevouch-dense": ({"mode": "dense"}, {}),
    "codevouch-lexical": ({"mode": "lexical"}, {}),
    # The default without its "a query that names tests ranks tests as source" rule (lib/testqueries.py).
    testqueries.RULE_OFF: ({}, {"named_tests_weight": 0.0}),
}
# The retriever before the name field was searched: no definition-name list, no tier.
NO_NAMES = {"name_weight": 0.0, "name_first_words": 0}
# The ranking before score fusion and own name words were the default: rank fusion, the
# qualified names' words (docs/SEARCH.md); and score fusion's neighbours.
RANK_FUSION = {"fusion": "rrf", "name_words_weight": 1.0, "own_words_weight": 0.0}
CODEVOUCH["codevouch-rank-fusion"] = ({}, RANK_FUSION)
CODEVOUCH["codevouch-own-words-0.5"] = ({}, {"own_words_weight": 0.5})
CODEVOUCH["codevouch-qualified-words"] = ({}, {"name_words_weight": 1.0, "own_words_weight": 0.0})
# The sentence test prior before the test docstrings were asked (0.1; Settings.sentence_kind_weights).
CODEVOUCH[testqueries.PRIOR_BEFORE] = ({}, {"sentence_kind_weights": {**_SENTENCE, "test": 0.1}})
# The fusion before a large module's neighbours were read (Settings.dense_floor, own_words_per_name).
CODEVOUCH[testqueries.NEIGHBOURS_BEFORE] = ({}, {"dense_floor": 0.0, "own_words_per_name": False})
# Rows scored on the identifier queries too (the others answer docstring queries only).
IDENTIFIER_ROWS = ("codevouch", "codevouch-no-names", "codevouch-no-sentence-priors", "codevouch-dense",
                   "codevouch-lexical", "codevouch-rank-fusion", "codevouch-own-words-0.5", "codevouch-qualified-words",
                   testqueries.NEIGHBOURS_BEFORE)
CODEVOUCH["codevouch-no-names"] = ({}, NO_NAMES)
# The retriever before the sentence priors: every query with kind_weights, no name-words list.
NO_SENTENCE = {"sentence_kind_weights": None, "name_words_weight": 0.0, "own_words_weight": 0.0}
CODEVOUCH["codevouch-no-sentence-priors"] = ({}, NO_SENTENCE)
IDENTIFIER_QUERIES = 150   # per corpus and form, as the measurement outside the team
# Rows scored on the acronym queries (lib/acronyms.py), each query with and without its acronyms.
ACRONYM_ROWS = ("codevouch", SOURCE)
ACRONYM_QUERIES = 150      # per corpus, at most


def _weights(docs: float, test: float) -> dict[str, Any]:
    return {"kind_weights": {"source": 1.0, "config": 1.0, "docs": docs, "test": test}}


# --tune: knob settings tried on the tuning corpora only (the winner becomes the default).
TUNE: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "collapse-only": ({}, {**BEFORE, "collapse": True}),
    **{f"docs-{d}-test-{t}-collapse-{c}": ({}, {**BEFORE, **_weights(d, t), "collapse": c})
       for d in (1.0, 0.5, 0.3) for t in (1.0, 0.8, 0.6) for c in (False, True)},
    **{f"docs-0.5-test-0.8-lexical-{w}": ({}, {**BEFORE, **_weights(0.5, 0.8), "collapse": True, "lexical_weight": w})
       for w in (0.5, 0.75, 1.5)},
    **{f"docs-0.5-test-0.8-rrf-{k}": ({}, {**BEFORE, **_weights(0.5, 0.8), "collapse": True, "rrf_k": k})
       for k in (10, 30)},
    # Second round, from the defaults of the first: identifier-aware query terms.
    **{f"pairs-{p}": ({}, {"lexical_pairs": p, CONTEXT: None, "lexical_weight": 0.75, MERGE: None})
       for p in ("phrase", "joined", None)},
    # Third round, from the defaults of the second (chunks embedded as their text alone, lexical
    # weight 0.75, merged up to half the budget): what the embedded text carries above the chunk
    # (each needs its own index) ...
    **{f"context-{c}{m}": ({"mode": "dense"} if m else {}, {CONTEXT: c, "lexical_weight": 0.75, MERGE: None})
       for c in ("path", "symbol", "path-symbol") for m in ("", "-dense")},
    # ... then, with path and symbol, the fusion again.
    **{f"context-lexical-{w}-rrf-{k}": ({}, {"lexical_weight": w, "rrf_k": k, MERGE: None})
       for w in (0.5, 0.6, 0.75, 1.0, 1.25) for k in (20, 40, 60, 100) if k == 60 or w in (0.75, 1.0, 1.25)},
    # Fourth round, from the defaults (path and symbol, lexical weight 0.75: 1.0 lost on the
    # held-out corpora): how far small neighbouring definitions merge into one chunk (tokens of
    # the 250-token budget; 125, half the budget, is the chunker's default). Each needs its own
    # index. 190 won here; on the held-out corpora it put serde_json below the 40-line windows.
    **{f"merge-{m}": ({}, {MERGE: None if m == 125 else m}) for m in (60, 125, 190, 250)},
    "merge-190-lexical-1.0": ({}, {MERGE: 190, "lexical_weight": 1.0}),
    # Fifth round, from the defaults: the test prior's size, the name list's weight,
    # the words of what a chunk defines as a lexical field of their own.
    **{f"test-{t}": ({}, _weights(0.5, t)) for t in (1.0, 0.6, 0.4, 0.2)},
    **{f"name-weight-{w}": ({}, {"name_weight": w}) for w in (0.5, 2.0)},
    **{f"name-first-{n}": ({}, {"name_first_words": n}) for n in (0, 8)},
    **{f"name-boost-{b}": ({}, {"name_boost": b}) for b in (1.0,)},
    **{f"exact-{b}": ({}, {"exact_boost": b}) for b in (0.5,)},
    # Sixth round, from the defaults: the kind weights of a sentence query (the test prior of
    # prose, against --kind source), and the words of what a chunk defines as a list of their own.
    **{f"sentence-docs-{d}-test-{t}": ({}, {**NO_SENTENCE, "sentence_kind_weights": _weights(d, t)["kind_weights"]})
       for d in (0.5, 0.3, 0.2) for t in (0.4, 0.2, 0.1, 0.05, 0.0) if d == 0.5 or t in (0.1, 0.0)},
    **{f"sentence-config-0.5-docs-0.3-test-{t}": ({}, {**NO_SENTENCE, "sentence_kind_weights": {
        "source": 1.0, "config": 0.5, "docs": 0.3, "test": t}}) for t in (0.1, 0.0)},
    **{f"sentence-names-{w}": ({}, {**NO_SENTENCE, "name_words_weight": w}) for w in (0.25, 0.5, 1.0)},
    **{f"sentence-both-names-{w}": ({}, {"sentence_kind_weights": _weights(0.3, 0.1)["kind_weights"],
                                         "name_words_weight": w}) for w in (1.0, 1.5, 2.0)},
    # Seventh round, from the defaults: how deep each list of the fusion is (a --kind filter looks
    # 4 times deeper; is that why --kind source beat the default on some held-out corpora?).
    **{f"depth-{d}": ({}, {"list_depth": d}) for d in (60, 120)},
    # Eighth round, from the defaults, every documented function asked: a sentence's prior on prose
    # and configuration, the non-source chunks still let above their code (--kind source keeps the
    # default's order since b5c483b, so the two differ by those alone).
    **{f"prior-docs-{d}-config-{c}": ({}, {"sentence_kind_weights": {"source": 1.0, "test": 0.1, "docs": d,
                                                                      "config": c}})
       for d in (0.3, 0.2, 0.1) for c in (1.0, 0.5, 0.3) if (d, c) != (0.3, 1.0)},
    # Ninth round, from the defaults then (test 0.1): a sentence's test prior, scored on the test
    # docstrings too (tune rows answer them): 0.1 ranked attrs' tests out of the top 10 (x0.2
    # LangChain 1000/100). 0.5 won (settings.py).
    **{f"sentence-test-{t}": ({}, {"sentence_kind_weights": {**_SENTENCE, "test": t}})
       for t in (0.2, 0.3, 0.4, 0.5, 0.6, 0.8)},
    # Tenth round, from the defaults then (no dense floor, own words of all names together): a large
    # module's neighbours, the rank-1 losses to another chunk of the target's own file (Settings.
    # dense_floor, own_words_per_name; each row sets both). The own-words list by each chunk's best name ...
    "own-per-name": ({}, {"own_words_per_name": True, "dense_floor": 0.0}),
    # ... the dense list stretched from a share of its best cosine, with and without it ...
    **{f"dense-floor-{f}{'-per-name' if p else ''}": ({}, {"dense_floor": f, "own_words_per_name": p})
       for f in (0.3, 0.5, 0.6, 0.7) for p in (False, True)},
    # ... the own-words and lexical weights beside them ...
    **{f"floor-{f}-own-{o}-lexical-{w}": ({}, {"dense_floor": f, "own_words_per_name": True, "own_words_weight": o,
                                                "lexical_weight": w})
       for f in (0.5, 0.6) for o in (0.5, 0.75, 1.0) for w in (0.5, 0.75) if (o, w) != (1.0, 0.75)},
    # ... and how far small neighbouring definitions merge (each its own index), with them: 0 0.648,
    # 60 0.644 against 0.642 (125), but commander 0.667 -> 0.611: merging stays as it is.
    **{f"merged-{m}-floor-0.5": ({}, {MERGE: m, "dense_floor": 0.5, "own_words_per_name": True}) for m in (0, 60)},
}
MAX_FILE_BYTES = 100_000  # lockfiles, bundles, data dumps: no one's search target, and costly to embed
# Queries target library code; a function in tests/, docs/ or examples/ is not what a
# "where is the code that does X" question asks for (those files stay in the index).
NOT_LIBRARY = re.compile(r"(^|/)(tests?|__tests__|spec|docs?|examples?|benches|benchmarks?|website|"
                         r"perf-testing|__performance_tests__)/|(^|/)(test_[^/]*\.py|[^/]*_test\.(py|go)|"
                         r"[^/]*\.(test|spec)\.[jt]sx?|conftest\.py)$")


def sample_files(root: Path, budget: int | None, seed: int) -> dict[str, bytes]:
    """Text files of a repository in a seeded hash order, kept while they fit `budget` bytes:
    library code first, up to half the budget (the queries come from it), then any file.
    `budget` None: every text file (the whole repository)."""
    files = {p: d for p, d in corpus.tree_files(root).items()
             if b"\0" not in d[:8000] and len(d) <= MAX_FILE_BYTES}
    if budget is None:
        return dict(sorted(files.items()))
    order = sorted(files, key=lambda p: hashlib.sha1(f"{seed}:{p}".encode()).hexdigest())
    kept: dict[str, bytes] = {}
    used = 0
    library = [p for p in order if is_library_code(p)]
    for pass_paths, limit in ((library, budget // 2), (order, budget)):
        for path in pass_paths:
            # The first library file always goes in, so a repository whose code lives in one
            # big file (commander's lib/command.js) still yields queries.
            if path not in kept and (used + len(files[path]) <= limit or not kept):
                kept[path] = files[path]
                used += len(files[path])
    return dict(sorted(kept.items()))


def is_library_code(path: str) -> bool:
    return (path.endswith(".py") or Path(path).suffix in SUFFIX_LANGUAGE) and not NOT_LIBRARY.search(path)


class Prepared(NamedTuple):
    files: dict[str, str]        # path -> text, docs removed
    targets: list[Target]        # documented library functions
    facts: dict[str, Any]
    tests: list[Target]          # documented functions in test files (lib/testqueries.py)


def prepare(c: Corpus, prof: Profile, repo: Path, whole: bool = False) -> Prepared:
    """Commit the sampled (or whole), doc-free repository; return its files, the library targets,
    facts and the test targets."""
    root = corpus.extract(c.spec)
    total = corpus.tree_files(root)
    picked = sample_files(root, None if whole else prof.corpus_bytes, prof.seed)
    files: dict[str, str] = {}
    targets: list[Target] = []
    tests: list[Target] = []
    for path, data in picked.items():
        text, found = strip_docs(path, data.decode("utf-8", "replace"))
        files[path] = text
        targets += [t for t in found if is_library_code(path)]
        tests += [t for t in found if testqueries.is_test_code(path)]
    corpus.repo_from_files(repo, {p: t.encode() for p, t in files.items()}, f"{c.spec} without docs")
    facts = {"repo_files": len(total), "repo_bytes": sum(len(d) for d in total.values()),
             "sampled_files": len(files), "sampled_bytes": sum(len(d) for d in picked.values()),
             "documented_functions": len(targets), "documented_tests": len(tests)}
    return Prepared(files, targets, facts, tests)


def pick_queries(targets: list[Target], limit: int, seed: int) -> list[Target]:
    if len(targets) <= limit:
        return targets
    return [targets[i] for i in sorted(random.Random(seed).sample(range(len(targets)), limit))]


def pick_acronyms(queries: list[AcronymQuery], seed: int) -> list[AcronymQuery]:
    if len(queries) <= ACRONYM_QUERIES:
        return queries
    return [queries[i] for i in sorted(random.Random(seed).sample(range(len(queries)), ACRONYM_QUERIES))]


# Knobs that change what gets indexed (chunking): rows that set them search an index built with
# them; every other knob only changes how one index is searched.
BUILD_KNOBS = (MERGE, CONTEXT)


def settings_of(knobs: dict[str, Any]) -> Settings:
    """The Settings of a row: the defaults with the row's fields changed."""
    from codevouch.retriever.settings import Settings

    return Settings(**knobs)


def evaluate(c: Corpus, prof: Profile, work: Path, embedder: Any, split: str,
             rows: dict[str, tuple[dict[str, Any], dict[str, Any]]], whole: bool = False,
             dense_baselines: bool = True, id_queries: int = IDENTIFIER_QUERIES,
             queries: int = 40) -> dict[str, Any]:
    from codevouch import Index
    from codevouch.store import Ledger, collection_base
    from codevouch.store.lexical import names_tests
    from codevouch.worktree.identity import identify

    started = time.perf_counter()
    base_dir = work / c.name
    repo, index_dir = base_dir / "repo", base_dir / "index"
    files, all_targets, facts, tests = prepare(c, prof, repo, whole)
    targets = pick_queries(all_targets, queries or len(all_targets), prof.seed)   # 0: every one
    log(f"quality {c.name} ({split}): {facts['sampled_files']} of {facts['repo_files']} files, "
        f"{len(all_targets)} documented library functions, {len(targets)} queries")
    (summary,) = Index(repo, index_dir, embedder=embedder).build()
    # One index per build key (Settings.build_key: the knobs that change what is indexed); rows
    # that share one search it, each with its own search knobs.
    default_key = settings_of({}).build_key()
    index_dirs, chunks_of = {default_key: index_dir}, {default_key: summary.chunks}
    built_chunks: dict[str, int] = {}
    for method, (_, knobs) in rows.items():
        key = settings_of(knobs).build_key()
        if key not in index_dirs:
            index_dirs[key] = base_dir / f"index-{len(index_dirs)}"
            (other,) = Index(repo, index_dirs[key], embedder=embedder, settings=settings_of(knobs)).build()
            chunks_of[key] = other.chunks
        if any(k in BUILD_KNOBS for k in knobs):
            built_chunks[method] = chunks_of[key]
    ledger = Ledger(index_dir)
    try:
        indexed = {p for p, f in ledger.files(collection_base(identify(repo).id, "main")).items()
                   if f.status == "live"}
    finally:
        ledger.close()
    out: dict[str, Any] = {"corpus": c.name, "spec": c.spec, "language": c.language, "split": split, **facts,
                           "queries": len(targets), "indexed_files": len(indexed),
                           "chunks": {"codevouch": summary.chunks, **built_chunks}}
    ranks: dict[str, dict[str, list[int | None]]] = {"overlap": {}, "symbol": {}}

    def record(method: str, ranked: list[list[Span]], symbolic: bool) -> None:
        ranks["overlap"][method] = [rank_of(r, t, overlap_hit) for r, t in zip(ranked, targets)]
        ranks["symbol"][method] = [rank_of(r, t, symbol_hit if symbolic else window_hit)
                                   for r, t in zip(ranked, targets)]

    texts = {p: t for p, t in files.items() if p in indexed}
    named = pick_queries(identifier_targets(texts, [p for p in texts if is_library_code(p)]),
                         id_queries, prof.seed)
    forms = {"name": named, "words": pick_queries(words_targets(named), id_queries, prof.seed)}
    id_ranks: dict[str, dict[str, list[int | None]]] = {form: {} for form in forms}

    def spans_of(hits: Any) -> list[Span]:
        return [Span(h.path, h.record.start_line, h.record.end_line, h.text, h.symbol) for h in hits]

    checks = TagCheck(texts)
    acronyms = pick_acronyms(acronym_queries(all_targets), prof.seed)
    acro_ranks: dict[str, dict[str, list[int | None]]] = {"with": {}, "without": {}}
    test_ranks: dict[str, list[int | None]] = {}

    def test_ranks_of(searcher: Any, **kwargs: Any) -> list[int | None]:
        return [rank_of(spans_of(searcher.search(t.query, k=10, validate=False, **kwargs)), t, overlap_hit)
                for t in tests]
    for method, (kwargs, knobs) in rows.items():
        setting = settings_of(knobs)
        searcher = Index(repo, index_dirs[setting.build_key()], embedder=embedder, settings=setting)
        ranked = [spans_of(searcher.search(t.query, k=10, validate=False, **kwargs)) for t in targets]
        record(method, ranked, symbolic=True)
        if method == "codevouch":
            out["docstring_misses"] = stub_losses(ranked, targets, ranks["overlap"][method])
        else:   # each row's, to compare (a tune row's or the fusion's before)
            out.setdefault("row_misses", {})[method] = stub_losses(ranked, targets, ranks["overlap"][method])
            test_ranks[testqueries.KIND_TEST] = test_ranks_of(searcher, kinds=("test",))
        if method in testqueries.ROWS or method.startswith("codevouch-tune-"):
            test_ranks[method] = test_ranks_of(searcher, **kwargs)
        if method in ACRONYM_ROWS:
            for form, asked in (("with", [a.target for a in acronyms]), ("without", [a.without for a in acronyms])):
                acro_ranks[form][method] = [rank_of(spans_of(searcher.search(t.query, k=10, validate=False, **kwargs)),
                                                    t, overlap_hit) for t in asked]
        log(f"quality {c.name}: {method}")
        if method in IDENTIFIER_ROWS or method.startswith("codevouch-tune-"):
            for form, queries in forms.items():
                found = [searcher.search(t.query, k=10, validate=False, **kwargs) for t in queries]
                if method == "codevouch":
                    checks.add(form, found)
                id_ranks[form][method] = [rank_of(spans_of(hits), t, overlap_hit) for hits, t in zip(found, queries)]
    out["definition_name_tags"] = checks.counts
    out["acronyms"] = {"queries": len(acronyms), "found": dict(Counter(x for a in acronyms for x in a.acronyms)),
                       "examples": [[a.target.query, a.without.query] for a in acronyms[:5]],
                       "scores": {form: {m: scores(r) for m, r in per.items()} for form, per in acro_ranks.items()},
                       "with_vs_without": {m: paired(acro_ranks["with"][m], acro_ranks["without"][m])
                                           for m in acro_ranks["with"]}}
    out["acronym_ranks"] = acro_ranks

    qvecs = [embedder.embed_query(t.query) for t in targets]
    test_qvecs = [embedder.embed_query(t.query) for t in tests]
    id_qvecs = {form: [embedder.embed_query(t.query) for t in queries] for form, queries in forms.items()}
    lc1000 = [s for p, t in texts.items() for s in langchain_chunks(p, t, 1000, 100)]
    own = SOURCE_SUFFIXES[c.language]
    for method, spans in (("langchain-1000", lc1000),
                          (SOURCE_BASELINE, [s for p, t in texts.items() if p.endswith(own)
                                             for s in langchain_chunks(p, t, 1000, 100)]),
                          ("langchain-default", [s for p, t in texts.items() for s in langchain_chunks(p, t)]),
                          ("window-40", [s for p, t in texts.items() for s in line_windows(p, t)])):
        if not dense_baselines:
            continue
        dense = DenseMatrix(spans, embedder.embed)
        out["chunks"][method] = len(spans)
        record(method, [dense.search(q) for q in qvecs], symbolic=False)
        test_ranks[method] = [rank_of(dense.search(q), t, overlap_hit) for q, t in zip(test_qvecs, tests)]
        for form, queries in forms.items():
            id_ranks[form][method] = [rank_of(dense.search(q), t, overlap_hit) for q, t in zip(id_qvecs[form], queries)]
    bm25 = BM25Index(lc1000)
    out["chunks"]["bm25"] = len(lc1000)
    record("bm25", [bm25.search(t.query) for t in targets], symbolic=False)
    test_ranks["bm25"] = [rank_of(bm25.search(t.query), t, overlap_hit) for t in tests]
    grep = Grep(texts)
    for form, queries in forms.items():
        id_ranks[form]["bm25"] = [rank_of(bm25.search(t.query), t, overlap_hit) for t in queries]
    id_ranks["name"]["grep"] = [rank_of(grep.search(t.query), t, overlap_hit) for t in forms["name"]]
    out["scores"] = {level: {m: scores(r) for m, r in per.items()} for level, per in ranks.items()}
    out["test_naming"] = [names_tests(t.query) for t in tests]
    out["test_queries"] = testqueries.summary(test_ranks, out["test_naming"], ranks["overlap"])
    out["test_ranks"] = test_ranks
    if SOURCE in ranks["overlap"]:
        out["default_vs_source_only"] = paired(ranks["overlap"]["codevouch"], ranks["overlap"][SOURCE])
    if testqueries.NEIGHBOURS_BEFORE in ranks["overlap"]:
        out["default_vs_neighbours_before"] = neighbours_before(ranks["overlap"], test_ranks)
    if SOURCE_BASELINE in ranks["overlap"]:
        out["against_source_baseline"] = ratio(ranks["overlap"]["codevouch"], ranks["overlap"][SOURCE_BASELINE])
    out["ranks"] = ranks  # kept so the overall figures are true micro-averages
    out["identifier_targets"] = len(identifier_targets(texts, [p for p in texts if is_library_code(p)]))
    out["identifiers"] = {form: {m: scores(r) for m, r in per.items()} for form, per in id_ranks.items()}
    out["identifier_ranks"] = id_ranks
    out["seconds"] = round(time.perf_counter() - started, 1)
    return out


def neighbours_before(library: dict[str, list[int | None]], tests: dict[str, list[int | None]]) -> dict[str, Any]:
    """The default against the fusion before a large module's neighbours were read
    (testqueries.NEIGHBOURS_BEFORE), paired: library docstrings, and test docstrings where asked."""
    before = testqueries.NEIGHBOURS_BEFORE
    out = {"library": paired(library["codevouch"], library[before])}
    if before in tests and "codevouch" in tests:
        out["tests"] = paired(tests["codevouch"], tests[before])
    return out


# Declaration files: a stub holds a definition's signature and name, not its code.
DECLARATION = re.compile(r"\.(pyi|d\.ts|d\.mts|d\.cts)$")


def stub_losses(ranked: list[list[Span]], targets: list[Target], ranks: list[int | None]) -> dict[str, int]:
    """Of the docstring queries that miss rank 1, how many lose it to a stub of their target: a
    declaration file's hit whose text spells the target's name (the bench's reading, not codevouch's);
    and how many to another chunk of the target's own file (a first hit in its file that does not
    overlap it: a large module's neighbours), or to a test."""
    misses = [(spans, t) for spans, t, r in zip(ranked, targets, ranks) if r != 1]
    stub = sum(1 for spans, t in misses if spans and DECLARATION.search(spans[0].path)
               and re.search(rf"\b{re.escape(t.name)}\b", spans[0].text))
    own = sum(1 for spans, t in misses if spans and spans[0].path == t.path)
    test = sum(1 for spans, _ in misses if spans and testqueries.is_test_code(spans[0].path))
    return {"misses": len(misses), "lost_to_a_stub": stub, "lost_to_own_file": own, "lost_to_a_test": test}


class TagCheck:
    """Counts the hits codevouch tags `definition-name` that hold no definition by the bench's own
    parse (identifiers.all_definitions: Python's ast, the bench's tree-sitter walks, every
    definition at any depth, a declaration file's too): no definition line within the hit's lines."""

    def __init__(self, texts: dict[str, str]) -> None:
        self.texts = texts
        self.lines: dict[str, list[int]] = {}
        self.counts: dict[str, dict[str, int]] = {}

    def _def_lines(self, path: str) -> list[int]:
        if path not in self.lines:
            text = self.texts.get(path)
            self.lines[path] = [] if text is None else [line for _, line in all_definitions(path, text)]
        return self.lines[path]

    def add(self, form: str, found: list[Any]) -> None:
        tagged = [h for hits in found for h in hits if "definition-name" in h.matched]
        wrong = [h for h in tagged if not any(h.record.start_line <= line <= h.record.end_line
                                              for line in self._def_lines(h.path))]
        self.counts[form] = {"tagged": len(tagged), "not_a_definition": len(wrong),
                             "examples": [f"{h.path}:{h.record.start_line}-{h.record.end_line} {h.symbol}"
                                          for h in wrong[:5]]}


def overall(per_corpus: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for split in ("held-out", "tuning"):
        part = [p for p in per_corpus if p["split"] == split]
        if part:
            out[split] = {level: {m: scores([r for p in part for r in p["ranks"][level][m]])
                                  for m in part[0]["ranks"][level]} for level in ("overlap", "symbol")}
            out[split]["acronyms"] = {
                form: {m: scores([r for p in part for r in p["acronym_ranks"][form].get(m, [])])
                       for m in ACRONYM_ROWS} for form in ("with", "without")}
            out[split]["identifiers"] = {
                form: {m: scores([r for p in part for r in p["identifier_ranks"][form].get(m, [])])
                       for m in part[0]["identifier_ranks"][form]} for form in part[0]["identifier_ranks"]}
            out[split]["pooled"] = pooled(part)
    return out


def pooled(part: list[dict[str, Any]]) -> dict[str, Any]:
    """The paired comparisons over every query of a split at once: one repository's few acronym
    or test queries leave a wide interval, the split's together a narrow one."""
    def ranks(get: Any, m: str) -> list[int | None]:
        return [r for p in part for r in get(p).get(m, [])]
    misses = [p["docstring_misses"] for p in part if "docstring_misses" in p]
    out: dict[str, Any] = {"docstring_misses": {k: sum(m.get(k, 0) for m in misses) for k in
                                                dict.fromkeys(k for m in misses for k in m)}}
    docs, source = ranks(lambda p: p["ranks"]["overlap"], "codevouch"), ranks(lambda p: p["ranks"]["overlap"], SOURCE)
    if len(source) == len(docs):
        out["default_vs_source_only"] = paired(docs, source)
    with_, without = (ranks(lambda p, f=f: p["acronym_ranks"][f], "codevouch") for f in ("with", "without"))
    out["acronyms_with_vs_without"] = paired(with_, without)
    if all(testqueries.NEIGHBOURS_BEFORE in p["ranks"]["overlap"] for p in part):
        out["default_vs_neighbours_before"] = neighbours_before(
            {m: ranks(lambda p: p["ranks"]["overlap"], m) for m in ("codevouch", testqueries.NEIGHBOURS_BEFORE)},
            {m: ranks(lambda p: p["test_ranks"], m) for m in ("codevouch", testqueries.NEIGHBOURS_BEFORE)
             if all(m in p["test_ranks"] for p in part)})
    misses = [p.get("row_misses", {}) for p in part]
    out["row_misses"] = {m: {k: sum(x[m][k] for x in misses if m in x) for k in ("misses", "lost_to_own_file")}
                         for m in dict.fromkeys(m for x in misses for m in x)}
    tests = [p["test_ranks"] for p in part]
    if all(testqueries.RULE_OFF in t for t in tests):
        naming = [n for p in part for n in p["test_naming"]]
        asked = [m for m in tests[0] if all(m in t for t in tests)]
        out["test_queries"] = testqueries.summary(
            {m: ranks(lambda p: p["test_ranks"], m) for m in asked}, naming,
            {m: ranks(lambda p: p["ranks"]["overlap"], m) for m in asked})
    return out


def main() -> None:
    p = cli.parser(__doc__ or "")
    p.add_argument("--split", choices=("all", "tuning", "held-out"), default="all",
                   help="which corpora to run (tune on `tuning` only)")
    p.add_argument("--corpus", action="append", help="only these corpora (by name)")
    p.add_argument("--tune", action="store_true",
                   help="also score the knob settings of TUNE (tuning corpora only)")
    p.add_argument("--tune-prefix", action="append",
                   help="with --tune: only the TUNE settings whose names start with this")
    p.add_argument("--whole", action="store_true",
                   help="index every file of each repository (no sampling): the held-out headline")
    p.add_argument("--queries", type=int,
                   help="docstring queries per corpus, a seeded sample (default: the profile's, 40; 0: every "
                        "documented library function, for paired comparisons that one query's rank cannot swing)")
    p.add_argument("--id-queries", type=int, default=IDENTIFIER_QUERIES,
                   help="identifier queries per corpus and form (default %(default)s)")
    p.add_argument("--row", action="append", choices=sorted(CODEVOUCH),
                   help="only these codevouch rows, and always `codevouch` (default: all; each row that changes "
                        "what is indexed, as codevouch-before-tuning does, builds an index of its own)")
    p.add_argument("--no-dense-baselines", action="store_true",
                   help="leave out the LangChain and window baselines (their embeddings are most of a --whole run)")
    args = p.parse_args()
    prof = cli.profile(args)
    chosen = [(c, "tuning") for c in TUNING] * (args.split != "held-out") + \
             [(c, "held-out") for c in HELD_OUT] * (args.split != "tuning")
    if args.corpus:
        chosen = [(c, s) for c, s in chosen if c.name in args.corpus]
    corpus.fetch(c.spec for c, _ in chosen)
    # Runs of different splits may go side by side: each has its own scratch space.
    work = cli.workdir(prof, ("quality" if args.split == "all" and not args.tune else f"quality-{args.split}")
                       + ("-whole" if args.whole else ""))
    embedder = CachedEmbedder(cli.embedder(args))
    queries = prof.corpus_queries if args.queries is None else args.queries
    started = time.perf_counter()
    if args.tune:
        chosen = [(c, s) for c, s in chosen if s == "tuning"]
    tune = {n: v for n, v in TUNE.items() if not args.tune_prefix or n.startswith(tuple(args.tune_prefix))}
    shipped = {m: v for m, v in CODEVOUCH.items() if not args.row or m in (*args.row, "codevouch")}
    rows = {**shipped, **({f"codevouch-tune-{n}": v for n, v in tune.items()} if args.tune else {})}
    per_corpus = [evaluate(c, prof, work, embedder, split, rows, args.whole, not args.no_dense_baselines,
                           args.id_queries, queries) for c, split in chosen]
    result = {"figure": "quality", "profile": prof.name, "machine": machine(), "seed": prof.seed,
              "sampling": "whole repositories" if args.whole else f"sampled to {prof.corpus_bytes} bytes",
              "identifier_queries_per_form": args.id_queries, "command": " ".join(["python", *sys.argv]),
              "corpus_bytes": prof.corpus_bytes, "max_queries_per_corpus": queries or None,
              "max_file_bytes": MAX_FILE_BYTES, "embedder": embedder.name, "texts_embedded": embedder.embedded,
              "seconds": round(time.perf_counter() - started, 1),
              "overall": overall(per_corpus), "per_corpus": per_corpus}
    for pc in per_corpus:
        del pc["ranks"], pc["identifier_ranks"], pc["acronym_ranks"], pc["test_ranks"], pc["test_naming"]
    if args.out:
        write_json(args.out, result)
    for split, levels in result["overall"].items():
        log(f"{split} overlap MRR@10: " + ", ".join(f"{m} {s['mrr@10']}" for m, s in levels["overlap"].items()))
        for form, per in levels["identifiers"].items():
            log(f"{split} {form} at rank 1 (MRR@10): " + ", ".join(
                f"{m} {s.get('recall@1')} ({s.get('mrr@10')})" for m, s in per.items()))
    for pc in per_corpus:
        log(f"{pc['corpus']}: " + ", ".join(f"{m} {s.get('mrr@10')}" for m, s in pc["scores"]["overlap"].items()))
        miss = pc["docstring_misses"]
        log(f"{pc['corpus']}: codevouch docstring misses at rank 1 {miss['misses']}, lost to a stub of the target "
            f"{miss['lost_to_a_stub']}, to another chunk of its own file {miss['lost_to_own_file']}, to a test "
            f"{miss['lost_to_a_test']}; definition-name tags on hits that are not definitions: " + ", ".join(
                f"{form} {n['not_a_definition']} of {n['tagged']}" for form, n in pc["definition_name_tags"].items()))
        tq = pc["test_queries"]
        log(f"{pc['corpus']}: {tq['queries']} test queries ({tq['naming_tests']} name tests), MRR@10: " + ", ".join(
            f"{m} {s.get('mrr@10')}" for m, s in tq["scores"].items()))
        acro = pc["acronyms"]["scores"]
        log(f"{pc['corpus']}: {pc['acronyms']['queries']} acronym queries, MRR@10 with / without the acronym: "
            + ", ".join(f"{m} {acro['with'][m].get('mrr@10')} / {acro['without'][m].get('mrr@10')}" for m in acro["with"]))


if __name__ == "__main__":
    main()
