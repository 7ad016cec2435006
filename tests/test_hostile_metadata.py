"""A repository's own metadata files as FIFOs, links to /dev/zero and 2 GB sparse files: the
.gitignore and .gitattributes git reads, a file `include.path` names, and codevouch's own
settings (.codevouch.toml, pyproject.toml). Each hung `search`, `validate`, `check-refs` or
`index build` (git, or codevouch itself, blocked on the FIFO or read without end). Each command
runs in-process on a thread of its own with a timeout (tests/clihelp.py), so a regression fails
instead of hanging the suite; each must end in a clear error (exit 1) that names the file, with no
traceback. The MCP server is a real process."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.clihelp import cv_bytes
from tests.gitrepo import Repo, plant_special

FAKE = ["--embedder", "fake-bow-64"]
SNIPPET = '{"path": "a.py", "start_line": 1, "end_line": 2, "text": "def cancel_order(o):"}\n'
COMMANDS = {
    "search": (["search", "cancel_order", "--json"], ""),
    "validate": (["validate", "-", "--json"], SNIPPET),
    "check-refs": (["check-refs", "-", "--json"], "See `cancel_order` in a.py.\n"),
    "index build": (["index", "build", *FAKE, "--json"], ""),
}
FILES = (".gitignore", ".gitattributes", "pkg/.gitignore", "include", ".codevouch.toml", "pyproject.toml")
KINDS = ("fifo", "zero", "sparse")
WORDS = {"fifo": "a FIFO", "zero": "", "sparse": "bytes, over the"}


def cv(repo: Repo, index: Path, argv: list[str], stdin: str) -> subprocess.CompletedProcess[bytes]:
    # A timeout well over the few seconds each takes: a hang fails the test instead of the suite.
    return cv_bytes(*argv, "--repo", str(repo.root), stdin=stdin, index=index, cwd=repo.root.parent, timeout=90)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, Path]:
    base = tmp_path_factory.mktemp("meta")
    repo = Repo(base / "repo")
    repo.commit_files({"a.py": "def cancel_order(o):\n    return o\n", "pkg/b.py": "B = 2\n"})
    index = base / "index"
    out = cv(repo, index, ["index", "build", *FAKE], "")
    assert out.returncode == 0, out.stderr
    repo.write("a.py", "def cancel_order(o):\n    return o + 1\n")     # an edit: the overlay has work
    return repo, index


def plant(repo: Repo, name: str, kind: str) -> tuple[Path, str]:
    """The hostile file, and the name the error must give."""
    if name == "include":
        target = repo.root.parent / f"included-{kind}"
        shown = str(target)
        repo.git("config", "include.path", str(target))
    else:
        target, shown = repo.root / name, name
    plant_special(target, kind)
    return target, shown


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("kind", KINDS)
def test_a_hostile_metadata_file_is_refused_by_name(built: tuple[Repo, Path], kind: str, name: str,
                                                    command: str) -> None:
    repo, index = built
    if (kind, command) == ("sparse", "check-refs") and name in (".codevouch.toml", "pyproject.toml"):
        pytest.skip("an untracked 2 GB file of any name is `git grep --untracked`'s to bound, not a settings read")
    target, shown = plant(repo, name, kind)
    try:
        argv, stdin = COMMANDS[command]
        out = cv(repo, index, list(argv), stdin)
    finally:
        target.unlink()
        if name == "include":
            repo.git("config", "--unset", "include.path")
    err = out.stderr.decode("utf-8", "replace")
    assert out.returncode == 1, (out.returncode, err, out.stdout[:300])
    assert "Traceback" not in err and "unexpected error" not in err, err
    assert f"codevouch: {shown} " in err and WORDS[kind] in err and "remove it" in err, err


def test_the_repository_answers_again_once_the_file_is_gone(built: tuple[Repo, Path]) -> None:
    repo, index = built
    argv, stdin = COMMANDS["search"]
    out = cv(repo, index, list(argv), stdin)
    assert out.returncode == 0, out.stderr
    assert "cancel_order" in json.dumps(json.loads(out.stdout))


@pytest.mark.parametrize("tool, args", [("search", '{"query": "cancel order"}'), ("status", "{}"),
                                        ("validate", '{"snippets": [{"path": "a.py", "text": "def cancel_order(o):"}]}'),
                                        ("check_refs", '{"text": "see `cancel_order` in a.py"}')])
@pytest.mark.process
def test_over_mcp_a_fifo_gitignore_gets_an_answer(built: tuple[Repo, Path], tool: str, args: str) -> None:
    # The server started on a clean tree; the FIFO comes later: every tool call must still be
    # answered (it left search, status and validate unanswered, git blocked on the FIFO).
    from tests.test_mcp_wire import Wire, call

    repo, index = built
    wire = Wire(repo, index)
    try:
        wire.initialize()
        target, _ = plant(repo, "pkg/.gitignore", "fifo")
        try:
            wire.send(call(2, tool, args))
            answer = wire.receive(timeout=60)
        finally:
            target.unlink()
        assert answer is not None and answer["id"] == 2, "no answer: the client would wait for ever"
        text = json.dumps(answer)
        assert "pkg/.gitignore" in text and "a FIFO" in text, text[:500]
    finally:
        wire.close()


def test_the_nightly_build_reports_the_hostile_repository_and_builds_the_others(tmp_path: Path) -> None:
    # `index build --repos` builds each repository without an Index: the check is made there too.
    good = Repo(tmp_path / "good")
    good.commit_files({"a.py": "def good():\n    return 1\n"})
    bad = Repo(tmp_path / "bad")
    bad.commit_files({"a.py": "def bad():\n    return 1\n"})
    plant(bad, ".gitattributes", "fifo")
    listing = tmp_path / "repos.toml"
    listing.write_text(f'[[repo]]\npath = "{bad.root}"\n\n[[repo]]\npath = "{good.root}"\n')
    out = cv_bytes("index", "build", "--repos", str(listing), "--json", *FAKE, cwd=tmp_path, index=tmp_path / "index",
                   timeout=120)
    text = out.stdout.decode() + out.stderr.decode()
    assert out.returncode == 23, (out.returncode, text[-2000:])
    assert ".gitattributes" in text and "a FIFO" in text and "Traceback" not in text
    report = json.loads(out.stdout)
    assert (report["ok"], report["failed"]) == (1, 1), report
    assert [r["status"] for r in report["repos"]] == ["failed", "ok"], report
