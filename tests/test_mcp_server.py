"""`codevouch mcp`: the server as a real subprocess, driven by the MCP SDK's own stdio client."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from mcp import Client, StdioServerParameters

from codevouch import Index
from codevouch.context.windows import token_counter
from codevouch.store import writer_lock
from tests.gitrepo import Repo

# A real MCP server process on stdio (a real CLI process beside it).
pytestmark = pytest.mark.process

T = TypeVar("T")
SHOP = {
    "shop/__init__.py": "",
    "shop/cancel.py": "def cancel_order(order):\n    order.cancel()\n    return order\n",
    "shop/refund.py": "def refund_order(order):\n    return order.refund()\n",
}
count_tokens = token_counter()
READ_ONLY_TOOLS = {"search", "show", "references", "outline", "context", "validate", "status", "health", "check_refs"}


def server(repo: Repo, index_dir: Path, *extra: str) -> StdioServerParameters:
    env = {k: os.environ[k] for k in ("PYTHONPATH", "XDG_DATA_HOME", "HF_HUB_OFFLINE") if k in os.environ}
    return StdioServerParameters(
        command=sys.executable, cwd=str(repo.root), env=env,
        args=["-m", "codevouch", "mcp", "--repo", str(repo.root), "--index", str(index_dir), *extra])


def session(params: StdioServerParameters, body: Callable[[Client], Awaitable[T]]) -> T:
    async def main() -> T:
        with anyio.fail_after(120):
            async with Client(params, mode="legacy") as client:
                return await body(client)
    return anyio.run(main)


async def call(client: Client, tool: str, args: dict[str, Any] | None = None) -> tuple[bool, Any]:
    """(is_error, the structured result, else the text)."""
    result = await client.call_tool(tool, args or {})
    if result.structured_content is not None and not result.is_error:
        data = result.structured_content
        return False, data.get("result", data) if set(data) == {"result"} else data
    return bool(result.is_error), " ".join(getattr(c, "text", "") for c in result.content)


def built(repo: Repo, index_dir: Path) -> None:
    repo.commit_files(SHOP)
    Index(repo.root, index_dir, embedder="fake-bow-64").build()


def test_lists_and_calls_every_tool(repo: Repo, index_dir: Path) -> None:
    built(repo, index_dir)
    repo.write("shop/cancel.py", "def cancel_order(order, reason):\n    order.cancel(reason)\n    return order\n")

    async def body(client: Client) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == READ_ONLY_TOOLS
        assert all(t.annotations and t.annotations.read_only_hint for t in tools.values())

        # The index alone: its stale hit, as the validator sees it.
        err, found = await call(client, "search", {"query": "cancel order", "k": 5, "overlay": False})
        assert not err and found["overlay"] is None
        by_path = {h["path"]: h for h in found["hits"]}
        cancel, refund = by_path["shop/cancel.py"], by_path["shop/refund.py"]
        assert (cancel["verdict"], cancel["reason"]) == ("historical-only", "content-changed")
        assert "reason" in cancel["code"] and "order.cancel()" in cancel["text"]
        # With the overlay (the default), the edited file is searched as it is now.
        err, live = await call(client, "search", {"query": "cancel order", "k": 5})
        assert not err and live["overlay"]["files_searched"] == 1
        cancel = {h["path"]: h for h in live["hits"]}["shop/cancel.py"]
        assert (cancel["verdict"], cancel["origin"]) == ("usable", "uncommitted")
        assert "version: working tree (uncommitted) on main@" in cancel["citation"]
        assert refund["verdict"] == "usable" and refund["code"] == SHOP["shop/refund.py"].rstrip("\n")
        assert refund["citation"].startswith("source: shop/refund.py#L1-L2")

        # --path's patterns, as a list of gitignore-style globs, in search and context alike.
        err, only = await call(client, "search", {"query": "cancel order", "k": 5, "paths": ["*refund.py"]})
        assert not err and {h["path"] for h in only["hits"]} == {"shop/refund.py"}, only
        err, pack = await call(client, "context", {"query": "cancel order", "k": 3, "paths": ["shop/refund.py"]})
        assert not err and "source: shop/refund.py" in pack and "source: shop/cancel.py" not in pack

        err, pack = await call(client, "context", {"query": "refund order", "k": 3})
        assert not err, pack
        assert "source: shop/refund.py" in pack and "return order.refund()" in pack
        # A budget too small for everything: the pack says what it left out, and stays inside it.
        err, small = await call(client, "context", {"query": "order", "k": 5, "budget": 260})
        assert not err, small
        assert re.search(r"left out: \d+ \(budget \d+", small) and count_tokens(small) <= 260
        err, by_model = await call(client, "context", {"query": "order", "k": 5, "model": "gpt-4o"})
        assert not err and "source: shop/" in by_model

        snippets = [{"path": "shop/refund.py", "text": "    return order.refund()"},
                    {"path": "../outside.py", "text": "x"}, {"path": "shop/gone.py", "commit": repo.head()}]
        err, checked = await call(client, "validate", {"snippets": snippets})
        assert not err, checked
        assert [(r["verdict"], r["reason"]) for r in checked["results"]] == [
            ("stale-but-ok", "text-found"), ("excluded", "outside-repo"), ("historical-only", "path-never-existed")]

        err, status = await call(client, "status")
        assert not err and status["indexed"]
        [branch] = status["branches"]
        assert branch["branch"] == "main" and branch["commits_behind"] == 0 and branch["age_seconds"] >= 0

        # The calls above were recorded: health sees them and the stale hit among them.
        err, health = await call(client, "health")
        assert not err and health["calls"] >= 3 and health["stale_ratio"] > 0, health
        assert "shop/cancel.py" in {p["path"] for p in health["stale_paths"]}, health

        answer = "Cancel with `cancel_order` (shop/cancel.py#L1-L3); refunds via `issue_refund()` in shop/refunds.py.\n"
        err, refs = await call(client, "check_refs", {"text": answer})
        assert not err and refs["passed"] is False
        assert {(r["text"], r["status"]) for r in refs["references"]} == {
            ("`cancel_order`", "ok"), ("shop/cancel.py#L1-L3", "ok"),
            ("`issue_refund()`", "unknown"), ("shop/refunds.py", "missing")}
        err, lenient = await call(client, "check_refs", {"text": "Call `issue_refund()`.\n"})
        assert not err and lenient["passed"] is True
        err, strict = await call(client, "check_refs", {"text": "Call `issue_refund()`.\n", "strict": True})
        assert not err and strict["passed"] is False

    session(server(repo, index_dir), body)


def test_bad_arguments_get_errors_and_the_server_survives(repo: Repo, index_dir: Path, tmp_path: Path) -> None:
    built(repo, index_dir)
    (tmp_path / "secret.py").write_text("def secret_thing():\n    pass\n")

    async def body(client: Client) -> None:
        bad_calls: list[tuple[str, dict[str, Any], str]] = [
            ("search", {"query": "x", "k": 0}, "k"),
            ("search", {"query": "x", "k": "many"}, "k"),
            ("search", {}, "query"),
            ("search", {"query": "x", "mode": "psychic"}, "mode"),
            ("search", {"query": "x", "kinds": ["binary"]}, "kinds"),
            ("search", {"query": "x", "branch": "nope"}, "nope"),            # CodevouchError, as a tool error
            ("context", {"query": "x", "budget": -5}, "budget"),
            ("context", {"query": "x", "model": "no-such-model-9"}, "no-such-model-9"),
            ("validate", {"snippets": "not a list"}, "snippets"),
            ("validate", {"snippets": [{"path": "x.py"}], "input_format": "yaml"}, "input_format"),
            ("check_refs", {"text": 42}, "text"),
            ("build", {}, "build"),                                          # not offered without --allow-build
            ("no_such_tool", {}, "no_such_tool"),
        ]
        for tool, args, word in bad_calls:
            err, message = await call(client, tool, args)
            assert err, (tool, args, message)
            assert word in message, (tool, args, message)
            # Sentences for an agent, not pydantic's dump (issue 21.6).
            assert "pydantic" not in message and "validation error" not in message, message
        said = {tool + json.dumps(args): (await call(client, tool, args))[1] for tool, args in (
            ("search", {"query": "x", "k": 0, "mode": "psychic"}), ("search", {}),
            ("search", {"query": "x", "kinds": ["binary"]}), ("context", {"query": "x", "budget": -5}),
            ("validate", {"snippets": "not a list"}), ("build", {}))}
        assert list(said.values()) == [
            'Invalid arguments for search: `k` must be a whole number from 1 to 200 (got 0). '
            '`mode` must be one of "hybrid", "dense", "lexical" (got "psychic").',
            "Invalid arguments for search: `query` is required: a string of 1 to 2000 characters.",
            'Invalid arguments for search: `kinds` must be a list of values from "source", "test", "docs", '
            '"config" (or null for the default) (got ["binary"]).',
            "Invalid arguments for context: `budget` must be a whole number from 1 to 10000000 (or null for "
            "the default) (got -5).",
            'Invalid arguments for validate: `snippets` must be a list of objects (1 to 1000 items) (got "not a list").',
            "build is disabled: this server is read-only. To let agents build the index, start it with "
            "`codevouch mcp --allow-build`; or run `codevouch index build` in the repository."]
        # An item of no known shape is its own verdict, naming the missing field; the others are judged.
        document = {"id": "d1", "metadata": {"source": "shop/refund.py"}, "page_content": "return order.refund()",
                    "type": "Document"}
        err, mixed = await call(client, "validate", {"snippets": [{"no_path": 1}, document]})
        assert not err and [(r["input_index"], r["input_id"], r["reason"]) for r in mixed["results"]] == [
            (0, None, "malformed-input"), (1, "d1", "text-found")], mixed
        assert 'missing "path"' in mixed["results"][0]["detail"]
        err, forced = await call(client, "validate", {"snippets": [document], "input_format": "llamaindex"})
        assert not err and 'missing "text"' in forced["results"][0]["detail"], forced
        # Too small a budget: what to pass, in the tool's own terms (the CLI says --budget).
        err, small = await call(client, "context", {"query": "order", "budget": 5})
        assert err and "pass a larger `budget` (at least" in small and "--budget" not in small, small
        # A path outside the repository is refused, and nothing of it comes back.
        err, refs = await call(client, "check_refs", {"text": f"See {tmp_path / 'secret.py'}:1 and ../secret.py#L1.\n"})
        assert not err and [r["status"] for r in refs["references"]] == ["refused", "refused"]
        assert "secret_thing" not in json.dumps(refs)
        err, status = await call(client, "status")
        assert not err and status["indexed"]

    session(server(repo, index_dir), body)


def test_a_build_landing_while_the_server_runs_is_seen_by_the_next_call(repo: Repo, index_dir: Path) -> None:
    built(repo, index_dir)

    async def body(client: Client) -> None:
        err, before = await call(client, "search", {"query": "ship parcel", "k": 10, "mode": "dense"})
        assert not err and "shop/ship.py" not in {h["path"] for h in before["hits"]}
        repo.commit_files({"shop/ship.py": "def ship_parcel(parcel):\n    return parcel.ship()\n"})
        await anyio.to_thread.run_sync(lambda: subprocess.run(
            [sys.executable, "-m", "codevouch", "index", "build", "--repo", str(repo.root), "--index",
             str(index_dir), "--embedder", "fake-bow-64"], check=True, capture_output=True))
        for mode in ("dense", "lexical"):
            err, after = await call(client, "search", {"query": "ship parcel", "k": 10, "mode": mode})
            assert not err and after["hits"][0]["path"] == "shop/ship.py", mode
            assert after["hits"][0]["verdict"] == "usable"
        err, status = await call(client, "status")
        assert status["branches"][0]["commit"] == repo.head()

    session(server(repo, index_dir), body)


def test_the_server_sees_an_edit_made_between_two_calls(repo: Repo, index_dir: Path) -> None:
    """The working-tree overlay: no build, and the server keeps it warm (the second identical
    call embeds nothing; an edit re-derives only the edited file)."""
    built(repo, index_dir)

    async def body(client: Client) -> None:
        err, before = await call(client, "search", {"query": "ship_parcel", "k": 5})
        assert not err and "shop/ship.py" not in {h["path"] for h in before["hits"]}
        repo.write("shop/ship.py", "def ship_parcel(parcel):\n    return parcel.ship()\n")
        err, after = await call(client, "search", {"query": "ship_parcel", "k": 5})
        assert not err, after
        top = after["hits"][0]
        assert (top["path"], top["verdict"], top["origin"]) == ("shop/ship.py", "usable", "uncommitted")
        assert after["overlay"]["embedded"] == 1
        err, again = await call(client, "search", {"query": "ship_parcel", "k": 5})
        assert not err and again["hits"][0]["path"] == "shop/ship.py" and again["overlay"]["embedded"] == 0
        repo.write("shop/ship.py", "def ship_parcel(parcel, carrier):\n    return carrier.ship(parcel)\n")
        err, edited = await call(client, "search", {"query": "ship_parcel", "k": 5})
        assert not err and "carrier.ship(parcel)" in edited["hits"][0]["code"]
        pack = await call(client, "context", {"query": "ship a parcel", "k": 3})
        assert not pack[0] and "carrier.ship(parcel)" in pack[1] and "live: index main@" in pack[1]

    session(server(repo, index_dir), body)


def test_allow_build_adds_a_build_tool_that_takes_the_writer_lock(repo: Repo, index_dir: Path) -> None:
    repo.commit_files(SHOP)

    async def body(client: Client) -> None:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert tools == READ_ONLY_TOOLS | {"build"}
        err, status = await call(client, "status")
        assert not err and status["indexed"] is False and "index build" in status["hint"]
        err, message = await call(client, "search", {"query": "refund"})
        assert err and "index build" in message
        with writer_lock(index_dir, 0):
            err, message = await call(client, "build", {"wait": 0})
        assert err and "another codevouch build" in message
        err, done = await call(client, "build", {})
        assert not err and done["branches"][0]["chunks"] == 2
        err, found = await call(client, "search", {"query": "refund order", "k": 1})
        assert not err and found["hits"][0]["path"] == "shop/refund.py"

    session(server(repo, index_dir, "--allow-build", "--embedder", "fake-bow-64"), body)


def test_not_a_repository_fails_at_start(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "codevouch", "mcp", "--repo", str(tmp_path)],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 1 and "not inside a git repository" in proc.stderr


@pytest.mark.model
def test_search_with_the_real_model(repo: Repo, index_dir: Path) -> None:
    repo.commit_files(SHOP)
    Index(repo.root, index_dir).build()   # the packaged all-MiniLM-L6-v2

    async def body(client: Client) -> None:
        err, found = await call(client, "search", {"query": "give the customer their money back", "k": 1,
                                                   "mode": "dense"})
        assert not err and found["hits"][0]["path"] == "shop/refund.py"
        assert found["hits"][0]["verdict"] == "usable"

    session(server(repo, index_dir), body)


def test_a_hit_has_one_json_form_and_a_bad_value_one_message(repo: Repo, index_dir: Path) -> None:
    """What MCP's search answers with is what `search --json` prints, hit for hit (the one form,
    Hit.to_json); and a value the request refuses gets the CLI's words."""
    built(repo, index_dir)
    repo.write("shop/cancel.py", "def cancel_order(order, reason):\n    order.cancel(reason)\n    return order\n")
    env = {**os.environ, "CODEVOUCH_SERVER": "off"}
    cli = subprocess.run([sys.executable, "-m", "codevouch", "search", "cancel order", "-k", "5", "--json",
                          "--no-overlay", "--index", str(index_dir)], cwd=repo.root, env=env,
                         capture_output=True, text=True, timeout=120)
    assert cli.returncode == 0, cli.stderr
    refused = subprocess.run([sys.executable, "-m", "codevouch", "search", "x", "--path", "!vendor/",
                              "--index", str(index_dir)], cwd=repo.root, env=env, capture_output=True, text=True,
                             timeout=120)

    async def body(client: Client) -> tuple[Any, Any]:
        err, found = await call(client, "search", {"query": "cancel order", "k": 5, "overlay": False})
        assert not err, found
        err, message = await call(client, "search", {"query": "x", "paths": ["!vendor/"]})
        assert err
        return found, message

    found, message = session(server(repo, index_dir), body)
    hits = [h for h in json.loads(cli.stdout) if h["verdict"] != "excluded"]
    assert found["hits"] == hits and {"code", "text", "commit", "blob_sha", "citation"} <= set(hits[0])
    historical = next(h for h in hits if h["verdict"] == "historical-only")
    assert "order.cancel()" in historical["text"] and "reason" in historical["code"]
    said = message.removeprefix("Error executing tool search: ")      # the SDK's prefix
    assert refused.returncode == 2 and refused.stderr == f"codevouch: {said}\n"


