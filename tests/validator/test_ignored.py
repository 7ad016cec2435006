"""Files git ignores are never read or shown: validate (library, CLI, MCP over stdio), the
context pack and check-refs answer `excluded`/`ignored` (check-refs: `path-ignored`) with none
of the file's text. Real repositories, real .gitignore, info/exclude and core.excludesFile."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from codevouch import Index
from codevouch.refs import check_refs
from codevouch.validator import validate
from tests.clihelp import cv
from tests.gitrepo import Repo
from tests.test_mcp_wire import Wire, call

SECRET = "SECRET-7f3a"
KEYS = f'def get_api_key():\n    return "{SECRET}"\n'


def cli(repo: Repo, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return cv(*args, "--repo", str(repo.root), stdin=stdin)


def secret_repo(repo: Repo, ignore: str = "secrets/\n") -> Repo:
    repo.commit_files({".gitignore": ignore, "app.py": "def main():\n    return 1\n"})
    repo.write("secrets/keys.py", KEYS)
    return repo


ASKS = [{"path": "secrets/keys.py", "symbol": "get_api_key"},
        {"path": "secrets/keys.py", "text": "def get_api_key():"},
        {"path": "secrets/keys.py", "start_line": 1, "end_line": 2}]


def test_library_validate_never_reads_an_ignored_file(repo: Repo) -> None:
    secret_repo(repo)
    results = validate(repo.root, [*ASKS, {"path": "app.py", "commit": repo.head(), "text": "def main():"}])
    for r in results[:3]:
        assert (r.verdict, r.reason, r.current) == ("excluded", "ignored", None)
        assert SECRET not in r.detail + r.citation and ".gitignore:1: secrets/" in r.detail
    assert results[3].verdict == "usable"      # the rest of the call is checked as ever


def test_cli_validate_json_and_context_show_nothing_of_it(repo: Repo) -> None:
    secret_repo(repo)
    out = cli(repo, "validate", "-", "--json", stdin=json.dumps(ASKS))
    assert out.returncode == 0, out.stderr
    assert SECRET not in out.stdout and "get_api_key():\\n" not in out.stdout
    assert {(r["verdict"], r["reason"], r["current"]) for r in json.loads(out.stdout)} == {("excluded", "ignored", None)}
    packed = cli(repo, "validate", "-", "--format", "context", stdin=json.dumps(ASKS))
    assert packed.returncode == 0, packed.stderr
    assert SECRET not in packed.stdout and "excluded: ignored" in packed.stdout


@pytest.mark.parametrize("where", ["info/exclude", "core.excludesFile"])
def test_every_source_of_ignore_rules_counts(repo: Repo, tmp_path: Path, where: str) -> None:
    secret_repo(repo, ignore="*.log\n")
    if where == "info/exclude":
        (repo.root / ".git" / "info").mkdir(exist_ok=True)
        (repo.root / ".git" / "info" / "exclude").write_text("secrets/\n")
    else:
        (tmp_path / "global-ignore").write_text("keys.py\n")
        repo.git("config", "core.excludesFile", str(tmp_path / "global-ignore"))
    (r,) = validate(repo.root, ASKS[:1])
    assert (r.reason, r.current) == ("ignored", None)


def test_a_tracked_file_matching_a_pattern_is_not_ignored(repo: Repo) -> None:
    repo.write("secrets/keys.py", KEYS)
    repo.commit("keys")
    repo.commit(".gitignore", **{".gitignore": "secrets/\n"})   # ignored after the fact: tracked still
    (r,) = validate(repo.root, [{"path": "secrets/keys.py", "commit": repo.head(), "text": "def get_api_key():"}])
    assert (r.verdict, r.reason) == ("usable", "same-commit")
    repo.git("rm", "-q", "--cached", "secrets/keys.py")        # untracked now: the pattern applies
    (r,) = validate(repo.root, [{"path": "secrets/keys.py", "commit": repo.head(), "text": "def get_api_key():"}])
    assert (r.verdict, r.reason, r.current) == ("excluded", "ignored", None)


def test_a_symlink_to_an_ignored_file_is_ignored_too(repo: Repo) -> None:
    secret_repo(repo)
    os.symlink("secrets/keys.py", repo.root / "keys_link.py")
    os.symlink("secrets", repo.root / "lnk")
    results = validate(repo.root, [{"path": "keys_link.py", "symbol": "get_api_key"},
                                   {"path": "lnk/keys.py", "symbol": "get_api_key"}])
    assert [(r.reason, r.current) for r in results] == [("ignored", None), ("ignored", None)]


def test_a_negated_pattern_keeps_the_file(repo: Repo) -> None:
    secret_repo(repo, ignore="secrets/*\n!secrets/keys.py\n")
    (r,) = validate(repo.root, ASKS[:1])
    assert r.reason != "ignored" and r.current is not None     # not ignored: read as any untracked file


def test_check_refs_refuses_an_ignored_path(repo: Repo) -> None:
    secret_repo(repo)
    report = check_refs(repo.root, "See secrets/keys.py#L1-L2, `get_api_key` in secrets/keys.py and app.py#L1.")
    by = {(r.ref.kind, r.ref.path): r for r in report.results}
    assert (by[("path", "secrets/keys.py")].status, by[("path", "secrets/keys.py")].reason) == ("refused", "path-ignored")
    symbol = by[("symbol", "secrets/keys.py")]
    assert symbol.found is None and "secrets/keys.py" not in (symbol.detail + (symbol.suggestion or ""))
    assert by[("path", "app.py")].reason == "lines-in-file"
    out = cli(repo, "check-refs", "-", "--json", stdin="secrets/keys.py#L1-L2")
    assert json.loads(out.stdout)["references"][0]["reason"] == "path-ignored"


@pytest.mark.process
def test_mcp_validate_tool_over_stdio(tmp_path: Path) -> None:
    repo = secret_repo(Repo(tmp_path / "repo"))
    Index(repo.root, tmp_path / "index", embedder="fake-bow-64").build()
    wire = Wire(repo, tmp_path / "index")
    try:
        wire.initialize()
        wire.send(call(2, "validate", json.dumps({"snippets": ASKS})))
        answer: dict[str, Any] | None = wire.receive()
        assert answer is not None and answer["id"] == 2, answer
        raw = json.dumps(answer)
        assert SECRET not in raw
        results = json.loads(answer["result"]["content"][0]["text"])["results"]
        assert [(r["verdict"], r["reason"], r["current"]) for r in results] == [("excluded", "ignored", None)] * 3
    finally:
        wire.close()


def test_search_and_context_hide_a_file_that_became_ignored(tmp_path: Path) -> None:
    # Indexed while tracked; then untracked and ignored (`git rm --cached` and a .gitignore): its
    # working-tree text (a new key) is never shown by a validated search or a context pack (the
    # overlay drops the untracked file's hits; any that came back would be excluded, ignored).
    repo = Repo(tmp_path / "repo")
    repo.commit_files({"app.py": "def main():\n    return 1\n", "secrets/keys.py": KEYS})
    index = Index(repo.root, tmp_path / "index", embedder="fake-bow-64")
    index.build()
    repo.git("rm", "-q", "--cached", "secrets/keys.py")
    repo.write(".gitignore", "secrets/\n")             # not committed, the index not rebuilt
    repo.write("secrets/keys.py", KEYS.replace(SECRET, "NEWKEY-91c2"))
    hits = index.search("get_api_key", k=5)
    mine = [h for h in hits if h.path == "secrets/keys.py"]
    assert all((h.verdict, h.reason, h.current) == ("excluded", "ignored", None) for h in mine)
    assert not any("NEWKEY-91c2" in json.dumps(h.to_json()) for h in hits)
    pack = index.context("get_api_key api key", k=5)
    assert "NEWKEY-91c2" not in pack.markdown
    out = cv("search", "get_api_key", "--json", "--repo", str(repo.root), "--index", str(tmp_path / "index"))
    assert "NEWKEY-91c2" not in out.stdout


def test_a_fifo_gitignore_blocks_nothing_and_keeps_tracked_code(repo: Repo) -> None:
    head = repo.commit("app", **{"app.py": "def main():\n    return 1\n"})
    os.mkfifo(repo.root / ".gitignore")              # git check-ignore would block on it for ever
    repo.write("local.py", "TOKEN = 1\n")
    results = validate(repo.root, [{"path": "app.py", "commit": head, "text": "def main():"},
                                   {"path": "local.py", "text": "TOKEN = 1"}])
    assert [(r.verdict, r.reason) for r in results] == [("usable", "same-commit"), ("excluded", "ignored")]
    assert results[1].current is None and "not a regular file" in results[1].detail


def test_a_search_of_tracked_hits_asks_git_nothing_about_ignores(tmp_path: Path) -> None:
    # The kept HEAD tree and the search's status prove the hits tracked: no check-ignore.
    from codevouch.worktree.git import _process

    repo = Repo(tmp_path / "repo")
    repo.commit_files({".gitignore": "*.log\n", "app.py": "def main():\n    return 1\n"})
    index = Index(repo.root, tmp_path / "index", embedder="fake-bow-64")
    index.build()
    index.search("main", k=3)
    before = _process.PROCESSES["check-ignore"]
    hits = index.search("main", k=3)
    assert hits and {h.verdict for h in hits} == {"usable"}
    assert _process.PROCESSES["check-ignore"] == before
    repo.write("app.py", "def main():\n    return 2\n")      # changed: asked again (and not ignored)
    hits = index.search("main", k=3)
    assert _process.PROCESSES["check-ignore"] == before + 1 and "app.py" in {h.path for h in hits}
