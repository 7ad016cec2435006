"""`codevouch mcp` over a real stdio pipe, raw bytes in: every request gets an answer (issue 19,
part 4). A line the MCP SDK cannot read used to be dropped without a word, and the client waited
for ever; each now gets a JSON-RPC error, and the server stays up."""
from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codevouch import Index
from tests.gitrepo import Repo

# A real MCP server process on stdio.
pytestmark = pytest.mark.process


class Wire:
    def __init__(self, repo: Repo, index: Path, env: dict[str, str] | None = None, log: Path | None = None) -> None:
        """The server with `env` added to ours, its stderr (its log) in `log` when given."""
        self.log = log
        self.proc = subprocess.Popen([sys.executable, "-m", "codevouch", "mcp", "--repo", str(repo.root),
                                      "--index", str(index)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=log.open("wb") if log else subprocess.PIPE, env={**os.environ, **(env or {})},
                                     cwd=repo.root)
        self.buffer = b""

    def send(self, raw: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(raw + b"\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float = 60) -> dict[str, Any] | None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            poller = select.poll()     # select() refuses a descriptor numbered 1024 or more
            poller.register(fd, select.POLLIN)
            ready = poller.poll(timeout * 1000)
            if not ready:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line)

    def initialize(self) -> None:
        """The MCP handshake: initialize (answered), then the initialized notification."""
        self.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}).encode())
        assert (self.receive() or {}).get("id") == 1
        self.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode())

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module")
def wire(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("wire")
    repo = Repo(base / "repo")
    repo.commit_files({"shop/cancel.py": "def cancel_order(order):\n    return order.cancel()\n"})
    Index(repo.root, base / "index", embedder="fake-bow-64").build()
    w = Wire(repo, base / "index")
    w.initialize()
    yield w
    w.close()


def call(ident: int, tool: str, args: str) -> bytes:
    return (b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {"name": "%s", "arguments": %s}}'
            % (ident, tool.encode(), args.encode()))


@pytest.mark.parametrize("raw, ident, code", [
    (b"this is not json", None, -32700),
    (b"\xff\xfe{not utf-8", None, -32700),
    (b'{"jsonrpc": "1.0", "id": 7, "method": "tools/list"}', 7, -32600),
    (b'{"id": 8, "method": "tools/list"}', 8, -32600),
    (b'[{"jsonrpc": "2.0", "id": 9, "method": "tools/list"}]', None, -32600),
    (b"[" * 100_000 + b"]" * 100_000, None, -32700),
    (b"{" * 50_000, None, -32700),
    (call(10, "search", '{"query": "\\ud800"}'), 10, -32602),
    (call(11, "validate", '{"snippets": [{"path": "shop/cancel.py", "text": "\\udfff"}]}'), 11, -32602),
    (call(12, "check_refs", '{"text": "see \\ud83d.py"}'), 12, -32602),
])
def test_every_unreadable_request_gets_an_error_and_the_server_stays_up(wire: Wire, raw: bytes, ident: int | None,
                                                                         code: int) -> None:
    wire.send(raw)
    answer = wire.receive()
    assert answer is not None, "no answer: the client would wait for ever"
    assert answer["jsonrpc"] == "2.0" and answer["id"] == ident and answer["error"]["code"] == code, answer
    wire.send(json.dumps({"jsonrpc": "2.0", "id": 100, "method": "tools/list"}).encode())
    listed = wire.receive()
    assert listed is not None and listed["id"] == 100 and listed["result"]["tools"], listed


def test_a_good_call_still_works_after_the_bad_ones(wire: Wire) -> None:
    wire.send(call(200, "search", '{"query": "cancel order", "k": 2}'))
    answer = wire.receive()
    assert answer is not None and answer["id"] == 200 and "result" in answer, answer
    assert "cancel_order" in json.dumps(answer["result"])


def nested(ident: int, depth: int) -> bytes:
    """A tools/list request whose params hold `depth` levels of nesting in all (the message's own
    object and its params among them)."""
    inner = b"[" * (depth - 2) + b"]" * (depth - 2)
    return b'{"jsonrpc": "2.0", "id": %d, "method": "tools/list", "params": {"cursor": null, "x": %s}}' % (
        ident, inner)


