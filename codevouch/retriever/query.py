"""A search query as the retriever reads it, read once per search: its words and parts, whether
it names tests, the names it spells and the qualified names whose qualifier may be a package or
module (pure). Every stage of a search, and the api's name matching of its hits, reads these
instead of splitting the query's text again.

`chi.URLParam` is the exact key `chi.urlparam` (a type `chi` with a member `URLParam`) and also
`URLParam` qualified by `chi`, which a definition answers when its file is in package `chi`
(syntax/packages.py); `crate::routing::Router` is `Router` in module `routing`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

from codevouch.retriever.mode import SearchMode
from codevouch.retriever.settings import Settings
from codevouch.store import lexical
from codevouch.vocabulary import Kind

# With the name tier off (dense mode, name_first_words 0), a query of more words than this is a sentence.
SENTENCE_WORDS = 4
# Words of a query that ask for declarations (types, interfaces, signatures): a chunk that only
# declares is then not ranked after the bodies (Settings.declaration_weight).
DECLARATION_WORDS = frozenset("type types typing typings interface interfaces signature signatures declaration "
                              "declarations declare declared overload overloads alias aliases typedef".split())
_QUALIFIED = re.compile(rf"{lexical.IDENTIFIER}(?:(?:\.|::){lexical.IDENTIFIER})+")


@dataclass(frozen=True)
class Qualified:
    """A name written with a qualifier: the qualifier as written (`chi`, `crate::routing`) and
    the name key of the rest (`urlparam`, `type.method`)."""
    qualifier: str
    key: str


@dataclass(frozen=True)
class Query:
    """A query as the retriever reads it, once (`read`): its text, its words (lexical.terms:
    identifiers split at case and underscores, stop words out), whether it is a sentence, the
    exact name keys it spells (lexical.query_name_keys) and its qualified names."""
    text: str
    names: tuple[str, ...] = ()
    qualified: tuple[Qualified, ...] = ()
    words: tuple[str, ...] = ()
    # The words in order, each identifier as its parts, stop words out (lexical.parts): the lexical
    # list's word pairs (lexlists.terms) and the name match of a hit (matching.spells).
    parts: tuple[str, ...] = ()
    # The text without surrounding white space: a definition spelled with the query's own case
    # (lexical.spelled_exactly) and the name match of a hit.
    stripped: str = ""
    # The query asks for tests (lexical.names_tests): test chunks rank as source (kind_weights).
    tests: bool = False
    # The query asks for declarations (DECLARATION_WORDS): a chunk that only declares ranks as a body.
    declarations: bool = False
    # More words than Settings.name_first_words and not one name as a whole: prose, which asks
    # for the code that does something (the sentence priors: Settings.sentence_kind_weights,
    # name_words_weight).
    sentence: bool = False
    # More words than Settings.name_first_words, stop words counted, that spell a name only as a
    # whole: one long name's words ("build wheel for abi 3 target") or a sentence ("how is a route
    # matched in the tree"). Only the index can tell: a sentence unless a definition has that
    # name (`as_sentence`, search._rankings).
    undecided: bool = False

    def as_sentence(self) -> Query:
        """The query read as prose, when the name its words spell is defined nowhere."""
        return Query(self.text, words=self.words, parts=self.parts, stripped=self.stripped, tests=self.tests,
                     declarations=self.declarations, sentence=True)

    def kind_weights(self, settings: Settings) -> dict[str, float]:
        """The kind weights for this query: a sentence's (Settings.sentence_kind_weights) or every
        query's; a query that names tests (lexical.TEST_WORDS) ranks test chunks as source
        (Settings.named_tests_weight)."""
        sentence = settings.sentence_kind_weights if self.sentence else None
        weights = dict(sentence if sentence is not None else settings.kind_weights)
        if self.tests:
            named = settings.named_tests_weight
            weights[Kind.TEST] = max(weights.get(Kind.TEST, 1.0),
                                     weights.get(Kind.SOURCE, 1.0) if named is None else named)
        return weights

    @property
    def lookup(self) -> list[str]:
        """Every key to look up in the name field: the exact ones, then the qualified names' rests."""
        return list(dict.fromkeys([*self.names, *(q.key for q in self.qualified)]))


def read(text: str, mode: str, settings: Settings) -> Query:
    """The query as the name tier reads it. A longer query, a sentence, names code in passing
    (fused with them, held-out docstring queries lost 0.616 -> 0.604 MRR@10; BENCHMARKS.md), so
    it counts only when it is one name as a whole: `test_find_bridge_pyo3_feature` (six parts)
    or "write binding wheel abi 3", which no sentence spells."""
    words = tuple(lexical.terms(text))
    parts = tuple(lexical.parts(text))
    count = len(parts)
    said = Query(text, words=words, parts=parts, stripped=text.strip(), tests=lexical.holds_test_words(words),
                 declarations=not DECLARATION_WORDS.isdisjoint(words))
    if mode == SearchMode.DENSE or settings.name_first_words <= 0:
        return replace(said, sentence=count > max(settings.name_first_words, SENTENCE_WORDS))
    short = count <= settings.name_first_words
    names = tuple(lexical.query_name_keys(text, whole_only=not short))
    bare = text.strip().strip("`").strip()
    whole = _QUALIFIED.fullmatch(bare)
    tokens = [bare] if whole else _QUALIFIED.findall(text) if short else []
    quals = tuple(dict.fromkeys(q for token in tokens for q in qualified(token)))
    # Only the whole's squashed words spell a name (a name's own keys are written without "~").
    undecided = (len(bare.split()) > settings.name_first_words and bool(names) and not quals
                 and all(key.startswith("~") for key in names))
    return replace(said, names=names, qualified=quals, sentence=not short and not names, undecided=undecided)


def qualified(token: str) -> list[Qualified]:
    """Each way to read a dotted or `::` name as qualifier and rest, the longest qualifier
    last: `a.B.c` -> (a, b.c), (a.B, c)."""
    parts = [p for p in re.split(r"\.|::", token) if p]
    sep = "::" if "::" in token else "."
    return [Qualified(sep.join(parts[:i]), ".".join(parts[i:]).lower()) for i in range(1, len(parts))]
