"""Navigation as the working tree has it now: `show` (a definition's current code), `references`
(where a name is used) and `outline` (what a file defines), for `Index.show`, `Index.references`
and `Index.outline` (methods.Navigation), the CLI's commands and the MCP tools (tools.NavigationTools).

The working tree decides: the index only proposes where a name is defined and says where a name
it held went (gone); every line shown is read from the file as it is at the moment of the call.
A path is refused when it lies outside the repository, is ignored by git, or is not a regular
file (a FIFO, a device; a symlink only where it stays inside), as the overlay treats them.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from codevouch.errors import InputError
from codevouch.printable import one_line
from codevouch.worktree import gitio
from codevouch.worktree.files import TooLarge, read_text
from codevouch.worktree.paths import locate


@dataclass(frozen=True)
class Source:
    """A working-tree file read for navigation: its repo-relative path (as named, and where its
    symlinks lead) and its text."""
    path: str
    real: str
    text: str


def refusal(root: Path, given: str) -> str | None:
    """Why `given` (repo-relative, or absolute inside `root`) is not read: outside the repository,
    ignored by git, missing or not a regular file; None when it may be read."""
    loc = locate(root, given)
    if not loc.inside:
        return f"{one_line(given)} is outside the repository ({loc.problem}); nothing there is read"
    if not loc.exists:
        return f"{one_line(given)} is {loc.what or 'not a file in the working tree'}"
    answer = gitio.ignored(root, sorted({p for p in (loc.rel, loc.real) if p}))
    why = answer.why(loc.rel or "") or answer.why(loc.real or "")
    return f"{one_line(given)} is ignored by git ({one_line(why)}): never read" if why else None


def read_source(root: Path, given: str, limit: int) -> Source:
    """The working-tree file `given`, checked first (refusal: InputError with the reason), at
    most `limit` bytes (InputError beyond)."""
    why = refusal(root, given)
    if why is not None:
        raise InputError(why + ".")
    loc = locate(root, given)
    assert loc.rel is not None and loc.real is not None
    text = read_text(root, loc.real, limit)
    if isinstance(text, TooLarge) or text is None:
        raise InputError(f"{one_line(given)} is over the size cap of {limit:,} bytes or unreadable: not read.")
    return Source(loc.rel, loc.real, text)
