"""The knobs of the chunker and the retriever, in one frozen object that is passed in.

    Index(repo, settings=Settings(collapse=False))    # build and search with one knob changed

`Settings()` is codevouch as shipped: each default below is the value its comment says was
chosen, on the quality figure's tuning corpora (python -m codevouch_bench.quality --tune), which passes
other settings to score the alternatives. Two kinds of knob:

- build knobs (`merge_target`, `embed_context`) change what is chunked and embedded, so the
  chunks' ids and text hashes and the vector space's name: an index built with other values
  is another index (a branch built with the defaults, then with other build knobs, moves to
  another space and is embedded again). `build_key()` names them.
- search knobs (the rest) change only how one index is searched and ranked.

Nothing here is read from a module global: a caller that wants other values passes them.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from codevouch.embedding import DEFAULT_EMBED_CONTEXT, EMBED_CONTEXTS, MODEL_NAME, is_packaged
from codevouch.errors import InputError
from codevouch.vocabulary import Kind

LEXICAL_PAIRS = ("joined", "phrase")

# With no kind filter, a hit's fused score is multiplied by its file kind's weight. Prose
# matches a plain-English question better than code does, so unweighted, README and docs
# chunks take the top slots for "where is the code that does X", and tests that call a
# function rank beside it (measured: FACTS.md and the quality figure). Weighted, prose and
# tests still surface when both halves rank them first, and a --kind filter turns weights off.
# Chosen on the tuning corpora only: docs 0.5 and 0.3 tied, the milder kept. Tests: 0.8 and
# 0.6 tied on sampled repositories (few tests beside the library code); on the whole tuning
# repositories, tests and all, docstring MRR@10 was 0.456 at 1.0, 0.477 at 0.8, 0.491 at 0.6,
# 0.495 at 0.4 and at 0.2 (source only: 0.500), names and words alike: 0.4, the milder of the tie.
KIND_WEIGHTS: Mapping[str, float] = MappingProxyType({Kind.SOURCE: 1.0, Kind.TEST: 0.4, Kind.CONFIG: 1.0,
                                                     Kind.DOCS: 0.5})

# The kind weights of a sentence query (Settings.sentence_kind_weights), chosen on the whole tuning
# repositories (python -m codevouch_bench.quality --split tuning --whole --tune --tune-prefix sentence-):
# docstring MRR@10 0.529 with every query's weights, 0.534 with docs 0.3 or 0.2 (commander 0.565
# -> 0.578), config 0.5 alike. The test prior did not move it between 0.4 and 0.0 (no tuning
# repository's tests outranked their code at 0.4), so tests took 0.1 at first; but the first doc
# sentences of test functions, asked as queries, then found their test almost never (held-out
# attrs: 0.033 MRR@10 against 0.167 for a LangChain 1000/100 pipeline). Retuned with those
# queries (--tune-prefix sentence-test-, score fusion), tuning split, library docstrings / test
# docstrings (click's 19): 0.1 0.610 / 0.026, 0.4 0.610 / 0.355, 0.5 0.610 / 0.588, 0.6 0.610 /
# 0.711 (click one query lower), 0.8 0.606 / 0.800: 0.5, the most that costs library queries
# nothing there. Held-out figures in BENCHMARKS.md ("Whole repositories").
SENTENCE_KIND_WEIGHTS: Mapping[str, float] = MappingProxyType({Kind.SOURCE: 1.0, Kind.TEST: 0.5, Kind.CONFIG: 1.0,
                                                              Kind.DOCS: 0.3})


# The best hit's similarity below which a search reports no good match, per model: measured with
# python -m codevouch_bench.measure_match (docs/SEARCH.md#scores-that-mean-something). Another model's cosines
# sit on another scale: without a measured value (or Settings.match_threshold) nothing is judged.
MATCH_THRESHOLDS: Mapping[str, float] = MappingProxyType({MODEL_NAME: 0.32})


FUSIONS = ("rrf", "scores")


@dataclass(frozen=True)
class Settings:
    """How codevouch chunks, embeds, searches and ranks. Frozen; compare and hash by value."""

    # --- build knobs: what is indexed ---
    # Small neighbouring definitions (and code between them) merge into one chunk up to this
    # many tokens (None: the chunker's default, half the budget, 125). 190 won on the tuning
    # corpora (0.704 vs 0.679 MRR@10) but on the held-out ones it took serde_json from 0.432
    # to 0.378, below the 40-line windows (0.402), for +0.006 overall.
    merge_target: int | None = None
    # What the model embeds above a chunk's text (codevouch/indexer/embedtext.py): "path-symbol",
    # "path", "symbol", or None (the text alone, as releases before did). Part of the vector
    # space's name (store.space_name).
    embed_context: str | None = DEFAULT_EMBED_CONTEXT

    # --- search knobs: how one index is searched ---
    # A fused score's multiplier per file kind when no kind filter is given (see KIND_WEIGHTS).
    kind_weights: Mapping[str, float] = field(default_factory=lambda: KIND_WEIGHTS)
    # The kind weights of a sentence query (retriever/query.py: more words than name_first_words,
    # not one name), which asks for the code that does something: the test prior is stronger
    # there, so a test that calls a function ranks after it (None: kind_weights for every query).
    # Chosen on the tuning split (see SENTENCE_KIND_WEIGHTS).
    sentence_kind_weights: Mapping[str, float] | None = field(default_factory=lambda: SENTENCE_KIND_WEIGHTS)
    # The test weight of a query that names tests (store/lexical.TEST_WORDS: "test", "fixture",
    # ...), when that is more than its kind weights give (None: source's weight, so such a test
    # ranks as source; 0.0: the rule off). Whole repositories, every docstring, held-out: the
    # rule ranks 62 of 69 test docstrings that name tests better and none worse, and 9 of 1,566
    # library docstrings worse ("Creates a test client ...": the tests that call it come first);
    # 0.8 and 0.6 lose test queries first (flask 0.395 -> 0.353 -> 0.243). Tuning split: 1 test
    # docstring names tests (better), 1 of 349 library docstrings worse. BENCHMARKS.md, "Whole
    # repositories".
    named_tests_weight: float | None = None
    # One hit per definition (see collapse.py).
    collapse: bool = True
    # How much the lexical list counts against the dense one in the fusion: 0.75 beat 0.5, 1.0
    # and 1.5, by a margin within noise for 55 queries. Since the embedded text carries path and
    # symbol, 1.0 won on the tuning corpora (0.699 vs 0.679) but lost on the held-out ones
    # (0.613 vs 0.616), so 0.75 stays.
    lexical_weight: float = 0.75
    # Reciprocal rank fusion's usual constant: ranks matter, raw scores do not.
    rrf_k: int = 60
    # How the lists are fused: "scores", each list's scores divided by its best (cosine, BM25; a
    # negative cosine counts 0.0) and summed by weight (retriever/fusion.fuse_scores), which keeps
    # the size of the gaps rank fusion throws away; "rrf", by rank (rrf_k). With own name words
    # (own_words_weight) instead of the qualified ones, whole repositories sampled to 120 kB
    # (quick profile, every documented function), docstring MRR@10 tuning / held-out: rank fusion
    # with the qualified names' words 0.714 / 0.701, this 0.758 / 0.713 (names and their words at
    # rank 1 unchanged), and the README's story passes (tests/retriever/test_opening_example.py).
    # Scaled between each list's last and first instead, the second of two chunks scored 0.0.
    fusion: str = "scores"
    # Hits whose fused scores are within this of each other tie, and are ordered by the dense
    # similarity, then the lexical score (0.0: only equal scores tie). 0.006 (about one rank
    # step at the top of the dense list): tuning 0.685 -> 0.697, held-out 0.700 -> 0.696: off.
    tie_band: float = 0.0
    # Identifier-aware query terms (clauses of the tantivy copy's query): each
    # two adjacent query words also as one term, so "cookie jar" meets `CookieJar` as a unit.
    # "joined": the term "cookiejar"; "phrase": a phrase query "cookie jar"; None: words only.
    # Hybrid: joined 0.666, phrase 0.655, words 0.644; lexical alone: joined 0.604, words
    # 0.609, so lexical mode keeps words only.
    lexical_pairs: str | None = "joined"
    # In a query of at most `name_first_words` words (0: never), the chunks that define a name the
    # query spells (`send`, `Client.send`, "raise for status"; store/lexical.query_name_keys) are a
    # third list in the fusion, at `name_weight`, and rank above every other chunk. In longer
    # queries (sentences) only a name the whole query spells counts (`a_name_of_six_parts`, or
    # its words): fused with the names a sentence mentions, held-out docstring MRR@10 fell.
    name_weight: float = 1.0
    name_first_words: int = 4
    # The lexical list also scores the words of what a chunk defines (its symbol) at this boost
    # (0: only as the chunk's other terms, which hold them too).
    name_boost: float = 0.0
    # The lexical list also scores the chunk's terms unstemmed, whole identifiers kept
    # (`raise_for_status` as one token; the stemmed field splits it), at this boost (0: off).
    exact_boost: float = 0.0
    # In a sentence query, a fourth list in the fusion at this weight (0: off): the chunks ranked
    # by the query's words against the words of what they define (`routeHTTP` -> route, http;
    # stemmed), so "where is the request routed" meets `routeHTTP` whatever its body says.
    # Tuning split, whole repositories, docstring MRR@10 (rank fusion): 0 0.529, 0.25 0.600, 0.5
    # 0.618, 1.0 0.632, 1.5 0.617, 2.0 0.616 (with the sentence kind weights). Off by default since
    # score fusion: own_words_weight's list replaces it.
    name_words_weight: float = 0.0
    # In a sentence, a name-words list at this weight (0: off): the query's words against each
    # defined name's own words, without its container's (`OrderService.cancel_order`: cancel,
    # order). A class's words stand in the name of every member: through them a member shares the
    # query's words as much as through its own name, and in the README's order story the legacy
    # `CancelOrderHandler.handle_request` (cancel, order through its class, request through its
    # method) outranked `OrderService.cancel_order`, whose own name is what the sentence asks for.
    # Sampled to 120 kB, docstring MRR@10 tuning / held-out, with score fusion: own words at 1.0
    # instead of qualified 0.758 / 0.713, at 0.5 0.721 / 0.720 (1.0 won on tuning), qualified at
    # 1.0 0.775 / 0.725, but the story's handler first; with rank fusion no weight helped both
    # splits (docs/SEARCH.md).
    own_words_weight: float = 1.0
    # A large module's neighbours. Of the tuning split's docstring queries that missed rank 1, 90 of
    # 184 lost it to another chunk of the target's own file, and read one by one (whole repositories,
    # every documented function) two causes were the fusion's: the dense list divided by its best
    # cosine spans only 0.7-1.0 over its first 30 chunks, so the target's higher cosine (0.66 against
    # 0.51 for `ToolMaturin` over `PyProjectToml.exclude`) counted less than a neighbour's name words;
    # and the own-words list scored a chunk of several small definitions by all their names' words
    # together (`ParamType.__call__, ParamType.get_metavar, ...`), which BM25's length normalization
    # held against it beside a one-name neighbour (`Choice.get_metavar`).
    # `own_words_per_name`: the own-words list scores a chunk by the best of the names it defines,
    # each alone (lexlists.per_name; False: by all their words together, as one field).
    # `dense_floor`: in score fusion, the share of the dense list's best cosine that scores 0.0
    # there, the list's scores stretched from it to the best (0.0: divided by the best, as every
    # list's). Tuning split, docstring MRR@10 (own-file losses / misses): neither 0.610 (90/184), per
    # name 0.623 (85/180), floor 0.5 0.625 (88/179), both 0.642 (80/172); floor 0.3 0.627, 0.6
    # 0.642, 0.7 0.640 with per name: 0.5, the milder of the tie. Own and lexical weights 0.5-1.0
    # beside them: 0.627-0.643. Names and their words at rank 1 unchanged (1.0, 0.987); click's test
    # docstrings 0.588 -> 0.616. Held-out figures in BENCHMARKS.md ("Whole repositories").
    own_words_per_name: bool = True
    dense_floor: float = 0.5
    # A chunk whose code only declares (ChunkRecord.declaration: a TypeScript interface, type
    # alias, overload signature or `declare`) has its fused score multiplied by this, unless it
    # defines a name the query spells (the name tier finds an interface by its name, as before)
    # or the query asks for declarations (query.DECLARATION_WORDS: "type", "interface", ...): a
    # question about behaviour ("where are beforeRequest hooks run") asks for the body that does
    # it, not the type that names it (1.0: off). BENCHMARKS.md, figure 3.
    declaration_weight: float = 0.5
    # How deep each list of the fusion is, at least (3 x k when that is more; a --kind filter
    # looks 4 times deeper, since it drops candidates after ranking).
    list_depth: int = 30
    # How many times a ranking is asked again, deeper, when too few of its keys were the
    # branch's (see retriever.members.members).
    max_widenings: int = 4
    # A hit is a good match when its similarity (query . chunk cosine) reaches this; when no hit
    # does, search says so instead of presenting them as answers. None: the model's measured
    # threshold (MATCH_THRESHOLDS), or no judgement for a model that has none.
    match_threshold: float | None = None

    def __post_init__(self) -> None:
        if self.embed_context not in EMBED_CONTEXTS:
            raise InputError(f"unknown embed_context {self.embed_context!r}; use one of "
                             f"{', '.join(map(str, EMBED_CONTEXTS))}.")
        if self.lexical_pairs is not None and self.lexical_pairs not in LEXICAL_PAIRS:
            raise InputError(f"unknown lexical_pairs {self.lexical_pairs!r}; use joined, phrase or None.")
        if self.match_threshold is not None and not -1.0 <= self.match_threshold <= 1.0:
            raise InputError(f"match_threshold is a cosine, between -1 and 1 (got {self.match_threshold}).")
        if self.fusion not in FUSIONS:
            raise InputError(f"unknown fusion {self.fusion!r}; use one of {', '.join(FUSIONS)}.")
        if not 0.0 <= self.declaration_weight <= 1.0:
            raise InputError(f"declaration_weight is a factor between 0 and 1 (got {self.declaration_weight}).")
        if not 0.0 <= self.dense_floor < 1.0:
            raise InputError(f"dense_floor is a share of the best cosine, at least 0 and below 1 (got {self.dense_floor}).")
        if self.list_depth < 1:
            raise InputError(f"list_depth must be at least 1 (got {self.list_depth}).")
        if self.max_widenings < 1:
            raise InputError(f"max_widenings must be at least 1 (got {self.max_widenings}).")
        # A caller's dict is copied and frozen: a setting must not change after it was made.
        object.__setattr__(self, "kind_weights", MappingProxyType(dict(self.kind_weights)))
        if self.sentence_kind_weights is not None:
            object.__setattr__(self, "sentence_kind_weights", MappingProxyType(dict(self.sentence_kind_weights)))

    def __hash__(self) -> int:
        sentence = tuple(sorted(self.sentence_kind_weights.items())) if self.sentence_kind_weights is not None else None
        return hash((tuple(sorted(self.kind_weights.items())), sentence) + self._scalars())

    def _scalars(self) -> tuple[Any, ...]:
        return (self.merge_target, self.embed_context, self.collapse, self.lexical_weight, self.rrf_k,
                self.lexical_pairs, self.max_widenings, self.name_weight, self.name_first_words, self.name_boost,
                self.exact_boost, self.match_threshold, self.name_words_weight, self.list_depth,
                self.named_tests_weight, self.fusion, self.tie_band, self.own_words_weight,
                self.declaration_weight, self.own_words_per_name, self.dense_floor)

    def build_key(self) -> tuple[int | None, str | None]:
        """The build knobs: two settings with one build key index alike (same chunks, same keys)."""
        return (self.merge_target, self.embed_context)

    def threshold_for(self, model: str | None) -> float | None:
        """The similarity a good match reaches, for vectors of `model` (see match_threshold)."""
        if self.match_threshold is not None:
            return self.match_threshold
        if model is None:
            return None
        # The packaged MiniLM named by its directory is the same model, on the same scale.
        return MATCH_THRESHOLDS.get(MODEL_NAME if is_packaged(model) else model)

    def kind_weight(self, kind: str) -> float:
        return self.kind_weights.get(kind, 1.0)


DEFAULT = Settings()
