"""The MCP server on several repositories (codevouch/mcp_across.py), through the SDK's client."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from codevouch import Index
from codevouch.mcp_across import create_server_across
from codevouch.mcp_server import create_server
from tests.gitrepo import Repo

FAKE = "fake-bow-64"


def _call(server: Any, tool: str, args: dict[str, Any]) -> Any:
    async def main() -> Any:
        with anyio.fail_after(120):
            async with Client(server, mode="legacy") as client:
                tools = {t.name: t for t in (await client.list_tools()).tools}
                return tools, await client.call_tool(tool, args)
    return anyio.run(main)


@pytest.fixture
def two(tmp_path: Path) -> tuple[Repo, Repo, Path]:
    index_dir = tmp_path / "index"
    out = []
    for name, files in (("config", {"conf/load.py": "def parse_config(path):\n    with open(path) as f:\n"
                                             "        return f.read()\n"}),
                        ("library", {"lib/fees.py": "def overdue_fee(loan, days):\n    # the overdue fee for days past due\n"
                                             "    return days * loan.rate\n"})):
        repo = Repo.create(tmp_path / name)
        repo.commit_files(files)
        Index(repo.root, index_dir, embedder=FAKE, record=False).build()
        out.append(repo)
    return out[0], out[1], index_dir


def test_a_server_on_several_repositories_searches_across_them(two: tuple[Repo, Repo, Path]) -> None:
    config, library, index_dir = two
    server = create_server_across(None, index_dir, embedder=FAKE)     # --all-repos
    tools, result = _call(server, "search", {"query": "overdue fee days past due", "k": 2})
    assert "repos" in tools["search"].input_schema["properties"] and "repos" in tools["context"].input_schema["properties"]
    answer = result.structured_content
    assert answer["hits"][0]["path"] == "lib/fees.py" and answer["hits"][0]["verdict"] == "usable"
    assert answer["hits"][0]["repository"]["path"] == str(library.root)
    assert f"repository: {library.root}" in result.content[0].text
    # One repository, by its directory's name; a repository the server was not started on is refused.
    _, only = _call(create_server_across([config.root, library.root], index_dir, embedder=FAKE), "search",
                    {"query": "overdue fee days past due", "repos": ["config"]})
    assert {h["repository"]["path"] for h in only.structured_content["hits"]} == {str(config.root)}
    _, refused = _call(create_server_across([config.root], index_dir, embedder=FAKE), "search",
                       {"query": "fee", "repos": [str(library.root)]})
    assert refused.is_error and "not a repository of this server" in refused.content[0].text
    _, pack = _call(server, "context", {"query": "overdue fee days past due", "k": 2})
    assert f"repository: {library.root}" in pack.content[0].text


def test_a_server_on_one_repository_takes_no_repos(two: tuple[Repo, Repo, Path]) -> None:
    config, _, index_dir = two
    tools, _ = _call(create_server(config.root, index_dir, embedder=FAKE), "status", {})
    assert "repos" not in tools["search"].input_schema["properties"]


def test_navigation_tools_take_repos_and_name_each_repository(two: tuple[Repo, Repo, Path]) -> None:
    config, library, index_dir = two
    server = create_server_across([config.root, library.root], index_dir, embedder=FAKE)
    tools, shown = _call(server, "show", {"name": "overdue_fee"})
    assert all("repos" in tools[t].input_schema["properties"] for t in ("show", "references", "outline"))
    [hit] = shown.structured_content["hits"]
    assert hit["repository"]["path"] == str(library.root) and hit["path"] == "lib/fees.py"
    assert f"repository: {library.root}\nsource: lib/fees.py" in shown.content[0].text
    library.write("lib/report.py", "from lib.fees import overdue_fee\n\nprint(overdue_fee(None, 1))\n")
    _, uses = _call(server, "references", {"name": "overdue_fee", "repos": ["library"]})
    assert {(u["repository"]["path"], u["path"]) for u in uses.structured_content["references"]} == {
        (str(library.root), "lib/report.py")}
    _, got = _call(server, "outline", {"path": "conf/load.py", "repos": "all"})
    assert [(e["repository"]["path"], e["name"]) for e in got.structured_content["entries"]] == [
        (str(config.root), "parse_config")]
    _, refused = _call(server, "outline", {"path": "conf/load.py", "repos": ["elsewhere"]})
    assert refused.is_error and "not a repository of this server" in refused.content[0].text
    # The same error handling as the one-repository server's: a budget's words for an agent.
    _, small = _call(server, "context", {"query": "overdue fee", "budget": 1})
    assert small.is_error and "a `model` with a larger window" in small.content[0].text
