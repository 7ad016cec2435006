"""A repository's own Python files are never imported (issue 45, item 1).

codevouch imports much lazily, and the resident engine serves each call from inside the caller's
repository: started as `python -c ...`, its sys.path began with '' (the working directory at each
import), so a repository holding `tiktoken.py` had it run on `context`, an untracked `.go` file
made it import the repository's `tree_sitter_go.py`, and the module stayed loaded for the next
caller's repository.

Here a repository plants a module for every lazy import: the top-level name of every import
inside a function of codevouch/ (read from the source, not from a list kept by the code under
test), every grammar wheel's module, and a module inside tiktoken's plugin namespace. Each one,
when imported, leaves a marker file. Every read command runs in it in-process (the `codevouch`
script), through the engine and through the MCP server, with untracked files in every language
so that each grammar loads during the call; no marker may appear.
"""
from __future__ import annotations

import ast
import json
import os
import re
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import codevouch
from tests.enginehelp import FAKE, engines_on, wait_until
from tests.gitrepo import Repo

# Real processes: what a process imports from a hostile sys.path.
pytestmark = pytest.mark.process

SCRIPT = Path(sys.executable).parent / "codevouch"
PACKAGE = Path(codevouch.__file__).parent

# One small file per language with a grammar: committed (the build parses them) and untracked
# copies (the overlay parses them during a read call).
SOURCES = {
    "app.py": "def cancel_order(order):\n    return order.cancel()\n",
    "web.js": "function cancelOrder(order) {\n  return order.cancel();\n}\n",
    "api.ts": "export function cancelOrder(order: Order): void {\n  order.cancel();\n}\n",
    "view.tsx": "export function Cancel() {\n  return <button>cancel</button>;\n}\n",
    "svc.go": "package svc\n\nfunc CancelOrder(o Order) error {\n\treturn o.Cancel()\n}\n",
    "lib.rs": "pub fn cancel_order(o: &Order) {\n    o.cancel();\n}\n",
    "Svc.java": "class Svc {\n  void cancelOrder(Order o) {\n    o.cancel();\n  }\n}\n",
}


def lazy_imports() -> set[str]:
    """The top-level module of every import statement inside a function in codevouch/."""
    names: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for inner in ast.walk(node):
                if isinstance(inner, ast.Import):
                    names.update(alias.name.split(".")[0] for alias in inner.names)
                elif isinstance(inner, ast.ImportFrom) and inner.level == 0 and inner.module:
                    names.add(inner.module.split(".")[0])
    return names - {"codevouch", "__future__"}


def grammar_modules() -> set[str]:
    """The grammar wheels' modules, read from the language modules' source (syntax/langs/)."""
    text = "\n".join(p.read_text() for p in (PACKAGE / "syntax" / "langs").glob("*.py"))
    found = set(re.findall(r"[\"'](tree_sitter_\w+)[\"']", text))
    assert len(found) >= 6, found
    return found


def plant(root: Path, markers: Path) -> list[str]:
    """A module at the top of `root` for every lazy import; importing one writes markers/NAME.
    Git ignores them (info/exclude), so the overlay does not embed 40 extra files per call."""
    names = sorted(lazy_imports() | grammar_modules())
    assert {"tiktoken", "tantivy", "chromadb", "tree_sitter_go"} <= set(names), names
    for name in names:
        (root / f"{name}.py").write_text(f"open({str(markers / name)!r}, 'w').close()\n"
                                         f"raise ImportError('PLANTED-MODULE {name}')\n")
    # tiktoken finds its encodings by importing every module of the tiktoken_ext namespace package.
    (root / "tiktoken_ext").mkdir()
    (root / "tiktoken_ext" / "planted.py").write_text(f"open({str(markers / 'tiktoken_ext.planted')!r}, 'w').close()\n")
    exclude = root / ".git" / "info" / "exclude"
    exclude.parent.mkdir(exist_ok=True)
    exclude.write_text("".join(f"/{name}.py\n" for name in names) + "/tiktoken_ext/\n")
    return names


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Repo, Path, Path]]:
    base = tmp_path_factory.mktemp("lazy")
    repo = Repo(base / "repo")
    repo.commit_files(SOURCES)
    index = base / "index"
    markers = base / "markers"
    markers.mkdir()
    names = plant(repo.root, markers)
    # The build runs in-process only: with the modules planted, through the script.
    built = run_script(["index", "build", *FAKE], repo.root, {**os.environ, "CODEVOUCH_INDEX": str(index)})
    assert built.returncode == 0, built.stderr
    for name, text in SOURCES.items():
        repo.write(f"new/{name}", text.replace("cancel", "refund"))
    assert len(names) > 20
    yield repo, index, markers


def run_script(args: list[str], cwd: Path, env: dict[str, str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPT), *args], cwd=cwd, env=env, input=stdin, capture_output=True, text=True,
                          timeout=300)


def read_calls(repo: Repo) -> list[tuple[list[str], str | None]]:
    snippet = json.dumps([{"path": "app.py", "text": "def cancel_order(order):"}])
    answer = "`cancel_order` in app.py calls `Order.cancel` (svc.go)\n"
    return [
        (["search", "cancel order", "-k", "3"], None),
        (["search", "refund order", "--json"], None),
        (["context", "cancel an order", "--budget", "2000"], None),
        (["validate", "-"], snippet),
        (["check-refs", "-"], answer),
        (["drift"], None),
        (["review", "--base", "HEAD", "--budget", "2000"], None),
        (["index", "status"], None),
        (["index", "health"], None),
    ]


