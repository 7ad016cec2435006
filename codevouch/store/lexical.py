"""Lexical terms of a chunk for the SQLite FTS5 index that complements dense search.

Code identifiers hide words: `cancelOrder`, `cancel_order` and `CancelOrderHandler` all say
"cancel order". Each identifier is indexed whole and split into its parts, so a query in
words meets code in identifiers. Pure functions; the ledger stores and queries the terms.
"""
from __future__ import annotations

import re

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[^\W\d_]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_STOP = frozenset("a an and are as at be by for from in is it of on or the this to with".split())


def identifier_terms(word: str) -> list[str]:
    parts = [p.lower() for chunk in word.split("_") for p in _CAMEL.findall(chunk)]
    whole = word.lower().strip("_")
    return [whole] + [p for p in parts if p != whole] if whole else parts


def terms(text: str) -> list[str]:
    out: list[str] = []
    for word in _WORD.findall(text):
        out.extend(t for t in identifier_terms(word) if t and t not in _STOP)
    return out


def parts(text: str) -> list[str]:
    """The words of `text` in order, identifiers split into their parts, stop words left out."""
    out: list[str] = []
    for word in _WORD.findall(text):
        split = identifier_terms(word)
        out.extend(t for t in (split[1:] or split) if t and t not in _STOP)
    return out


def document(text: str, path: str, symbol: str) -> str:
    """What the FTS index sees for one chunk: its path, symbol and code, as split terms."""
    return " ".join(terms(path.replace("/", " ").replace(".", " ")) + terms(symbol) + terms(text))


def match_query(query: str) -> str | None:
    """An FTS5 MATCH expression: any of the query's terms, each quoted (query text is data)."""
    words = list(dict.fromkeys(terms(query)))
    return " OR ".join(f'"{w}"' for w in words) if words else None
