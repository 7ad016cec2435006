"""Whether a hit is a good match for its query: pure decisions over a ranked candidate.

A hit matches by name when the query spells its symbol (`spells`) or the search found
it as a definition of a name the query spells; it is a good match when it matches by name or
its similarity reaches the model's threshold (`good_match`).
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from codevouch.retriever.query import Query
from codevouch.store import lexical
from codevouch.syntax.lines import MODULE_SYMBOL

DEFINITION_NAME = "definition-name"   # retriever.search's match label for a definition the query names


def spells(query: Query, symbol: str) -> bool:
    """Whether the query, as the search read it, spells `symbol`: the qualified name or its last
    component, whatever the case (`client.send`, `send`), or the same identifier words (`raise
    for status` for `raise_for_status`, `g zip decoder` and `gzip decoder` for `GZipDecoder`)."""
    return _spells(query.stripped.lower(), query.parts, symbol)


def _spells(q: str, words: tuple[str, ...], symbol: str) -> bool:
    for sym in symbol.lower().split(", "):   # a merged chunk names each of its definitions
        if not sym or sym == MODULE_SYMBOL:
            continue
        last = re.split(r"\.|::|#", sym)[-1]
        if q in (sym, last) or (words and (words == tuple(lexical.parts(last))
                                           or "".join(words) == re.sub(r"[^0-9a-z]", "", last))):
            return True
    return False


def matches_by_name(query: Query, symbol: str, matched: Sequence[str]) -> bool:
    """The query (as the search read it: Results.query) spells the symbol, or the search found
    the chunk as a definition of a name the query spells (`matched` holds DEFINITION_NAME)."""
    return spells(query, symbol) or DEFINITION_NAME in matched


def good_match(named: bool, similarity: float | None, threshold: float | None,
               name_gone: bool = False) -> bool | None:
    """A name match is a good match; else the similarity against the model's threshold; None
    when that cannot be told (no similarity: lexical mode; no threshold: a model never measured).
    name_gone: the query's name was defined at the indexed commit and is gone now (the search's
    `gone`): a hit that does not carry it is not a good match, whatever its similarity, which the
    name's own words lift (`build_environ` meets `Environ.get` at 0.41-0.46)."""
    if named:
        return True
    if name_gone:
        return False
    if similarity is None or threshold is None:
        return None
    return similarity >= threshold
