"""The MCP server's show, references and outline tools, through the SDK's own client, in-process."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from codevouch.mcp_server import create_server
from tests.gitrepo import Repo
from tests.navigate.scenario import edited


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, Path]:
    base = tmp_path_factory.mktemp("tools")
    return edited(base / "repo", base / "index"), base / "index"


def _calls(scene: tuple[Repo, Path], *calls: tuple[str, dict[str, Any]]) -> tuple[list[Any], list[Any]]:
    repo, index_dir = scene

    async def main() -> tuple[list[Any], list[Any]]:
        with anyio.fail_after(120):
            async with Client(create_server(repo.root, index_dir, embedder="fake-bow-64"), mode="legacy") as client:
                tools = (await client.list_tools()).tools
                return tools, [await client.call_tool(name, args) for name, args in calls]
    return anyio.run(main)


def test_the_server_lists_and_answers_the_navigation_tools(scene: tuple[Repo, Path]) -> None:
    tools, (new, gone, refs, outline, bad) = _calls(
        scene, ("show", {"name": "brand_new"}), ("show", {"name": "refund"}),
        ("references", {"name": "OrderService.cancel_order"}), ("outline", {"path": "shop/pricing.py"}),
        ("outline", {"path": "../outside.py"}))
    listed = {t.name: t for t in tools}
    assert {"show", "references", "outline"} <= set(listed)
    assert "instead\n        of search" in (listed["show"].description or "")
    assert all(listed[n].annotations is not None and listed[n].annotations.read_only_hint
               for n in ("show", "references", "outline"))
    [hit] = new.structured_content["hits"]
    assert (hit["path"], hit["start_line"], hit["verdict"]) == ("shop/new.py", 4, "usable")
    assert hit["code"].startswith("def brand_new(o):") and "text" not in hit
    assert gone.structured_content["hits"] == [] and gone.structured_content["gone"][0]["path"] == "shop/orders.py"
    # The text a model reads: the code once, in a fence, not JSON; a gone definition labelled reference only.
    assert new.content[0].text.count("def brand_new(o):") == 1 and "```python" in new.content[0].text
    assert "gone: shop/orders.py#L6-L7 (OrderService.refund)" in gone.content[0].text
    assert "reference only, do not implement against it" in gone.content[0].text
    assert [r["path"] for r in refs.structured_content["references"]] == ["shop/api.py", "shop/new.py"]
    assert [(e["name"], e["start_line"]) for e in outline.structured_content["entries"]] == [("total", 4)]
    assert bad.is_error and "outside the repository" in bad.content[0].text


def test_max_chars_bounds_the_code_of_a_hit(scene: tuple[Repo, Path]) -> None:
    _, (answer,) = _calls(scene, ("show", {"name": "total", "max_chars": 20}))
    [hit] = answer.structured_content["hits"]
    assert len(hit["code"]) <= 20 and hit["cut"][0]["rest"].startswith("shop/pricing.py#L")
