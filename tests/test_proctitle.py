"""A process named as a user would recognise it in `ps`: the command line and the kernel's short
name, with setproctitle, and the short name alone without it (real processes: the name is the
process's own)."""
from __future__ import annotations

import subprocess
import sys

import pytest

SHOW = ("from codevouch.proctitle import set_title; set_title({title!r}); "
        "print(open('/proc/self/cmdline', 'rb').read().split(b'\\0')[0].decode()); "
        "print(open('/proc/self/comm').read().strip())")


def _named(title: str, block_setproctitle: bool = False) -> list[str]:
    code = ("import sys; sys.modules['setproctitle'] = None; " if block_setproctitle else "") + SHOW.format(title=title)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.splitlines()


@pytest.mark.process
def test_the_title_is_what_ps_shows() -> None:
    cmdline, comm = _named("codevouch serve --index /tmp/x")
    assert cmdline == "codevouch serve --index /tmp/x"
    assert comm == "codevouch serve"               # the kernel keeps 15 bytes of it


@pytest.mark.process
def test_without_setproctitle_the_short_name_is_still_set() -> None:
    cmdline, comm = _named("codevouch serve: git watchdog", block_setproctitle=True)
    assert "python" in cmdline                     # the interpreter's own, as started
    assert comm == "codevouch serve"
