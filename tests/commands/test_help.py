"""Every command's --help says what its source says: no help text lost to markup, flags shown as flags."""
from __future__ import annotations

from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from codevouch.cli import app
from tests.clihelp import cv, cv_process


def _commands() -> list[tuple[list[str], Any]]:
    """(path, command) for the app and every command under it (typer's own click objects)."""
    found: list[tuple[list[str], Any]] = []

    def walk(path: list[str], cmd: Any) -> None:
        found.append((path, cmd))
        if hasattr(cmd, "commands"):
            for name, sub in sorted(cmd.commands.items()):
                walk([*path, name], sub)

    walk([], typer.main.get_command(app))
    return found


def _squeezed(text: str) -> str:
    """Text with all whitespace removed: the help formatter rewraps lines (and breaks at hyphens)."""
    return "".join(text.split())


def _rendered(path: list[str]) -> str:
    result = CliRunner().invoke(app, [*path, "--help"], prog_name="codevouch")
    assert result.exit_code == 0, result.output
    return result.output


COMMANDS = _commands()


@pytest.mark.parametrize("path,cmd", COMMANDS, ids=[" ".join(p) or "codevouch" for p, _ in COMMANDS])
def test_help_shows_every_source_string(path: list[str], cmd: Any) -> None:
    """Issue 21.3: Rich markup read `[health]`, `[usage]`, `codevouch[mcp]` as tags and dropped them."""
    rendered = _rendered(path)
    shown = _squeezed(rendered)
    sources = [cmd.help or ""] + [p.help or "" for p in cmd.params if not getattr(p, "hidden", False)
                                  and getattr(p, "help", None)]
    for text in sources:
        assert _squeezed(text.split("\f")[0]) in shown, (path, text)
    flags = [p for p in cmd.params if getattr(p, "is_flag", False) and not p.hidden]
    for p in flags:
        # The option's own row: its first column is the flag (the command's text may mention it too).
        [line] = [ln for ln in rendered.splitlines()
                  if ln.strip().split("  ")[0].split(" <")[0] == ", ".join(p.opts)]
        assert "<" not in line.split(p.opts[-1], 1)[1].split("  ")[0], line      # `--json`, not `--json <bool>`
    assert "<bool>" not in rendered


@pytest.mark.process
def test_help_in_a_real_process_keeps_brackets() -> None:
    # A real process: click prints --help to sys.stdout, not to the call's stdout.
    mcp = cv_process("mcp", "--help").stdout
    assert "'.[mcp]'" in mcp and "<bool>" not in mcp
    health = cv_process("index", "health", "--help").stdout
    assert "[health]" in health and "--json " in health
    assert "[budget]" in cv_process("context", "--help").stdout


@pytest.mark.parametrize("command", [["search", "x"], ["validate", "-"]])
def test_json_and_another_format_are_refused(command: list[str]) -> None:
    proc = cv(*command, "--json", "--format", "text", stdin="[]")
    assert proc.returncode == 2
    assert "--json and --format text disagree" in proc.stderr and proc.stdout == ""



@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=lambda p: " ".join(p) or "codevouch")
def test_no_placeholder_leaks_a_python_type(path: list[str]) -> None:
    """`index build --help` showed `--repo <list[Path]>` and `--wait <float>`: a placeholder
    says what to write (PATH, GLOB, SECONDS), never the Python type of the parameter."""
    import re

    text = _rendered(path)
    leaks = re.findall(r"(--[a-z-]+) <[^>]*>", text)
    assert leaks == [], f"{' '.join(path)}: {leaks}"