def test_text_content_shows_controls_from_the_repository_as_escapes(repo: Repo, index_dir: Path) -> None:
    """A branch named with a C1 CSI and a right-to-left override, and a DEL in the code: the
    tools' text content escapes them as the CLI's JSON does; the structured content is exact."""
    raw = ("\x9b", "\u202e", "\x7f")
    repo.commit_files(SHOP)
    repo.git("checkout", "-q", "-b", "esc-\x9b31m-\u202ex")
    repo.commit_files({"shop/cancel.py": "def cancel_order(order):\n    return order  # \x7f\n"})
    Index(repo.root, index_dir, embedder="fake-bow-64").build()
    repo.commit_files({"shop/refund.py": "def refund_order(order):\n    return None\n"})   # one behind

    async def body(client: Client) -> list[Any]:
        return [await client.call_tool(tool, args) for tool, args in
                (("search", {"query": "cancel_order", "k": 2}), ("status", {}),
                 ("context", {"query": "cancel_order", "budget": 2000}))]
    results = session(server(repo, index_dir), body)
    texts = [c.text for r in results for c in r.content]
    assert not any(r.is_error for r in results), texts
    assert not any(ch in text for text in texts for ch in raw), texts
    # The search's text content is its hits as a model reads them, escaped as the CLI's text is;
    # the others' is their JSON, escaped as the CLI's JSON is.
    assert "esc-\\x9b31m-\\u202ex" in texts[0] and "\\x7f" in texts[0]
    assert "esc-\\u009b31m-\\u202ex" in texts[1]
    search = results[0].structured_content
    assert search is not None and search["overlay"]["index"].startswith("esc-\x9b31m-\u202ex@")
    assert "\x7f" in search["hits"][0]["code"]
