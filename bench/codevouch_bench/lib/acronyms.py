"""Acronym queries: docstring sentences that hold an all-caps acronym, each with its twin without it.

Built from the docstring targets (codevouch_bench/lib/docstrings.py, doccomments.py: the
repository's own docs, never codevouch's reading of them). A query qualifies when

- a word of it is an acronym: 2-6 capital letters (`HTTP`, `URL`, `ID`), a plural `s` or a
  `-8`-style suffix allowed (`URLs`, `UTF-8`), not inside backticks (that is code, a name);
- it is not all acronyms (a heading, a shouted sentence), and
- it describes one definition: no other target has the same sentence.

Its twin is the same sentence with every acronym removed; it must keep at least three words.
The figure asks whether an acronym helps a query or derails it: a search engine that reads
`HTTP` as a name it must find, not a word, ranks the twin above the original.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace

from codevouch_bench.lib.docstrings import Target

# Not part of a dotted name (`JSX.Element`), a path or a hyphenated word.
ACRONYM = re.compile(r"(?<![\w`.\-/])[A-Z]{2,6}(?:s|-\d+)?(?![\w`\-/]|\.\w)")
CODE = re.compile(r"`[^`]*`")
MIN_LEFT = 3


@dataclass(frozen=True)
class AcronymQuery:
    """A target whose query holds `acronyms`, and the same target asked without them."""
    target: Target
    without: Target
    acronyms: tuple[str, ...]


def acronyms_in(query: str) -> list[re.Match[str]]:
    """The acronyms of a query, outside backticked code; [] when every word is one."""
    code = [m.span() for m in CODE.finditer(query)]
    found = [m for m in ACRONYM.finditer(query) if not any(a <= m.start() < b for a, b in code)]
    return found if len(found) < len(query.split()) else []


def drop(query: str, found: list[re.Match[str]]) -> str:
    """The query with those acronyms cut out, spacing and punctuation tidied."""
    out, last = [], 0
    for m in found:
        out.append(query[last:m.start()])
        last = m.end()
    out.append(query[last:])
    text = " ".join("".join(out).split())
    text = re.sub(r"(?:^|(?<=\s))\(\s*\)", "", text)           # "(JSX)" gone whole, not `.render()`
    text = re.sub(r"\s+([,.;:!?)])(?=\s|$)", r"\1", text)      # "the DOM, and" -> "the, and"; not " :class:"
    return " ".join(text.split())


def acronym_queries(targets: list[Target]) -> list[AcronymQuery]:
    """Every target that qualifies (see the module doc), in the targets' order."""
    counts = Counter(t.query for t in targets)
    out = []
    for t in targets:
        found = acronyms_in(t.query)
        if not found or counts[t.query] > 1:
            continue
        without = drop(t.query, found)
        if len(re.findall(r"\w+", without)) < MIN_LEFT:
            continue
        out.append(AcronymQuery(t, replace(t, query=without), tuple(m.group() for m in found)))
    return out
