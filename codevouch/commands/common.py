"""What every command shares: exit codes, common options, error mapping, JSON and progress output."""
from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from codevouch.errors import CodevouchError, IndexLocked, InputError, NotIndexed

if TYPE_CHECKING:
    from codevouch.api import Index
    from codevouch.validator.model import Validated

# Exit codes (documented in the README).
EXIT_OK = 0
EXIT_ERROR = 1          # git failed, bad config, anything else the message explains
EXIT_USAGE = 2          # bad arguments or malformed input
EXIT_HISTORICAL = 3     # validate: at least one snippet is historical-only
EXIT_MISSING = 3        # check-refs: at least one reference is missing
EXIT_LOCKED = 4         # another build holds the index
EXIT_NOT_INDEXED = 5    # search on a branch that was never indexed

RepoOpt = Annotated[Path, typer.Option("--repo", help="Repository path (default: the current directory).")]
IndexOpt = Annotated[Optional[Path], typer.Option(
    "--index", help="Index directory (default: $CODEVOUCH_INDEX, else ~/.local/share/codevouch).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]
BranchOpt = Annotated[Optional[str], typer.Option("--branch", "-b", help="Branch (default: current).")]
LimitOpt = Annotated[int, typer.Option("--limit", "-k", min=1, max=200, help="Number of hits.")]
KindOpt = Annotated[Optional[list[str]], typer.Option(
    "--kind", help="Only hits of this file kind: source, test, docs or config (repeatable).")]
FORMATS = ("text", "json", "context")


def fail(exc: CodevouchError) -> typer.Exit:
    """Print the error's one-line message and return the Exit carrying its code."""
    code = {IndexLocked: EXIT_LOCKED, NotIndexed: EXIT_NOT_INDEXED, InputError: EXIT_USAGE}.get(
        type(exc), EXIT_ERROR)
    typer.echo(f"codevouch: {exc}", err=True)
    return typer.Exit(code)


def usage(message: str) -> typer.Exit:
    typer.echo(f"codevouch: {message}", err=True)
    return typer.Exit(EXIT_USAGE)


def check_format(fmt: str, as_json: bool) -> str:
    fmt = "json" if as_json else fmt
    if fmt not in FORMATS:
        raise usage("--format must be text, json or context.")
    return fmt


def open_index(repo: Path, index: Path | None, embedder: str | None = None) -> Index:
    from codevouch.api import DEFAULT_EMBEDDER, Index

    return Index(repo, index, embedder=embedder or DEFAULT_EMBEDDER)


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def render_results(results: Sequence[Validated], fmt: str) -> None:
    from codevouch import validator

    if fmt == "json":
        print_json([validator.to_json(r) for r in results])
    elif fmt == "context":
        sys.stdout.write(validator.context_pack(results))
    else:
        sys.stdout.write(validator.render_text(results))


class progress:
    """A rich progress bar on a terminal; nothing otherwise."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._bar: Any = None
        self._tasks: dict[str, Any] = {}

    def __enter__(self) -> Any:
        if not self.enabled:
            return None
        from rich.progress import Progress

        self._bar = Progress(transient=True)
        self._bar.start()
        return self._update

    def _update(self, done: int, total: int, what: str) -> None:
        if what not in self._tasks:
            self._tasks[what] = self._bar.add_task(what, total=total)
        self._bar.update(self._tasks[what], completed=done, total=total)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()


def read_source(source: str, what: str) -> str:
    """The text of a FILE argument, or stdin for '-'; InputError when it cannot be read."""
    if source == "-":
        return sys.stdin.read()
    try:
        return Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {source}: {exc}; pass a readable {what} or '-' for stdin.") from exc
