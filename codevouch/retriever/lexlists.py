"""The rankings a search asks the branch's tantivy copy for (store/lexindex.py): the lexical
list (the query's terms against the chunks' words), the name tier's candidates (its `names`
field) and a sentence's name-words list (its `namewords` field), each cut to the branch's
chunks (retriever/members.py). search.py fuses them with the dense list.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from codevouch.errors import BadIndex
from codevouch.retriever import defined
from codevouch.retriever import query as reading
from codevouch.retriever.members import members
from codevouch.retriever.mode import SearchMode
from codevouch.retriever.searchrun import SearchRun
from codevouch.retriever.settings import DEFAULT, Settings
from codevouch.store import ChunkRecord, lex_key, lexical, lexindex


def lexical_ranking(run: SearchRun, records: dict[str, ChunkRecord], scores: dict[str, float]) -> list[str]:
    """The branch's chunks ranked by the lexical index for the run's query (their records added
    to `records`, their scores, higher better, to `scores`)."""
    ledger, index_dir, state, settings = run.ledger, run.index_dir, run.state, run.settings
    assert state.space is not None
    space, coll = state.space, state.coll
    searched = terms(run.read, run.mode, settings)
    copy = ledger.copy_of(state)
    if not searched:
        return []
    if copy is None:
        raise BadIndex(f"the lexical index of branch {state.branch} has no state stamp; run `codevouch index build`.")
    # The tantivy copy of the branch's live lexical documents (see lexindex.py): the ranking's first search
    # tells whether it can answer for this state (None: missing, stale or unreadable), and then it is
    # written from the ledger's rows before anything is taken from it. A later, deeper search that
    # fails adds nothing.
    answered = False
    by_key: dict[str, float] = {}

    def fetch(n: int) -> list[str]:
        nonlocal answered
        found = lexindex.search(index_dir, copy, searched, n, settings.name_boost, settings.exact_boost)
        if found is None and not answered:
            lexindex.ensure(index_dir, copy, lambda: ledger.lexical_docs(space, coll))
            found = lexindex.search(index_dir, copy, searched, n, settings.name_boost, settings.exact_boost)
            if found is None:
                raise BadIndex(f"the lexical index of branch {state.branch} in {index_dir} cannot be read or "
                               "written again; run `codevouch index build`.")
        answered = True
        by_key.update(found or [])
        return [key for key, _ in found or []]
    ids = members(run, False, records, fetch, by="lex_key", ranked=ledger.branch_size(coll))
    _keyed_scores(ids, records, by_key, scores)
    return ids


def terms(read: reading.Query, mode: str, settings: Settings) -> list[str]:
    """The lexical terms a search sends: the query's (its words as read), and in hybrid mode its
    word pairs too."""
    found = pairs_of(read.parts, settings.lexical_pairs) if mode == SearchMode.HYBRID else []
    return list(dict.fromkeys([*read.words, *found]))


def pairs_of(words: Sequence[str], how: str | None = DEFAULT.lexical_pairs) -> list[str]:
    """Each two adjacent words of a query's parts (Query.parts) also as one term
    (Settings.lexical_pairs says how)."""
    if how is None:
        return []
    fmt = '"{} {}"' if how == "phrase" else "{}{}"
    return [fmt.format(a, b) for a, b in zip(words, words[1:]) if a != b]


def name_ranking(run: SearchRun, names: list[str], words: list[str], records: dict[str, ChunkRecord]) -> list[str]:
    """The branch's chunks that define one of `names`, by the tantivy copy's name field (none
    when the copy cannot answer)."""
    ledger, index_dir, state = run.ledger, run.index_dir, run.state
    copy = ledger.copy_of(state)
    if copy is None:
        return []

    def fetch(n: int) -> list[str]:
        return [key for key, _ in lexindex.search_names(index_dir, copy, names, n, words) or []]
    # Prose has name keys too ("the function send" names `send` by its words): defined.confirmed
    # refuses them, so they must not take the list's depth (a long definition's window with its
    # `def` line was cut out by 40 Markdown pages that mention the name).
    return members(run, False, records, fetch, by="lex_key", ranked=ledger.branch_size(state.coll),
                   admit=defined.may_define)


# A sentence's name-words lists: the tantivy copy's field each ranks against, and the Settings
# knob of its weight in the fusion: `namewords`, the qualified names' words (`OrderService.cancel_order`:
# order, service, cancel, order), and `ownwords`, each defined name's own (cancel, order).
NAME_WORDS = {"namewords": "name_words_weight", "ownwords": "own_words_weight"}


def name_words_ranking(run: SearchRun, read: reading.Query, records: dict[str, ChunkRecord],
                       scores: dict[str, float], field: str = "namewords") -> list[str]:
    """The branch's chunks ranked by the words of `read` (the run's query, or that query read as a
    sentence) against the words of what they define (the tantivy copy's `field`, NAME_WORDS,
    stemmed; none when it cannot answer), scores to `scores`."""
    ledger, index_dir, state = run.ledger, run.index_dir, run.state
    copy = ledger.copy_of(state)
    if copy is None or not read.words:
        return []
    by_key: dict[str, float] = {}

    def fetch(n: int) -> list[str]:
        by_key.update(found := lexindex.search(index_dir, copy, read.words, n, only=field) or [])
        return [key for key, _ in found]
    ids = members(run, False, records, fetch, by="lex_key", ranked=ledger.branch_size(state.coll))
    _keyed_scores(ids, records, by_key, scores)
    return ids


def field_stats(run: SearchRun, field: str) -> Callable[[list[str]], lexindex.Stats | None]:
    """BM25's counts of `field` in the run's copy, for the tokens asked (None: it cannot answer)."""
    copy = run.ledger.copy_of(run.state)
    return lambda tokens: lexindex.stats(run.index_dir, copy, tokens, field=field) if copy is not None else None


def per_name(ids: list[str], records: dict[str, ChunkRecord], scores: dict[str, float],
             stats_of: Callable[[list[str]], lexindex.Stats | None], words: Sequence[str]) -> list[str]:
    """`ids` rescored, best first, as the best of the names each chunk defines, each name's own
    words a document of its own (BM25 with the field's counts): a chunk that merged several small
    definitions scores as its best-matching one, not as the words of all of them together, which
    BM25's length normalization holds against it."""
    clauses = lexindex.clauses(words)
    stats = stats_of([t for c in clauses for t, _ in c])
    if stats is None or not stats.docs or not stats.tokens:
        return ids
    avgdl = stats.tokens / stats.docs
    analyse = lexindex.analyzer()
    weights = [(c, sum(lexindex.idf(stats.df.get(t, 0), stats.docs) for t, _ in c)) for c in clauses]
    for cid in ids:
        best = 0.0
        for name in records[cid].symbol.split(","):
            counted = Counter(analyse(lexical.own_name_words(name)))
            length = sum(counted.values())
            if not length:
                continue
            score = sum(lexindex.bm25(idf, tf, length, avgdl) for c, idf in weights
                        if (tf := min(counted[t] for t, _ in c)))
            best = max(best, score)
        scores[cid] = best
    return sorted(ids, key=lambda cid: -scores[cid])


def _keyed_scores(ids: list[str], records: dict[str, ChunkRecord], by_key: dict[str, float],
                  scores: dict[str, float]) -> None:
    """Each chunk's score in `scores`, from the lexical key's (`by_key`, as tantivy answered)."""
    scores.update((cid, by_key.get(lex_key(records[cid].path, records[cid].symbol, records[cid].text_hash), 0.0))
                  for cid in ids)
