"""A search query as the name tier reads it, read once: the names it spells and the qualified
names whose qualifier may be a package or module (pure).

`chi.URLParam` is the exact key `chi.urlparam` (a type `chi` with a member `URLParam`) and also
`URLParam` qualified by `chi`, which a definition answers when its file is in package `chi`
(syntax/packages.py); `crate::routing::Router` is `Router` in module `routing`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from codevouch.retriever.mode import SearchMode
from codevouch.retriever.settings import Settings
from codevouch.store import lexical

# With the name tier off (dense mode, name_first_words 0), a query of more words than this is a sentence.
SENTENCE_WORDS = 4
_QUALIFIED = re.compile(rf"{lexical.IDENTIFIER}(?:(?:\.|::){lexical.IDENTIFIER})+")


@dataclass(frozen=True)
class Qualified:
    """A name written with a qualifier: the qualifier as written (`chi`, `crate::routing`) and
    the name key of the rest (`urlparam`, `type.method`)."""
    qualifier: str
    key: str


@dataclass(frozen=True)
class Query:
    """A query as the retriever reads it, once: its text, its words (lexical.terms: identifiers
    split at case and underscores, stop words out), whether it is a sentence, the exact name
    keys it spells (lexical.query_name_keys) and its qualified names."""
    text: str
    names: tuple[str, ...] = ()
    qualified: tuple[Qualified, ...] = ()
    words: tuple[str, ...] = ()
    # More words than Settings.name_first_words and not one name as a whole: prose, which asks
    # for the code that does something (the sentence priors: Settings.sentence_kind_weights,
    # name_words_weight).
    sentence: bool = False

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
    count = len(lexical.parts(text))
    if mode == SearchMode.DENSE or settings.name_first_words <= 0:
        return Query(text, words=words, sentence=count > max(settings.name_first_words, SENTENCE_WORDS))
    short = count <= settings.name_first_words
    names = tuple(lexical.query_name_keys(text, whole_only=not short))
    bare = text.strip().strip("`").strip()
    whole = _QUALIFIED.fullmatch(bare)
    tokens = [bare] if whole else _QUALIFIED.findall(text) if short else []
    return Query(text, names, tuple(dict.fromkeys(q for token in tokens for q in qualified(token))), words,
                 sentence=not short and not names)


def qualified(token: str) -> list[Qualified]:
    """Each way to read a dotted or `::` name as qualifier and rest, the longest qualifier
    last: `a.B.c` -> (a, b.c), (a.B, c)."""
    parts = [p for p in re.split(r"\.|::", token) if p]
    sep = "::" if "::" in token else "."
    return [Qualified(sep.join(parts[:i]), ".".join(parts[i:]).lower()) for i in range(1, len(parts))]
