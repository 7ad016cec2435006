"""Check retrieved snippets against the git working tree before an agent uses them.

    results = validate(repo, parse_snippets(text))   # one Validated per snippet, in order
    to_json(results[0]); render_text(results); context_pack(results)

Facts are gathered once per call (facts.py, a handful of git processes whatever the
number of snippets); each verdict is a pure function of them (decide.py).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from codevouch.validator.citation import header
from codevouch.validator.decide import decide
from codevouch.validator.facts import Facts, gather
from codevouch.validator.model import REASONS, VERDICTS, Current, Decision, Snippet, Validated
from codevouch.validator.parse import check_snippet, parse_snippets
from codevouch.validator.render import context_pack, render_text, summary, to_json

__all__ = ["REASONS", "VERDICTS", "Current", "Decision", "Facts", "Snippet", "Validated", "context_pack",
           "decide", "gather", "parse_snippets", "render_text", "summary", "to_json", "validate"]


def validate(repo: Path | str, snippets: Sequence[Mapping[str, Any]], strict: bool = False) -> list[Validated]:
    """A verdict for each snippet (dicts as from parse_snippets or `search --json`), in input order.

    strict=True hashes every referenced file, even those the HEAD-and-clean fast path would pass.
    Raises InputError for a malformed snippet, GitError subclasses for repository problems.
    """
    parsed = [check_snippet(item, f"snippet {n}") for n, item in enumerate(snippets, 1)]
    facts = gather(repo, parsed, strict)
    results = []
    for item, s in zip(snippets, parsed):
        d = decide(s, facts, strict)
        loc = facts.located[s.path]
        commit = facts.commit_of(s)
        cite = header(s, d, loc.rel or s.path, facts.commit_dates.get(commit or ""), commit is not None)
        results.append(Validated(dict(item), s, d.verdict, d.reason, d.detail, d.current, cite))
    return results