def assert_none_imported(markers: Path) -> None:
    assert sorted(p.name for p in markers.iterdir()) == []


@pytest.mark.skipif(not SCRIPT.exists(), reason="the codevouch script is not installed beside this Python")
def test_in_process_imports_nothing_from_the_repository(hostile: tuple[Repo, Path, Path]) -> None:
    repo, index, markers = hostile
    env = {**os.environ, "CODEVOUCH_INDEX": str(index), "CODEVOUCH_SERVER": "off"}
    assert_none_imported(markers)           # the build, in the fixture
    for args, stdin in read_calls(repo):
        done = run_script(args, repo.root, env, stdin)
        assert done.returncode in (0, 3), (args, done.stderr)
        assert "PLANTED-MODULE" not in done.stdout + done.stderr, args
    assert_none_imported(markers)


@pytest.mark.skipif(not SCRIPT.exists(), reason="the codevouch script is not installed beside this Python")
def test_the_engine_imports_nothing_from_the_repository(hostile: tuple[Repo, Path, Path]) -> None:
    """Through the engines (each started by a first call, as a user's is) of the script and of
    `python -m codevouch`: an engine belongs to one interpreter path, and each client puts
    something of the working directory on its own sys.path."""
    repo, index, markers = hostile
    with engines_on({**os.environ, "CODEVOUCH_INDEX": str(index)}) as engines:
        engines.start(repo.root)                        # python -m codevouch's engine
        first = run_script(["check-refs", "-"], repo.root, engines.env, "")   # answered here, starts the script's
        assert first.returncode == 0, first.stderr
        assert wait_until(lambda: len(engines.running()) == 2, 60), engines.log()[-2000:]

        def served() -> int:
            return (json.loads(engines.cv("serve", "--status", "--json").stdout)["calls"]
                       + json.loads(run_script(["serve", "--status", "--json"], repo.root, engines.env).stdout)["calls"]
                    )

        # The script's engine warms up on the repository before it answers: wait, so that the
        # calls below are the engine's, not in-process fallbacks.
        assert wait_until(lambda: b'"warm_up_s": null' not in run_script(
            ["serve", "--status", "--json"], repo.root, engines.env).stdout.encode(), 120), engines.log()[-2000:]
        before = served()
        for args, stdin in read_calls(repo):
            done = run_script(args, repo.root, engines.env, stdin)
            assert done.returncode in (0, 3), (args, done.stderr)
            assert "PLANTED-MODULE" not in done.stdout + done.stderr, args
            by_module = engines.cv(*args, cwd=repo.root, stdin=stdin)
            assert by_module.returncode == done.returncode, (args, by_module.stderr)
        assert served() - before == 2 * len(read_calls(repo)), engines.log()[-2000:]
        assert "PLANTED-MODULE" not in engines.log()
    assert_none_imported(markers)


def _rpc(proc: subprocess.Popen[bytes], message: dict, buffer: list[bytes]) -> dict | None:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()
    if "id" not in message:
        return None
    while True:
        while b"\n" not in buffer[0]:
            poller = select.poll()     # select() refuses a descriptor numbered 1024 or more
            poller.register(proc.stdout.fileno(), select.POLLIN)
            ready = poller.poll(120_000)
            assert ready, "the MCP server did not answer"
            chunk = os.read(proc.stdout.fileno(), 1 << 16)
            assert chunk, "the MCP server closed its output"
            buffer[0] += chunk
        line, _, buffer[0] = buffer[0].partition(b"\n")
        answer = json.loads(line)
        if answer.get("id") == message["id"]:
            return answer


@pytest.mark.skipif(not SCRIPT.exists(), reason="the codevouch script is not installed beside this Python")
def test_the_mcp_server_imports_nothing_from_the_repository(hostile: tuple[Repo, Path, Path]) -> None:
    repo, index, markers = hostile
    proc = subprocess.Popen([str(SCRIPT), "mcp", "--repo", str(repo.root), "--index", str(index)], cwd=repo.root,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env={**os.environ, "CODEVOUCH_SERVER": "off"})
    buffer = [b""]
    try:
        hello = _rpc(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}, buffer)
        assert hello and "result" in hello, hello
        _rpc(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"}, buffer)
        calls = [("search", {"query": "refund order", "k": 3}), ("context", {"query": "cancel an order", "budget": 2000}),
                 ("validate", {"snippets": [{"path": "app.py", "text": "def cancel_order(order):"}]}),
                 ("check_refs", {"text": "`cancel_order` in app.py"}), ("status", {}), ("health", {})]
        for ident, (tool, arguments) in enumerate(calls, start=2):
            answer = _rpc(proc, {"jsonrpc": "2.0", "id": ident, "method": "tools/call",
                                 "params": {"name": tool, "arguments": arguments}}, buffer)
            assert answer and "result" in answer, (tool, answer)
            assert not answer["result"].get("isError"), (tool, answer)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert_none_imported(markers)
