"""The citation header that goes with every snippet (format in DESIGN.md):

    source: src/orders/services/order_service.py#L41-L58 (OrderService.cancel_order)
    version: main@9f3c1ab 2026-09-29, indexed 2026-09-30T02:00Z
    check: usable (file identical to the working tree)
    current: src/orders/service.py#L12-L30 (OrderService.cancel_order)     <- when elsewhere now
    use: reference for ideas only; do not implement against this code      <- historical-only

Every value that comes from the snippet is escaped onto one line: a path or symbol with a
newline in it must not be able to forge a `check:` line.
"""
from __future__ import annotations

from datetime import datetime, timezone

from codevouch.printable import one_line
from codevouch.validator.model import REASONS, Current, Decision, Snippet
from codevouch.vocabulary import Verdict

HISTORY_USE = "use: reference for ideas only; do not implement against this code"
MAX_FIELD = 200


def clean(value: str) -> str:
    """One line, printable, bounded: for text that came from the (untrusted) snippet."""
    out = one_line(value)
    return out if len(out) <= MAX_FIELD else out[:MAX_FIELD - 1] + "…"


def location(path: str, start: int | None, end: int | None, symbol: str | None, note: str | None = None) -> str:
    lines = ""
    if start is not None:
        lines = f"#L{start}" if end in (None, start) else f"#L{start}-L{end}"
    extra = "; ".join(clean(x) for x in (symbol, note) if x)
    return f"{clean(path)}{lines}" + (f" ({extra})" if extra else "")


def short_date(value: str | None) -> str | None:
    """2026-09-29T10:11:12+02:00 -> 2026-09-29 (anything unparsable is shown as given)."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).date().isoformat()
    except ValueError:
        return clean(value)


def short_time(value: str | None) -> str | None:
    """An ISO timestamp in UTC to the minute: 2026-09-30T02:00Z."""
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return clean(value)
    if moment.tzinfo is not None:
        return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
    return moment.strftime("%Y-%m-%dT%H:%M")


def version_line(s: Snippet, commit_date: str | None, commit_exists: bool, head: str | None = None) -> str:
    """The `version:` line. A working-tree overlay hit (s.origin, see retriever/overlay.py) says
    so: `working tree (uncommitted) on main@abc1234` (HEAD, when known), or `main@def5678
    2026-12-01 (committed after the index)`."""
    if s.origin == "uncommitted" and not s.commit:
        on = f"{clean(s.branch)}@{head[:7]}" if s.branch and head else (head[:7] if head else "")
        return f"version: working tree (uncommitted){' on ' + on if on else ''}"
    indexed = short_time(s.indexed_at)
    tail = f", indexed {indexed}" if indexed and s.origin != "committed" else ""
    if s.commit:
        where = f"{clean(s.branch)}@{s.commit[:7]}" if s.branch else s.commit[:7]
        date = short_date(s.commit_date or commit_date)
        gone = "" if commit_exists else " (commit no longer in this repository)"
        after = " (committed after the index)" if s.origin == "committed" else ""
        return f"version: {where}{' ' + date if date else ''}{tail}{after}{gone}"
    if s.blob_sha:
        branch = f"{clean(s.branch)}, " if s.branch else ""
        return f"version: {branch}blob {s.blob_sha[:7]} (no commit){tail}"
    return f"version: unknown (no commit or blob id){tail}"


def check_phrase(d: Decision, s: Snippet | None = None) -> str:
    phrase = REASONS[d.reason].check
    if d.reason == "file-renamed" and d.current is not None:
        phrase = f"file renamed to {clean(d.current.path)}"
    elif d.reason == "renamed-and-changed" and d.current is not None:
        phrase = f"file renamed to {clean(d.current.path)} and changed"
    elif d.reason == "no-version-metadata" and s is not None and s.text is None:
        phrase = "no version metadata, and the snippet carries no text to look for"   # as its reason line says
    return f"check: {d.verdict} ({phrase})"


def header(s: Snippet, d: Decision, path: str, commit_date: str | None, commit_exists: bool,
           version: str | None = None) -> str:
    """The citation header for a snippet; `path` is its normalized path (or as given, if outside).
    `version`: its version_line, when the caller has it already (snippets of one commit share it)."""
    lines = [f"source: {location(path, s.start_line, s.end_line, s.symbol, REASONS[d.reason].note)}",
             version or version_line(s, commit_date, commit_exists), check_phrase(d, s)]
    if d.current is not None and _moved(s, path, d.current):
        lines.append(f"current: {current_location(d.current)}")
    if d.verdict == Verdict.HISTORICAL_ONLY:
        lines.append(HISTORY_USE)
    return "\n".join(lines)


def current_location(c: Current) -> str:
    return location(c.path, c.start_line, c.end_line, c.symbol)


def reread_header(c: Current, old_path: str) -> str:
    """The citation of current code re-read in place of a historical snippet of `old_path`."""
    return (f"source: {current_location(c)}\nversion: working tree\n"
            f"check: current code, re-read from the working tree "
            f"(replaces a historical snippet of {clean(old_path)})")


def _moved(s: Snippet, path: str, c: Current) -> bool:
    return (c.path, c.start_line, c.end_line) != (path, s.start_line, s.end_line)
