"""Whether a hit is a good match for its query: pure decisions over a ranked candidate.

A hit matches by name when the query spells its symbol (`name_matches`) or the search found
it as a definition of a name the query spells; it is a good match when it matches by name or
its similarity reaches the model's threshold (`good_match`).
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from codevouch.store import lexical
from codevouch.syntax.lines import MODULE_SYMBOL

DEFINITION_NAME = "definition-name"   # retriever.search's match label for a definition the query names


def name_matches(query: str, symbol: str) -> bool:
    """Whether `query` spells `symbol`: the qualified name or its last component, whatever the
    case (`client.send`, `send`), or the same identifier words (`raise for status` for
    `raise_for_status`, `g zip decoder` and `gzip decoder` for `GZipDecoder`)."""
    q, words = query.strip().lower(), lexical.parts(query)
    for sym in symbol.lower().split(", "):   # a merged chunk names each of its definitions
        if not sym or sym == MODULE_SYMBOL:
            continue
        last = re.split(r"\.|::|#", sym)[-1]
        if q in (sym, last) or (words and (words == lexical.parts(last)
                                           or "".join(words) == re.sub(r"[^0-9a-z]", "", last))):
            return True
    return False


def matches_by_name(query: str, symbol: str, matched: Sequence[str]) -> bool:
    """The query spells the symbol, or the search found the chunk as a definition of a name
    the query spells (`matched` holds DEFINITION_NAME)."""
    return name_matches(query, symbol) or DEFINITION_NAME in matched


def good_match(named: bool, similarity: float | None, threshold: float | None) -> bool | None:
    """A name match is a good match; else the similarity against the model's threshold; None
    when that cannot be told (no similarity: lexical mode; no threshold: a model never measured)."""
    if named:
        return True
    if similarity is None or threshold is None:
        return None
    return similarity >= threshold
