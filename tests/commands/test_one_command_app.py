"""A call in-process builds the app with the called command alone (commands/app.py): it imports no
other command module, and the command parses, helps and fails as it does in the whole app."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from codevouch.cli import build_app
from codevouch.commands.app import COMMANDS, called
from codevouch.worktree import rootcache
from tests.clihelp import FAKE, cv
from tests.gitrepo import Repo

LEAVES = [[name] if not group else [group, name] for group, name in COMMANDS] + [["serve"]]


def _run(app: typer.Typer, args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(app, args, prog_name="codevouch")
    return result.exit_code, result.output


@pytest.mark.parametrize("path", LEAVES, ids=[" ".join(p) for p in LEAVES])
def test_one_command_helps_and_fails_as_in_the_whole_app(path: list[str]) -> None:
    assert called(path, extra=("serve",)) == ((path[0], path[1]) if len(path) == 2 else ("", path[0]))
    alone, whole = build_app(path), build_app()
    for args in ([*path, "--help"], [*path, "--no-such-option"]):
        assert _run(alone, args) == _run(whole, args), args
    mine = typer.main.get_command(alone)
    assert len([c for c in mine.commands.values() if not hasattr(c, "commands")]) <= 1    # type: ignore[attr-defined]


@pytest.mark.parametrize("argv", [[], ["--help"], ["index"], ["index", "--help"], ["hooks"], ["nosuch"],
                                  ["index", "nosuch"], ["sea"], ["--", "search"]])
def test_anything_but_one_command_builds_the_whole_app(argv: list[str]) -> None:
    assert called(argv, extra=("serve",)) is None
    assert _run(build_app(argv), argv) == _run(build_app(), argv)


def test_the_whole_app_lists_every_command() -> None:
    code, text = _run(build_app(["--help"]), ["--help"])
    assert code == 0
    for name in ["index", "hooks", "serve", *(n for g, n in COMMANDS if not g)]:
        assert f" {name} " in text, name


@pytest.mark.process
def test_a_search_imports_no_other_command_module(repo: Repo, index_dir: Path) -> None:
    repo.commit(**{"shop/cancel.py": "def cancel_order(order):\n    order.cancel()\n    return order\n"})
    assert cv("index", "build", "--repo", str(repo.root), *FAKE, index=index_dir).returncode == 0
    env = {**os.environ, "CODEVOUCH_INDEX": str(index_dir), "CODEVOUCH_SERVER": "off"}
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "codevouch", "search", "cancel order"],
                          cwd=repo.root, env=env, capture_output=True, timeout=300)
    assert done.returncode == 0 and b"cancel_order" in done.stdout, done.stderr[-2000:]
    imported = {line.split("|")[-1].strip() for line in done.stderr.decode().splitlines() if line.startswith("import time:")}
    assert "codevouch.commands.search" in imported          # importtime sees what the app imports
    commands = {m for m in imported if m.startswith("codevouch.commands.")}
    # commands.many: the repository options search and context share (light: typer and printable).
    assert commands == {"codevouch.commands.app", "codevouch.commands.common", "codevouch.commands.exits",
                        "codevouch.commands.invocation", "codevouch.commands.many", "codevouch.commands.runner",
                        "codevouch.commands.search"}, sorted(commands)
    assert "codevouch.engine.command" not in imported
    assert (index_dir / rootcache.FILE).is_file()            # the root commit is kept for the next call
