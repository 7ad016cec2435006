"""What every command shares: common options, errors mapped to exit codes (exits.py), JSON and progress output."""
from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, Optional

import typer

from codevouch import environment
from codevouch.commands.exits import (
    EXIT_CRASH,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_LOCKED,
    EXIT_NOT_INDEXED,
    EXIT_STORE,
    EXIT_USAGE,
)
from codevouch.commands.invocation import Invocation, echo, invocation, stdout
from codevouch.errors import CodevouchError, IndexBusy, IndexLocked, InputError, NotIndexed, StoreUnavailable
from codevouch.printable import json_text

if TYPE_CHECKING:
    from codevouch.api import Index
    from codevouch.environment import Environment
    from codevouch.validator.model import Validated


RepoOpt = Annotated[Path, typer.Option("--repo", metavar="PATH", help="Repository path (default: the current directory).")]
IndexOpt = Annotated[Optional[Path], typer.Option(
    "--index", metavar="DIR", help="Index directory (default: $CODEVOUCH_INDEX, else ~/.local/share/codevouch).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]
BranchOpt = Annotated[Optional[str], typer.Option("--branch", "-b", metavar="BRANCH", help="Branch (default: current).")]
LimitOpt = Annotated[int, typer.Option("--limit", "-k", metavar="N", min=1, max=200, help="Number of hits.")]
PathOpt = Annotated[Optional[list[str]], typer.Option(
    "--path", metavar="GLOB", help="Only files these gitignore-style globs match ('src/', '*.py', '!src/vendor/'); repeatable.")]
NoRecordOpt = Annotated[bool, typer.Option(
    "--no-record", help="Write no usage record for this call (also: CODEVOUCH_NO_RECORD=1, "
                        "[usage] record = false).")]
NoOverlayOpt = Annotated[bool, typer.Option(
    "--no-overlay", help="Search the index only: not the files that changed in the working tree since "
                         "the last build (searched live by default).")]
OverlayLimitOpt = Annotated[Optional[int], typer.Option(
    "--overlay-limit", metavar="N", min=0, help="Most new working-tree chunks to embed for this search (default: "
                                   "$CODEVOUCH_OVERLAY_LIMIT, else 64); the rest are searched by words.")]
BudgetOpt = Annotated[Optional[int], typer.Option(
    "--budget", metavar="TOKENS", help="Token budget for the pack (default: $CODEVOUCH_BUDGET, the repository's "
                            "[budget], else 16000).")]
ModelOpt = Annotated[Optional[str], typer.Option(
    "--model", metavar="NAME", help="Fit the pack to this model's window (window - output - reserve); see docs/BUDGETS.md.")]
KindOpt = Annotated[Optional[list[str]], typer.Option(
    "--kind", metavar="KIND", help="Only hits of this file kind: source, test, docs or config (repeatable). "
                   "Default: every kind, docs and test hits ranked lower.")]
FORMATS = ("text", "json", "context")


_EXIT_CODES: tuple[tuple[type[CodevouchError], int], ...] = (
    (IndexLocked, EXIT_LOCKED), (IndexBusy, EXIT_LOCKED), (NotIndexed, EXIT_NOT_INDEXED),
    (InputError, EXIT_USAGE), (StoreUnavailable, EXIT_STORE))


def exit_code(exc: CodevouchError) -> int:
    return next((code for cls, code in _EXIT_CODES if isinstance(exc, cls)), EXIT_ERROR)


def fail(exc: CodevouchError) -> typer.Exit:
    """Print the error's one-line message and return the Exit carrying its code."""
    echo(f"codevouch: {message_line(str(exc))}", err=True)
    return typer.Exit(exit_code(exc))


def message_line(text: str) -> str:
    """An error or status message on one line: every character `str.isprintable` rejects shown as
    its Python escape (`\\n`, `\\t`, `\\x1b`, `\\xa0`, `\\u200b`). Messages quote user
    input (paths, queries), so control characters must not reach the terminal. Stricter than
    `printable.one_line`, which repository text goes through: this also escapes non-ASCII spaces
    and format characters, and writes a newline `\\n` where that writes `\\x0a`."""
    return "".join(ch if ch.isprintable() or ch == " " else ascii(ch)[1:-1] for ch in text)


def crash_log_path(env: Environment | None = None) -> Path:
    """$XDG_CACHE_HOME/codevouch/crash.log of the caller's environment (this process's for None)."""
    env = env if env is not None else invocation().call.env
    base = env.expanduser(env.get("XDG_CACHE_HOME") or "")
    if not os.path.isabs(base):         # relative: ignored, as the XDG spec says
        base = os.path.join(env.expanduser("~"), ".cache")
    return Path(base) / "codevouch" / "crash.log"


def _interrupted(invoked: Invocation) -> NoReturn:
    err = invoked.streams.stderr
    typer.echo("codevouch: interrupted", file=err)
    # Every `finally` below this frame has run (locks released, nothing half-committed). Exit
    # now, whether the KeyboardInterrupt reached us or typer turned it into SystemExit(130):
    # letting the interpreter finalize after a Ctrl-C sometimes ended in death by SIGINT (-2).
    invoked.streams.stdout.flush()
    err.flush()
    os._exit(EXIT_INTERRUPTED)


@contextmanager
def error_handler(invoked: Invocation | None = None) -> Iterator[None]:
    """The CLI's outermost frame: known errors print one line with their exit code, Ctrl-C exits
    130, a bug writes its traceback to a log file and prints one line naming it (as pre-commit).
    Its lines go to the call's stderr (`invoked`: runner.run's; None: this process's)."""
    invoked = invoked if invoked is not None else invocation()

    def say(line: str) -> None:
        typer.echo(line, file=invoked.streams.stderr)

    try:
        yield
    except CodevouchError as exc:  # raised outside a command's own mapping (while rendering, say)
        say(f"codevouch: {message_line(str(exc))}")
        raise SystemExit(exit_code(exc)) from None
    except KeyboardInterrupt:
        _interrupted(invoked)
    except SystemExit as exc:
        if exc.code == EXIT_INTERRUPTED:  # typer turned Ctrl-C into exit 130 without a word
            _interrupted(invoked)
        raise
    except PermissionError as exc:
        # A --repo, --index or FILE under a directory this user cannot read or traverse: the
        # operating system's refusal, not a bug. codevouch runs with the caller's permissions.
        where = f" {message_line(str(exc.filename))}" if exc.filename else ""
        say(f"codevouch: permission denied:{where} ({exc.strerror or 'not permitted'}); codevouch reads only "
            "what you may read: pass a path you can read, or change its permissions.")
        raise SystemExit(EXIT_ERROR) from None
    except BrokenPipeError:
        # `codevouch search ... | head`: the reader left; say nothing more (stdout is gone).
        os.dup2(os.open(os.devnull, os.O_WRONLY), invoked.streams.stdout.fileno())
        raise SystemExit(EXIT_ERROR) from None
    except Exception as exc:
        from codevouch.errors import is_disk_full

        if is_disk_full(exc):   # a write that no command's own mapping caught (usage records, say)
            say(f"codevouch: disk full ({type(exc).__name__}: {message_line(str(exc))[:200]}): nothing "
                "changed; free space and run the command again.")
            raise SystemExit(EXIT_ERROR) from None
        where = _write_crash_log(exc, invoked)
        say(f"codevouch: unexpected error: {type(exc).__name__}: {message_line(str(exc))[:300]}; "
            f"this is a bug. The traceback is in {where}; please include it in a report.")
        raise SystemExit(EXIT_CRASH) from None


def _write_crash_log(exc: BaseException, invoked: Invocation) -> str:
    import platform
    import traceback
    from datetime import datetime, timezone

    argv = ["codevouch", *invoked.argv]
    text = (f"### codevouch crash {datetime.now(timezone.utc).isoformat(timespec='seconds')}\n"
            f"argv: {argv!r}\npython: {sys.version.split()[0]} on {platform.platform()}\n\n"
            + "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)) + "\n")
    for path in (crash_log_path(invoked.call.env), Path(tempfile.gettempdir()) / f"codevouch-crash-{os.getpid()}.log"):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="utf-8", errors="backslashreplace") as log:
                log.write(text)
            return str(path)
        except OSError:
            continue
    invoked.streams.stderr.write(text)  # nowhere to write it: the traceback itself is the last resort
    return "the output above"


def usage(message: str) -> typer.Exit:
    echo(f"codevouch: {message}", err=True)
    return typer.Exit(EXIT_USAGE)


def check_format(fmt: str | None, as_json: bool, formats: tuple[str, ...] = FORMATS) -> str:
    """The output format of --format and --json; both given and disagreeing is a usage error."""
    if fmt is not None and fmt not in formats:
        raise usage(f"--format must be {', '.join(formats[:-1])} or {formats[-1]}.")
    if as_json and fmt not in (None, "json"):
        raise usage(f"--json and --format {fmt} disagree; pass one of them.")
    return "json" if as_json else fmt or "text"


def open_index(repo: Path, index: Path | None, embedder: str | None = None, no_record: bool = False,
               overlay_limit: int | None = None) -> Index:
    """The api's Index for this call: its paths as the caller meant them, its Call passed on."""
    from codevouch.api import Index

    call = invocation().call          # Index reads --index from the call's directory (api.index_dir_of)
    # No background thread: a CLI process exits after the call, and the engine has its own (retriever/resident.py).
    return Index(call.path(repo), index, embedder=embedder, record=False if no_record else None,
                 overlay_limit=overlay_limit, call=call, background=False)


def overlay_note(overlay: Any, as_json: bool) -> None:
    """Say when the index is behind the working tree: one line before text output; with JSON
    (whose stdout stays the list of snippets, for `validate`), the overlay's summary as one JSON
    object on stderr."""
    if overlay is None:
        return
    if as_json:
        invocation().streams.stderr.write(json_text(json.dumps({"overlay": overlay.summary()}, ensure_ascii=False)) + "\n")
        return
    note = overlay.note()
    if note:
        echo(f"note: {note}")


def print_json(data: Any) -> None:
    # Exact text, as JSON: control characters it would leave raw are written as \u escapes.
    stdout().write(json_text(json.dumps(data, indent=2, ensure_ascii=False)) + "\n")


def render_results(results: Sequence[Validated], fmt: str, idx: Index, include_history: bool,
                   live_note: str = "", max_chars: int | None = None, extras: Sequence[str | None] = ()) -> None:
    """Text, JSON, or (format context) a context pack within the default token budget (whose
    report carries `live_note`, how far the index is behind the working tree). Text: each
    snippet's code within `max_chars`, and `extras` after it (validator.render_text)."""
    from codevouch import validator

    out = stdout()
    if fmt == "json":
        print_json([validator.to_json(r) for r in results])
    elif fmt == "brief":
        out.write(validator.render_brief(results))
    elif fmt == "context":
        out.write(idx.pack(results, include_history=include_history, live_note=live_note).markdown)
        out.flush()
    else:
        out.write(validator.render_text(results, max_chars, extras))


class progress:
    """A rich progress bar on a terminal; nothing otherwise."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._bar: Any = None
        self._tasks: dict[str, Any] = {}

    def __enter__(self) -> Any:
        if not self.enabled:
            return None
        from rich.console import Console
        from rich.progress import Progress

        # On the call's stderr (the terminal `enabled` was decided on), with the caller's width:
        # in the engine, the process's own streams and variables are not the caller's.
        columns = invocation().call.env.get("COLUMNS", "")
        console = Console(file=invocation().streams.stderr, width=int(columns) if columns.isdigit() else None)
        self._bar = Progress(transient=True, console=console)
        self._bar.start()
        return self._update

    def _update(self, done: int, total: int, what: str) -> None:
        if what not in self._tasks:
            self._tasks[what] = self._bar.add_task(what, total=total)
        self._bar.update(self._tasks[what], completed=done, total=total)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()


MAX_INPUT_BYTES: int = environment.MAX_INPUT_BYTES.default   # validate's snippets and check-refs' text


def read_source(source: str, what: str) -> str:
    """The text of a FILE argument, or stdin for '-'; InputError when it cannot be read or is
    over the input cap (CODEVOUCH_MAX_INPUT_BYTES): at most the cap plus one byte is read."""
    invoked = invocation()
    cap = invoked.call.env.max_input_bytes
    name = "standard input" if source == "-" else source
    if source == "-":
        data = invoked.streams.stdin.buffer.read(cap + 1)
    else:
        try:
            with open(invoked.call.path(source), "rb") as handle:
                data = handle.read(cap + 1)
        except OSError as exc:
            raise InputError(f"cannot read {source}: {exc}; pass a readable {what} or '-' for stdin.") from exc
    if len(data) > cap:
        raise InputError(f"{name} is over the input cap of {cap} bytes (CODEVOUCH_MAX_INPUT_BYTES); split "
                         f"the {what} into smaller calls, or raise the cap.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if source == "-":
            raise InputError(f"standard input is not UTF-8 text ({exc}); pipe UTF-8 {what}.") from exc
        raise InputError(f"cannot read {source}: {exc}; pass a readable {what} or '-' for stdin.") from exc


def crash_logged(exc: BaseException) -> str:
    """Write a bug's traceback to the crash log (as the outermost frame does); where it went."""
    return _write_crash_log(exc, invocation())