@pytest.mark.parametrize("depth", [202, 203, 1_500, 10_000, 1_000_000])
def test_a_request_nested_too_deeply_is_answered_with_its_id(wire: Wire, depth: int) -> None:
    # The SDK's parser stops at about 200 levels and dropped the line without a word: a request
    # nested 200 deep in its params (202 in all) got no answer; 1,500 and more are past Python's
    # own parser, and the id is found by a scan instead.
    wire.send(nested(300, depth))
    answer = wire.receive()
    assert answer is not None, "no answer: the client would wait for ever"
    assert answer["id"] == 300 and answer["error"]["code"] == -32700, answer
    assert "nested too deeply" in answer["error"]["message"]
    wire.send(json.dumps({"jsonrpc": "2.0", "id": 301, "method": "tools/list"}).encode())
    listed = wire.receive()
    assert listed is not None and listed["id"] == 301 and listed["result"]["tools"], listed


def test_a_request_as_deep_as_the_sdk_reads_is_answered_by_the_sdk(wire: Wire) -> None:
    wire.send(nested(310, 201))
    answer = wire.receive()
    assert answer is not None and answer["id"] == 310 and "result" in answer, answer


@pytest.mark.parametrize("raw, ident", [
    (b'{"jsonrpc": "2.0", "id": 320}', 320),                        # neither a request nor a response
    (b'{"jsonrpc": "2.0", "id": "s-321", "method": 5}', "s-321"),   # a method that is not a string
    (b'{"jsonrpc": "2.0", "id": 322, "method": "tools/list", "params": 7}', 322),
])
def test_a_message_the_sdk_refuses_is_answered_not_dropped(wire: Wire, raw: bytes, ident: object) -> None:
    wire.send(raw)
    answer = wire.receive()
    assert answer is not None, "no answer: the client would wait for ever"
    assert answer["id"] == ident and answer["error"]["code"] == -32600, answer


def test_a_100_mb_line_is_refused_with_its_id(wire: Wire) -> None:
    head = b'{"jsonrpc": "2.0", "id": 330, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "'
    wire.send(head + b"a" * (100 << 20) + b'"}}}')
    answer = wire.receive(timeout=120)
    assert answer is not None, "no answer: the client would wait for ever"
    assert answer["id"] == 330 and answer["error"]["code"] == -32600 and "at most" in answer["error"]["message"]
    wire.send(json.dumps({"jsonrpc": "2.0", "id": 331, "method": "tools/list"}).encode())
    listed = wire.receive()
    assert listed is not None and listed["id"] == 331, listed


def test_the_server_embeds_the_rest_of_a_big_overlay_after_answering(tmp_path: Path) -> None:
    """As the resident engine does (one implementation, retriever/resident.py): a search embeds
    what its limit allows, the server embeds the rest after answering, and the next search ranks
    every changed chunk by its own vector (no word-only ranks left)."""
    from tests.enginehelp import wait_until

    repo = Repo(tmp_path / "repo")
    repo.commit_files({"shop/cancel.py": "def cancel_order(order):\n    return order.cancel()\n"})
    Index(repo.root, tmp_path / "index", embedder="fake-bow-64").build()
    repo.write("shop/many.py", "".join(f"def handler_{i}(request):\n    return request.reply({i})\n\n\n"
                                       for i in range(12)))
    log = tmp_path / "mcp.log"
    w = Wire(repo, tmp_path / "index", env={"CODEVOUCH_OVERLAY_LIMIT": "1"}, log=log)
    try:
        w.initialize()
        w.send(call(1, "search", '{"query": "reply to the request", "k": 3}'))
        first = (w.receive() or {})["result"]["structuredContent"]["overlay"]
        assert first["not_embedded"] > 0, first
        assert wait_until(lambda: b"in the background" in log.read_bytes(), timeout=120), log.read_bytes()
        w.send(call(2, "search", '{"query": "reply to the request", "k": 3}'))
        after = (w.receive() or {})["result"]["structuredContent"]["overlay"]
        assert after["not_embedded"] == 0 and after["embedded"] == 0, after     # every vector was cached
    finally:
        w.close()
