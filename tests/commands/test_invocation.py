"""Outside a runner, what a command helper reads is this process as the caller."""
from __future__ import annotations

import sys
from pathlib import Path

from codevouch.commands import invocation


def test_outside_a_runner_a_helper_answers_for_this_process(capsys) -> None:  # type: ignore[no-untyped-def]
    made = invocation.invocation()
    assert made.streams.stdout is sys.stdout and made.call.cwd == Path.cwd()
    invocation.echo("to stdout")
    invocation.echo("to stderr", err=True)
    assert capsys.readouterr() == ("to stdout\n", "to stderr\n")
