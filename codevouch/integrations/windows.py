"""What the drop-in filters share, with no pipeline library imported: another tool's item in the
shape `validate_items` reads (validator/shapes.py, which reads the same shapes as JSON for
`validate`), its verdict as flat metadata, and what is kept.

A window is judged by its text (validator/verbatim.py). Kept: `usable` and `stale-but-ok`.
Dropped: `historical-only` and `excluded`; with `keep_history`, a historical-only window whose
code still exists comes back with `current`'s text in place of its own, marked so. An item that
cannot be read (a Document with no `source`, a node with no file path, a negative offset) is
`excluded`, `malformed-input`, and dropped like any excluded one; the others are still judged.
"""
from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codevouch.errors import InputError
from codevouch.printable import one_line
from codevouch.validator import Validated, validate_items
from codevouch.validator.shapes import fits

__all__ = ["KEEP", "PREFIX", "Judged", "judge", "langchain_item", "llamaindex_item"]

KEEP = ("usable", "stale-but-ok")
# Metadata keys fed back to the pipeline (flat scalars: vector stores keep only those).
PREFIX = "codevouch_"
# A pipeline hands back only what it keeps, so an item dropped as unreadable is logged here:
# a retriever whose documents all lack a `source` must not look like one that found nothing.
LOG = logging.getLogger("codevouch.integrations")


def langchain_item(content: str, metadata: Mapping[str, Any], doc_id: str | None,
                   commit: str | None = None) -> dict[str, Any]:
    """A live Document as `validate_items` reads it (the fields of its `model_dump()`), with
    `commit` in its metadata where that carries none of the right form."""
    return {"page_content": content, "metadata": _cut_at(metadata, commit), "id": doc_id}


def llamaindex_item(text: str, metadata: Mapping[str, Any], start_char_idx: Any, node_id: str | None,
                    commit: str | None = None) -> dict[str, Any]:
    """A live node as `validate_items` reads it (the fields of its `model_dump()`), with `commit`
    in its metadata where that carries none of the right form."""
    return {"text": text, "metadata": _cut_at(metadata, commit), "start_char_idx": start_char_idx, "id_": node_id}


def _cut_at(metadata: Mapping[str, Any], commit: str | None) -> Mapping[str, Any]:
    """The filter's `commit` stands in only where the item has none the reader keeps, so the
    item's own commit wins. A filter's commit that is no object id is the caller's error."""
    if not commit or fits("commit", metadata.get("commit")):
        return metadata
    if not fits("commit", commit):
        raise InputError(f"commit= must be a hexadecimal object id (7-64 hex digits), got {commit[:80]!r}.")
    return {**metadata, "commit": commit}


@dataclass(frozen=True)
class Judged:
    """A window's verdict and what the pipeline gets back: None to drop it, else the text to
    carry (its own, or `current`'s) and the metadata to add."""
    validated: Validated
    text: str | None
    metadata: Mapping[str, Any]


def judge(repo: Path | str, items: Sequence[Mapping[str, Any]], input_format: str, *,
          keep_history: bool = False) -> list[Judged]:
    """A verdict for each item (langchain_item, llamaindex_item), in order: one validate_items
    call for all, each item read as `input_format`. An absolute path inside the repository is
    read as the relative one (the validator's rule). An item that cannot be read comes back
    `excluded`, `malformed-input`, its detail naming the field; the call goes on."""
    results = validate_items(Path(repo), items, input_format)
    for position, v in enumerate(results, 1):     # counted from 1, as the detail's "input item N"
        if v.reason == "malformed-input":
            LOG.warning("codevouch dropped item %d, which it cannot read: %s", position, one_line(v.detail))
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
