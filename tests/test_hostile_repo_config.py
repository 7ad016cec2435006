"""A repository's own configuration names programs; codevouch runs none of them (issue 19, part 1).

One repository configures every mechanism by which git runs a program as a side effect of a
read-only command: core.fsmonitor, filter clean / smudge / process drivers, diff textconv and
external diff drivers, a pager, and hooks (post-index-change among them). Each program touches
its own marker file. Every CLI command and every MCP tool runs against it (on a terminal, so a
pager would start); no marker may appear. A control runs plain git the way codevouch used to, and
proves that each mechanism is live, so the test can fail.
"""
from __future__ import annotations

import hashlib
import json
import os
import pty
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.enginehelp import engines_on
from tests.gitrepo import GIT_ENV, Repo

MECHANISMS = ("fsmonitor", "clean", "smudge", "process", "textconv", "extdiff", "pager", "hook")
HOOKS = ("post-index-change", "reference-transaction", "post-checkout", "pre-auto-gc", "post-commit",
         "pre-commit", "post-rewrite", "fsmonitor-watchman")
ORDERS = "def cancel_order(order):\n    order.cancel()\n    return order\n"


def hostile_repo(base: Path) -> tuple[Repo, Path]:
    marks = base / "marks"
    marks.mkdir()
    repo = Repo(base / "repo")
    repo.commit_files({
        ".gitattributes": "*.py filter=evil diff=evil\n*.md filter=proc diff=evil\n",
        "src/orders.py": ORDERS,
        "src/refund.py": "def refund_order(order):\n    return order.refund()\n",
        "README.md": "# shop\n\nSee `cancel_order` in src/orders.py.\n",
    })
    repo.commit_files({"src/refund.py": "def refund_order(order):\n    return order.refund(True)\n",
                       "src/gone.py": "def gone():\n    return 0\n"})
    repo.git("rm", "-q", "src/gone.py")
    repo.git("commit", "-q", "-m", "gone")

    # Uncommitted work: a changed file, a staged one, an untracked one.
    repo.write("src/orders.py", ORDERS + "\n\ndef cancel_all(orders):\n    return [cancel_order(o) for o in orders]\n")
    repo.write("src/new.py", "def brand_new():\n    return 2\n")
    repo.write("src/refund.py", "def refund_order(order, amount):\n    return order.refund(amount)\n")
    repo.git("add", "src/refund.py")
    # README.md's index entry matches it and is not racy: no status needs to re-read it.
    os.utime(repo.root / "README.md", (1_000_000_000, 1_000_000_000))
    repo.git("status", "--porcelain")      # refreshes the index

    def touch(name: str, then: str) -> str:
        return f"touch {marks}/{name}; {then}"
    for key, value in {
        "core.fsmonitor": touch("fsmonitor", "false"),
        "filter.evil.clean": touch("clean", "cat"),
        "filter.evil.smudge": touch("smudge", "cat"),
        "filter.proc.process": touch("process", "false"),
        "diff.evil.textconv": touch("textconv", "cat"),
        "diff.evil.command": touch("extdiff", "true"),
        "diff.external": touch("extdiff", "true"),
        "core.pager": touch("pager", "cat"),
        "pager.log": touch("pager", "cat"),
        "pager.diff": touch("pager", "cat"),
        "pager.status": "true",
    }.items():
        repo.git("config", key, value)
    hooks = repo.root / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    for name in HOOKS:
        (hooks / name).write_text(f"#!/bin/sh\ntouch {marks}/hook-{name}\n")
        (hooks / name).chmod(0o755)
    return repo, marks


def restat(repo: Repo) -> None:
    """Make git re-read every tracked file (its stat data no longer matches the index), so a
    status or diff would run the clean filter on each."""
    # Not README.md: its process filter, if run, would fail the whole command.
    for path in ("src/orders.py", "src/refund.py", ".gitattributes"):
        restat_file(repo.root / path)


def restat_file(path: Path) -> None:
    os.utime(path, (1_000_000_000, 1_000_000_000))


