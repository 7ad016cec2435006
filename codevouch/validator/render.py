"""Output for people (`render_text`) and programs (`to_json`); the pieces a context pack is made of
(`code_block`, `summary`: the pack itself is codevouch/pack.py)."""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any

from codevouch.printable import one_line, visible
from codevouch.syntax.extensions import FENCE_TAG_BY_EXTENSION
from codevouch.syntax.lines import cut_text
from codevouch.validator.citation import clean, current_location
from codevouch.validator.model import VERDICTS, Validated
from codevouch.vocabulary import CURRENT_VERDICTS, Verdict

# What a search hit's JSON adds for the search's own check (`Hit.to_json`). A hit handed back to
# validate is checked again, so these are dropped with the old verdict rather than passed on:
# kept, they would show what the earlier search found beside what this check found.
SEARCH_ONLY = ("code", "reference_text", "outline", "cut")


def to_json(v: Validated) -> dict[str, Any]:
    """The input snippet as given (less a search hit's SEARCH_ONLY fields), plus verdict, reason,
    detail, current and citation; and, for an
    item of a validate call, where it was in the input (`input_index`, 0-based) and its id."""
    given = {k: val for k, val in v.snippet.items() if k not in SEARCH_ONLY}
    out = {**given, "verdict": v.verdict, "reason": v.reason, "detail": v.detail,
           "current": v.current.to_json() if v.current else None, "citation": v.citation}
    if v.position is not None:
        out["input_index"] = v.position
        out["input_id"] = v.item_id
    return out


def summary(results: Sequence[Validated]) -> str:
    counts = Counter(v.verdict for v in results)
    return "verdicts: " + ", ".join(f"{name} {counts.get(name, 0)}" for name in VERDICTS)


def render_text(results: Sequence[Validated], max_chars: int | None = None,
                extras: Sequence[str | None] = ()) -> str:
    """For a terminal: each snippet's citation header, reason, score and code, then the counts.

    Historical code is never shown as current: when the symbol still exists, the current
    version re-read from the working tree is shown; otherwise the old text is shown under an
    explicit "reference only" line. max_chars: the code of each at most that long, cut at a
    line's end, and a line that says which lines are not shown. extras: lines to show after a
    snippet's code (a search hit's outline), by position.
    """
    if not results:
        return "no snippets\n"
    blocks = []
    for number, v in enumerate(results):
        lines = [v.citation, f"reason: {v.reason}: {clean(v.detail)}"]
        score = _score(v.snippet)
        if score:
            lines.append(score)
        code = _code_for_people(v, max_chars)
        extra = extras[number] if number < len(extras) else None
        blocks.append("\n".join(lines) + (f"\n{code}" if code else "") + (f"\n{extra}" if extra else ""))
    # Code and details come from the repository: no control character reaches a terminal raw.
    return visible("\n\n".join(blocks) + "\n\n" + summary(results) + "\n")


def _score(snippet: Any) -> str | None:
    """A search hit's score line: the similarity (cosine, comparable across queries) and whether
    it is a good match; the fused rank score only when there is no similarity (lexical mode)."""
    sim, good, score = snippet.get("similarity"), snippet.get("good_match"), snippet.get("score")
    if isinstance(sim, (int, float)):
        return f"similarity: {sim:.2f}" + {True: " (good match)", False: " (weak)"}.get(good, "")
    if isinstance(score, (int, float)):
        return f"score: {score:.3f} (rank score; no similarity in lexical mode)"
    return None


def brief_line(verdict: str | None, path: str, start: int, end: int, symbol: str | None, snippet: Any) -> str:
    """One hit on one line, as grep and ripgrep users read results: verdict, path:start-end,
    symbol, similarity (or rank score), what matched when known; escaped for a terminal."""
    sim, score = snippet.get("similarity"), snippet.get("score")
    shown = (f"{sim:.2f}" if isinstance(sim, (int, float))
             else f"rank {score:.3f}" if isinstance(score, (int, float)) else "-")
    if snippet.get("good_match") is False:
        shown += " weak"
    matched = snippet.get("matched")
    if isinstance(matched, (list, tuple)):
        matched = ",".join(map(str, matched))
    parts = [verdict or "unchecked", f"{path}:{start}-{end}", symbol or "-", shown]
    if matched:
        parts.append(f"[{matched}]")
    return one_line("  ".join(str(p) for p in parts))


def render_brief(results: Sequence[Validated]) -> str:
    """One line per hit (see brief_line); where the code is now when it moved."""
    lines = []
    for v in results:
        where = v.current if v.current is not None and v.verdict in CURRENT_VERDICTS else None
        s = v.snippet
        lines.append(brief_line(v.verdict, where.path if where else v.parsed.path,
                                where.start_line if where else int(s.get("start_line") or 0),
                                where.end_line if where else int(s.get("end_line") or 0),
                                s.get("symbol"), s))
    return "".join(line + "\n" for line in lines)


def _code_for_people(v: Validated, max_chars: int | None = None) -> str | None:
    if v.verdict == Verdict.EXCLUDED:
        return None
    if v.verdict == Verdict.HISTORICAL_ONLY:
        if v.current is not None:
            return f"current code ({current_location(v.current)}), re-read from the working tree:\n" + \
                capped_code(v.current.text, v.current.path, v.current.start_line, v.current.end_line, max_chars)
        if v.parsed.text is None:
            return None
        return "historical text, reference only (not in the working tree):\n" + \
            capped_code(v.parsed.text, v.parsed.path, v.parsed.start_line, v.parsed.end_line, max_chars)
    if v.current is not None:
        return capped_code(v.current.text, v.current.path, v.current.start_line, v.current.end_line, max_chars)
    p = v.parsed
    return None if p.text is None else capped_code(p.text, p.path, p.start_line, p.end_line, max_chars)


def capped_code(text: str, path: str, start: int | None, end: int | None, max_chars: int | None) -> str:
    """The code indented, cut at `max_chars` with a line that says what is not shown (the text
    form of a JSON hit's `cut` entry)."""
    kept = cut_text(text, max_chars) if max_chars else None
    if kept is None:
        return _indent(text)
    first = start or 1
    last = end if end is not None else first + text.count("\n")
    shown_end = first + kept[1] - 1
    where = (f"lines {first}-{shown_end} of {first}-{last} shown" if kept[1]
             else f"the first {max_chars} characters of line {first} shown")
    rest = f"{path}#L{max(first, shown_end + 1)}-L{last}"
    return (_indent(kept[0]) + f"\n... cut at {max_chars:,} characters ({len(text):,} in all): {where}; "
            f"the rest is {rest} (--max-chars 0 shows it all)")


def _indent(text: str) -> str:
    # Indented, so code lines can never be mistaken for header lines such as `check:`.
    return "\n".join("    " + line for line in text.split("\n"))


def fence(text: str) -> str:
    """A backtick fence longer than any backtick run in `text`, so the text cannot close it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def language(path: str) -> str:
    return FENCE_TAG_BY_EXTENSION.get(PurePosixPath(path).suffix.lower(), "")


def code_block(path: str, text: str) -> str:
    f = fence(text)
    return f"{f}{language(path)}\n{text}\n{f}"
