"""Running one command: a function of (arguments, `Call`, streams) that answers with an exit code.

The one way a command runs, wherever it is asked: the `codevouch` process (cli.main, with its own
environment, working directory and standard streams), the resident engine (engine/execute.py,
with the caller's, sent in the request, and streams that carry the writes back), and the tests'
in-process runner. The command reads its Call and streams from its click context
(`invocation()`): nothing it runs reads or rewrites the process's environment, working
directory or `sys.std*` to learn who called.

Click's own standalone handling (usage errors, `Exit`, Abort) is done here rather than by
click's `main`, because click writes those to `sys.stderr`; here they go to the call's stderr.
"""
from __future__ import annotations

import errno
from collections.abc import Sequence
from typing import Any

import typer

from codevouch.call import Call, Cancelled
from codevouch.commands.common import error_handler
from codevouch.commands.exits import EXIT_INTERRUPTED
from codevouch.commands.invocation import Invocation, Streams

try:    # typer 0.2x carries its own copy of click, with the same modules
    from typer._click import exceptions as click_exceptions
except ImportError:     # older typer runs on click itself
    from click import exceptions as click_exceptions  # type: ignore[no-redef]

__all__ = ["Invocation", "Streams", "run"]


def run(command: Any, argv: Sequence[str], call: Call, streams: Streams) -> int:
    """Run `command` (the CLI's click command tree: typer.main.get_command) for `argv` as `call`, writing to `streams`;
    the exit code. The outermost frame is the CLI's (commands/common.error_handler): known
    errors as one line, a bug as one line and a crash log."""
    invoked = Invocation(tuple(argv), call, streams)
    with call.entered():
        try:
            with error_handler(invoked):
                return _main(command, invoked)
        except SystemExit as exc:
            return _code(exc, streams)
        except Cancelled:
            return EXIT_INTERRUPTED     # nobody reads it: the caller left (the engine logs it)


def _main(command: Any, invoked: Invocation) -> int:
    """click's standalone `main`, its messages on the call's stderr."""
    err = invoked.streams.stderr
    try:
        try:
            with command.make_context("codevouch", list(invoked.argv), obj=invoked) as ctx:
                command.invoke(ctx)
            return 0
        except EOFError as exc:
            typer.echo(file=err)
            raise typer.Abort() from exc
        except KeyboardInterrupt:
            raise SystemExit(130) from None      # typer's own answer; error_handler says "interrupted"
        except click_exceptions.ClickException as exc:
            exc.show(file=err)
            return exc.exit_code
        except OSError as exc:
            if exc.errno == errno.EPIPE:
                raise BrokenPipeError(*exc.args) from None     # error_handler: the reader left
            raise
    except typer.Exit as exc:
        return int(exc.exit_code)
    except typer.Abort:
        typer.echo("Aborted!", file=err)
        return 1


def _code(exc: SystemExit, streams: Streams) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    streams.stderr.write(f"{exc.code}\n")      # as the interpreter does for SystemExit("text")
    return 1
