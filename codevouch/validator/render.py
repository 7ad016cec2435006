"""Output for people (`render_text`) and programs (`to_json`); the pieces a context pack is made of
(`code_block`, `summary`: the pack itself is codevouch/pack.py)."""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any

from codevouch.printable import visible
from codevouch.syntax.extensions import FENCE_TAG_BY_EXTENSION
from codevouch.validator.citation import clean, current_location
from codevouch.validator.model import VERDICTS, Validated
from codevouch.vocabulary import Verdict


def to_json(v: Validated) -> dict[str, Any]:
    """The input snippet as given, plus verdict, reason, detail, current and citation."""
    return {**v.snippet, "verdict": v.verdict, "reason": v.reason, "detail": v.detail,
            "current": v.current.to_json() if v.current else None, "citation": v.citation}


def summary(results: Sequence[Validated]) -> str:
    counts = Counter(v.verdict for v in results)
    return "verdicts: " + ", ".join(f"{name} {counts.get(name, 0)}" for name in VERDICTS)


def render_text(results: Sequence[Validated]) -> str:
    """For a terminal: each snippet's citation header, reason, score and code, then the counts.

    Historical code is never shown as current: when the symbol still exists, the current
    version re-read from the working tree is shown; otherwise the old text is shown under an
    explicit "reference only" line.
    """
    if not results:
        return "no snippets\n"
    blocks = []
    for v in results:
        lines = [v.citation, f"reason: {v.reason}: {clean(v.detail)}"]
        score = v.snippet.get("score")
        if isinstance(score, (int, float)):
            lines.append(f"score: {score:.3f}")
        code = _code_for_people(v)
        blocks.append("\n".join(lines) + (f"\n{code}" if code else ""))
    # Code and details come from the repository: no control character reaches a terminal raw.
    return visible("\n\n".join(blocks) + "\n\n" + summary(results) + "\n")


def _code_for_people(v: Validated) -> str | None:
    if v.verdict == Verdict.EXCLUDED:
        return None
    if v.verdict == Verdict.HISTORICAL_ONLY:
        if v.current is not None:
            return f"current code ({current_location(v.current)}), re-read from the working tree:\n" + \
                _indent(v.current.text)
        if v.parsed.text is None:
            return None
        return "historical text, reference only (not in the working tree):\n" + _indent(v.parsed.text)
    text = v.current.text if v.current is not None else v.parsed.text
    return None if text is None else _indent(text)


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
