"""What the drop-in filters share, with no pipeline library imported: another tool's window as
a snippet the validator reads, its verdict as flat metadata, and what is kept.

A window is judged by its text (validator/verbatim.py). Kept: `usable` and `stale-but-ok`.
Dropped: `historical-only` and `excluded`; with `keep_history`, a historical-only window whose
code still exists comes back with `current`'s text in place of its own, marked so.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codevouch.validator import Validated, validate

KEEP = ("usable", "stale-but-ok")
# Metadata keys fed back to the pipeline (flat scalars: vector stores keep only those).
PREFIX = "codevouch_"


_HEX = re.compile(r"[0-9a-fA-F]{7,64}")
_EXTRA: dict[str, Callable[[Any], bool]] = {
    "commit": lambda v: isinstance(v, str) and bool(_HEX.fullmatch(v)),
    "blob_sha": lambda v: isinstance(v, str) and bool(_HEX.fullmatch(v)),
    "start_line": lambda v: type(v) is int and v >= 1,
    "end_line": lambda v: type(v) is int and v >= 1,
    "symbol": lambda v: isinstance(v, str) and bool(v),
    "branch": lambda v: isinstance(v, str) and bool(v),
}


@dataclass(frozen=True)
class Window:
    """One pipeline item as the validator reads it: where it claims to be, and its text."""
    path: str
    text: str
    start_char: int | None = None
    extra: Mapping[str, Any] | None = None     # commit, blob_sha, start_line, end_line, when given

    def snippet(self, commit: str | None) -> dict[str, Any]:
        item: dict[str, Any] = {"path": self.path, "text": self.text}
        if self.start_char is not None:
            item["start_index"] = self.start_char
        for key, fits in _EXTRA.items():
            value = (self.extra or {}).get(key)
            if fits(value):      # another tool's metadata of another shape is not ours: left out
                item[key] = value
        if commit and "commit" not in item:
            item["commit"] = commit
        return item


@dataclass(frozen=True)
class Judged:
    """A window's verdict and what the pipeline gets back: None to drop it, else the text to
    carry (its own, or `current`'s) and the metadata to add."""
    validated: Validated
    text: str | None
    metadata: Mapping[str, Any]


def path_in(root: Path, path: str) -> str:
    """An absolute path inside the repository, made relative; any other path as given (the
    validator excludes paths outside the repository, reading nothing)."""
    given = Path(path)
    if not given.is_absolute():
        return path
    for base in (root, root.resolve()):
        try:
            return given.relative_to(base).as_posix()
        except ValueError:
            continue
    return path


def judge(repo: Path | str, windows: Sequence[Window], *, commit: str | None = None,
          keep_history: bool = False) -> list[Judged]:
    """A verdict for each window, in order (one validate call for all), with what to keep."""
    root = Path(repo)
    items = [Window(path_in(root, w.path), w.text, w.start_char, w.extra).snippet(commit) for w in windows]
    results = validate(root, items)
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
