"""What the drop-in filters share, with no pipeline library imported: another tool's window as
a snippet the validator reads (`Window`, from validator/shapes.py, which reads the same shapes
as JSON for `validate`), its verdict as flat metadata, and what is kept.

A window is judged by its text (validator/verbatim.py). Kept: `usable` and `stale-but-ok`.
Dropped: `historical-only` and `excluded`; with `keep_history`, a historical-only window whose
code still exists comes back with `current`'s text in place of its own, marked so.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codevouch.validator import Validated, validate
from codevouch.validator.shapes import Window, langchain_window, llamaindex_window

__all__ = ["KEEP", "PREFIX", "Judged", "Window", "judge", "langchain_window", "llamaindex_window"]

KEEP = ("usable", "stale-but-ok")
# Metadata keys fed back to the pipeline (flat scalars: vector stores keep only those).
PREFIX = "codevouch_"


@dataclass(frozen=True)
class Judged:
    """A window's verdict and what the pipeline gets back: None to drop it, else the text to
    carry (its own, or `current`'s) and the metadata to add."""
    validated: Validated
    text: str | None
    metadata: Mapping[str, Any]


def judge(repo: Path | str, windows: Sequence[Window], *, commit: str | None = None,
          keep_history: bool = False) -> list[Judged]:
    """A verdict for each window, in order (one validate call for all), with what to keep. An
    absolute path inside the repository is read as the relative one (the validator's rule)."""
    results = validate(Path(repo), [w.snippet(commit) for w in windows])
    return [_judged(v, keep_history) for v in results]


def _judged(v: Validated, keep_history: bool) -> Judged:
    meta: dict[str, Any] = {f"{PREFIX}verdict": v.verdict, f"{PREFIX}reason": v.reason,
                            f"{PREFIX}detail": v.detail, f"{PREFIX}citation": v.citation}
    if v.current is not None:
        meta.update({f"{PREFIX}current_path": v.current.path, f"{PREFIX}current_start_line": v.current.start_line,
                     f"{PREFIX}current_end_line": v.current.end_line})
    if v.verdict in KEEP:
        return Judged(v, v.parsed.text, meta)
    if keep_history and v.verdict == "historical-only" and v.current is not None and v.current.symbol:
        meta[f"{PREFIX}replaced"] = True
        return Judged(v, v.current.text, meta)
    return Judged(v, None, meta)