def fired(marks: Path) -> set[str]:
    found = {p.name for p in marks.iterdir()}
    for p in marks.iterdir():
        p.unlink()
    return {"hook" if name.startswith("hook-") else name for name in found}


def on_terminal(argv: list[str], cwd: Path, env: dict[str, str], stdin: str | None = None,
                timeout: float = 300) -> tuple[int, str]:
    """Run `argv` with stdout and stderr on a pseudo-terminal (a pager would start) and
    stdin from a pipe; its exit code and what it printed."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=slave, stderr=slave)
    os.close(slave)
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                return
            if not data:
                return
            chunks.append(data)
    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    assert proc.stdin is not None
    proc.stdin.write((stdin or "").encode())
    proc.stdin.close()
    code = proc.wait(timeout=timeout)
    reader.join(timeout=10)
    os.close(master)
    return code, b"".join(chunks).decode("utf-8", "replace")


def git_dir_state(repo: Repo) -> dict[str, tuple[int, str]]:
    """Every file under .git: (mtime, content hash)."""
    state = {}
    for p in sorted((repo.root / ".git").rglob("*")):
        if p.is_file():
            state[str(p.relative_to(repo.root))] = (p.stat().st_mtime_ns, hashlib.sha1(p.read_bytes()).hexdigest())
    return state


def snippets(repo: Repo) -> str:
    head = repo.git("rev-parse", "HEAD").strip()
    return "\n".join(json.dumps(s) for s in [
        {"path": "src/orders.py", "commit": head, "start_line": 1, "end_line": 3, "text": ORDERS},
        {"path": "src/refund.py", "commit": head, "start_line": 1, "end_line": 2},
        {"path": "README.md", "commit": head, "start_line": 1, "end_line": 1},
    ]) + "\n"


ANSWER = ("`cancel_order` in src/orders.py:1-3 calls `order.cancel`; src/gone.py:1 had `gone()`, "
          "and `vanished_name()` in src/refund.py. See README.md too.\n")


@pytest.fixture(scope="module", params=["in-process", "engine"])
def runs(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """Every CLI command and MCP tool, run once against the hostile repository: command ->
    the markers that appeared. Then the controls: plain git, which fires each mechanism. Twice:
    in-process, and with the read commands answered by the resident engine (tests/enginehelp.py)."""
    base = tmp_path_factory.mktemp("hostile-config")
    repo, marks = hostile_repo(base)
    index = base / "index"
    env = {**os.environ, "CODEVOUCH_INDEX": str(index), "TERM": "xterm"}
    for var in ("GIT_PAGER", "PAGER", "CODEVOUCH_RUN_GIT_FILTERS"):
        env.pop(var, None)
    if request.param == "in-process":
        yield collect(repo, marks, index, {**env, "CODEVOUCH_SERVER": "off"}, mcp=True)
        return
    with engines_on(env) as engines:
        results = collect(repo, marks, index, engines.env, mcp=False, start=lambda: engines.start(repo.root))
        results["engine_calls"] = engines.log().count(" call ")
        yield results


def collect(repo: Repo, marks: Path, index: Path, env: dict[str, str], mcp: bool,
            start: Callable[[], object] | None = None) -> dict[str, Any]:
    """`start`: after the build, start the engine (a first call answers in-process and starts it)
    and wait until it listens, so it answers every read command after."""
    cv = [sys.executable, "-m", "codevouch"]
    fake = ["--embedder", "fake-bow-64"]
    commands: list[tuple[str, list[str], str | None]] = [
        ("index build", [*cv, "index", "build", *fake], None),
        ("search", [*cv, "search", "cancel order"], None),
        ("search --mode lexical", [*cv, "search", "cancel_order", "--mode", "lexical"], None),
        ("validate", [*cv, "validate", "-"], snippets(repo)),
        ("validate --format context", [*cv, "validate", "--format", "context", "-"], snippets(repo)),
        ("context", [*cv, "context", "cancel order", "--budget", "800"], None),
        ("drift", [*cv, "drift"], None),
        ("review", [*cv, "review"], None),
        ("review --staged", [*cv, "review", "--staged", "--no-related"], None),
        ("review HEAD~2..HEAD", [*cv, "review", "HEAD~2..HEAD", "--no-related"], None),
        ("index status", [*cv, "index", "status"], None),
        ("index health", [*cv, "index", "health"], None),
        ("check-refs", [*cv, "check-refs", "-"], ANSWER),
    ]
    fired(marks)
    before = git_dir_state(repo)
    results: dict[str, Any] = {"fired": {}, "codes": {}, "output": {}}
    for name, argv, stdin in commands:
        restat(repo)
        code, out = on_terminal(argv, repo.root, env, stdin)
        results["fired"][name] = fired(marks)
        results["codes"][name] = code
        results["output"][name] = out
        if name == "index build" and start is not None:
            start()
            results["fired"]["the engine's start"] = fired(marks)
    if mcp:      # the MCP server is a warm process of its own: the engine does not change it
        results["fired"]["mcp"] = mcp_calls(repo, index, env, results)
    else:
        results["mcp_errors"] = []
    restat(repo)
    results["git_dir_changed"] = sorted(k for k, v in git_dir_state(repo).items() if before.get(k) != v) + sorted(
        set(before) - set(git_dir_state(repo)))
    results["controls"] = controls(repo, marks, env)
    return results


def mcp_calls(repo: Repo, index: Path, env: dict[str, str], results: dict[str, Any]) -> set[str]:
    """Every read-only MCP tool over a real stdio session; the markers they left."""
    import anyio
    from mcp import Client, StdioServerParameters
    marks = Path(str(repo.root.parent / "marks"))
    params = StdioServerParameters(
        command=sys.executable, cwd=str(repo.root), env={k: v for k, v in env.items() if k != "CODEVOUCH_INDEX"},
        args=["-m", "codevouch", "mcp", "--repo", str(repo.root), "--index", str(index)])
    head = repo.git("rev-parse", "HEAD").strip()
    calls: list[tuple[str, dict[str, Any]]] = [
        ("search", {"query": "cancel order", "k": 5}),
        ("validate", {"snippets": [{"path": "src/orders.py", "commit": head, "start_line": 1, "end_line": 3,
                                    "text": ORDERS}]}),
        ("context", {"query": "cancel order", "k": 3}),
        ("check_refs", {"text": ANSWER}),
        ("status", {}),
        ("health", {}),
    ]
    seen: set[str] = set()
    errors: list[str] = []

    async def main() -> None:
        with anyio.fail_after(180):
            async with Client(params, mode="legacy") as client:
                for tool, args in calls:
                    restat(repo)
                    result = await client.call_tool(tool, args)
                    if result.is_error:
                        errors.append(f"{tool}: {' '.join(getattr(c, 'text', '') for c in result.content)}")
                    seen.update(fired(marks))
    anyio.run(main)
    results["mcp_errors"] = errors
    return seen


def controls(repo: Repo, marks: Path, env: dict[str, str]) -> dict[str, set[str]]:
    """Plain git, as codevouch ran it before: each of these fires its mechanism."""
    plain = {**env, **GIT_ENV}
    plain.pop("GIT_CONFIG_GLOBAL", None)
    out: dict[str, set[str]] = {}

    def git(*args: str, terminal: bool = False) -> set[str]:
        restat(repo)
        argv = ["git", "-C", str(repo.root), *args]
        if terminal:
            on_terminal(argv, repo.root, plain)
        else:
            subprocess.run(argv, env=plain, capture_output=True, check=False)
        return fired(marks)
    out["status"] = git("status", "--porcelain")
    out["hash-object"] = git("hash-object", "src/orders.py", "README.md")
    out["cat-file --filters"] = git("cat-file", "--filters", "HEAD:src/orders.py")
    out["log -p"] = git("log", "-p", "-1", "HEAD~1", terminal=True)
    out["diff"] = git("diff", "HEAD~2", "HEAD", "--", "src/refund.py")
    return out


CONTROL_FOR = {"fsmonitor": "status", "hook": "status", "clean": "hash-object", "process": "hash-object",
               "smudge": "cat-file --filters", "textconv": "log -p", "pager": "log -p", "extdiff": "diff"}


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_the_mechanism_is_live_under_plain_git(runs: dict[str, Any], mechanism: str) -> None:
    assert mechanism in runs["controls"][CONTROL_FOR[mechanism]], runs["controls"]


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_no_cli_command_or_mcp_tool_runs_the_repositorys_program(runs: dict[str, Any], mechanism: str) -> None:
    ran = {command: sorted(marks) for command, marks in runs["fired"].items() if mechanism in marks}
    assert not ran, f"{mechanism} ran from: {ran}"


def test_the_commands_worked_against_the_hostile_repository(runs: dict[str, Any]) -> None:
    bad = {c: (code, runs["output"][c][-600:]) for c, code in runs["codes"].items()
           if code not in ((0, 3) if c in ("check-refs", "validate", "validate --format context") else (0,))}
    assert not bad
    assert not runs["mcp_errors"]
    assert "cancel_order" in runs["output"]["search"]


def test_the_engine_answered_every_read_command(runs: dict[str, Any]) -> None:
    if "engine_calls" not in runs:
        pytest.skip("in-process")
    assert runs["engine_calls"] == len(runs["codes"]) - 1      # all but `index build`


def test_nothing_under_dot_git_is_written(runs: dict[str, Any]) -> None:
    """Not the index (a refresh would run post-index-change), not anything else."""
    assert runs["git_dir_changed"] == []


def test_opting_in_runs_the_configured_filter(tmp_path: Path) -> None:
    """CODEVOUCH_RUN_GIT_FILTERS=1 (the environment, never the repository) runs filter drivers,
    so a working-tree hash is what `git add` would store."""
    from codevouch.worktree import gitio
    repo, marks = hostile_repo(tmp_path)
    assert gitio.hash_worktree_files(repo.root, ["src/refund.py"])
    assert "clean" not in fired(marks)
    env = {**os.environ, "CODEVOUCH_RUN_GIT_FILTERS": "1"}
    code = subprocess.run([sys.executable, "-c", (
        "from codevouch.worktree import gitio; import sys; "
        f"print(gitio.hash_worktree_files({str(repo.root)!r}, ['src/refund.py']))")], env=env,
        capture_output=True, text=True, check=False)
    assert code.returncode == 0, code.stderr
    assert "clean" in fired(marks)


def test_a_file_whose_filter_is_not_run_says_it_cannot_be_verified(tmp_path: Path) -> None:
    """The committed blob went through a real clean filter; codevouch does not run it, so the
    working-tree hash differs, and the verdict says why instead of running the program."""
    from codevouch.api import Index
    repo = Repo(tmp_path / "r")
    repo.git("config", "filter.upper.clean", "tr a-z A-Z")
    repo.commit_files({".gitattributes": "*.py filter=upper\n", "a.py": "def fine():\n    return 1\n"})
    assert repo.git("show", "HEAD:a.py") == "DEF FINE():\n    RETURN 1\n"
    # As after a fresh clone or a touch: git's stat data no longer vouch for the file, so it is
    # hashed (without the filter). Else the verdict would hang on the clock: a file that git's
    # index records as clean is vouched for on git's word (SECURITY.md), one written in
    # the index's own second is rehashed as racily clean.
    restat_file(repo.root / "a.py")
    [v] = Index(repo.root, tmp_path / "i").validate([
        {"path": "a.py", "commit": repo.head(), "start_line": 1, "end_line": 2}])
    assert v.verdict != "usable"
    assert "filter 'upper' is not run" in v.detail and "CODEVOUCH_RUN_GIT_FILTERS" in v.detail
