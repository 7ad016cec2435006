"""What a search hit costs an agent: each piece of code once (`search --json`, the MCP search
tool), `--fields`, one size bound per hit with the lines it leaves out, a class's outline."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from codevouch.mcp_server import create_server
from codevouch.results import HIT_CHARS
from tests.clihelp import FAKE, cv
from tests.gitrepo import Repo

SHOP = {
    "shop/cancel.py": "def cancel_order(order):\n    order.cancel()\n    return order\n",
    "shop/refund.py": "def refund_order(order):\n    return order.refund()\n",
}


def _big_class(name: str = "BigResponse", methods: int = 12) -> str:
    """A class too long for one chunk: indexed as a header chunk and a chunk per method."""
    lines = [f"class {name}(Base):", "    chunk_size = 64 * 1024", ""]
    for i in range(methods):
        lines.append(f"    def method_{i}(self, a, b):")
        lines += [f"        x{j} = a + b * {j}  # a comment long enough to fill the chunker's budget" for j in range(15)]
        lines += ["        return a", ""]
    return "\n".join(lines) + "\n"


def _search(repo: Repo, index_dir: Path, *args: str) -> list[dict[str, Any]]:
    out = cv("search", *args, "--json", cwd=repo.root, index=index_dir)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _built(repo: Repo, index_dir: Path, files: dict[str, str] | None = None) -> None:
    repo.commit_files(files or SHOP)
    assert cv("index", "build", *FAKE, cwd=repo.root, index=index_dir).returncode == 0


def test_a_hit_carries_its_code_once(repo: Repo, index_dir: Path) -> None:
    _built(repo, index_dir)
    [hit] = [h for h in _search(repo, index_dir, "refund_order", "-k", "3") if h["path"] == "shop/refund.py"]
    assert hit["verdict"] == "usable" and hit["code"] == SHOP["shop/refund.py"].rstrip("\n")
    # `text` would be `code` again, and `current` the same a third time: only where it is.
    assert "text" not in hit and hit["current"] == {"path": "shop/refund.py", "start_line": 1, "end_line": 2,
                                                    "symbol": "refund_order"}
    assert "reference_text" not in hit
    assert json.dumps(hit).count("order.refund()") == 1


def test_indexed_text_stays_where_it_differs_from_the_current_code(repo: Repo, index_dir: Path) -> None:
    _built(repo, index_dir)
    repo.write("shop/cancel.py", "def cancel_order(order, reason):\n    order.cancel(reason)\n    return order\n")
    hits = _search(repo, index_dir, "cancel order", "-k", "5", "--no-overlay")
    [changed] = [h for h in hits if h["path"] == "shop/cancel.py"]
    assert (changed["verdict"], changed["reason"]) == ("historical-only", "content-changed")
    assert "order.cancel()" in changed["text"] and "order.cancel(reason)" in changed["code"]
    assert "text" not in changed["current"] and "reference_text" not in changed


def test_a_hit_without_its_text_validates_by_its_code(repo: Repo, index_dir: Path, tmp_path: Path) -> None:
    # `validate` takes a hit back: its indexed text is read from `code` where `text` was left out,
    # so a line added above it still finds the chunk moved, not changed.
    _built(repo, index_dir)
    saved = tmp_path / "hits.json"
    saved.write_text(json.dumps(_search(repo, index_dir, "refund_order", "-k", "1")))
    repo.write("shop/refund.py", "# a line above\n" + SHOP["shop/refund.py"])
    out = cv("validate", str(saved), "--json", cwd=repo.root, index=index_dir)
    assert out.returncode == 0, out.stderr
    [result] = json.loads(out.stdout)
    assert (result["verdict"], result["reason"]) == ("stale-but-ok", "chunk-moved")
    assert result["current"]["start_line"] == 2


def test_fields_keep_only_what_is_asked(repo: Repo, index_dir: Path) -> None:
    _built(repo, index_dir)
    hits = _search(repo, index_dir, "refund_order", "-k", "2", "--fields", "path,start_line", "--fields", "code")
    assert hits and all(set(h) <= {"path", "start_line", "code", "cut"} and "code" in h for h in hits)
    bad = cv("search", "refund", "--json", "--fields", "path,sourcecode", cwd=repo.root, index=index_dir)
    assert bad.returncode == 2 and "'sourcecode'" in bad.stderr and "choose from: id, repo, path" in bad.stderr
    text = cv("search", "refund", "--fields", "path", cwd=repo.root, index=index_dir)
    assert text.returncode == 2 and "add --json" in text.stderr
    negative = cv("search", "refund", "--max-chars", "-1", cwd=repo.root, index=index_dir)
    assert negative.returncode == 2 and "--max-chars" in negative.stderr


def test_a_hit_over_the_bound_is_cut_and_says_where_the_rest_is(repo: Repo, index_dir: Path) -> None:
    body = "".join(f"    total = total + {i}  # step {i} of a long function\n" for i in range(400))
    long_fn = "def long_function(total):\n" + body + "    return total\n"
    assert len(long_fn) > HIT_CHARS
    _built(repo, index_dir, {"calc.py": long_fn})
    hits = _search(repo, index_dir, "long_function", "-k", "1")     # the default bound
    [hit] = hits
    assert len(hit["code"]) <= HIT_CHARS
    [cut] = hit["cut"]
    shown = hit["code"].count("\n") + 1
    assert cut == {"field": "code", "path": "calc.py", "start_line": hit["start_line"], "end_line": hit["end_line"],
                   "shown_end_line": hit["start_line"] + shown - 1, "chars": cut["chars"],
                   "rest": f"calc.py#L{hit['start_line'] + shown}-L{hit['end_line']}"}
    assert cut["chars"] > HIT_CHARS
    [small] = _search(repo, index_dir, "long_function", "-k", "1", "--max-chars", "300")
    assert len(small["code"]) <= 300 and small["cut"][0]["shown_end_line"] < hit["cut"][0]["shown_end_line"]
    [whole] = _search(repo, index_dir, "long_function", "-k", "1", "--max-chars", "0")
    assert "cut" not in whole and len(whole["code"]) == cut["chars"]
    text = cv("search", "long_function", "-k", "1", "--max-chars", "300", cwd=repo.root, index=index_dir)
    assert text.returncode == 0, text.stderr
    assert f"... cut at 300 characters ({cut['chars']:,} in all): lines {hit['start_line']}-" in text.stdout
    assert f"the rest is calc.py#L{small['cut'][0]['shown_end_line'] + 1}-L" in text.stdout


def test_a_class_header_hit_shows_its_members_outline(repo: Repo, index_dir: Path) -> None:
    _built(repo, index_dir, {"big.py": _big_class()})
    [hit] = _search(repo, index_dir, "BigResponse", "-k", "1")
    assert (hit["symbol"], hit["start_line"], hit["end_line"]) == ("BigResponse", 1, 2)     # the header chunk
    outline = hit["outline"]
    assert (outline["symbol"], outline["start_line"], outline["end_line"]) == ("BigResponse", 1, 218)
    lines = outline["text"].split("\n")
    assert lines[0] == "L1-L218 class BigResponse(Base):"
    assert lines[1] == "    L4-L20 def method_0(self, a, b):" and len(lines) == 13
    # Read from the working tree at answer time, as current as the code: a method added shows.
    repo.write("big.py", _big_class(methods=13))
    [now] = _search(repo, index_dir, "BigResponse", "-k", "1")
    assert now["outline"]["text"].count("def method_") == 13 and now["outline"]["end_line"] == 236
    text = cv("search", "BigResponse", "-k", "1", cwd=repo.root, index=index_dir)
    assert "outline of BigResponse (big.py#L1-L236), from the working tree:" in text.stdout
    assert "        L220-L236 def method_12(self, a, b):" in text.stdout
    # A small class kept whole in one chunk shows all of itself: no outline.
    _built(repo, index_dir, {"small.py": "class Small:\n    def a(self):\n        return 1\n"})
    [small] = _search(repo, index_dir, "Small", "-k", "1")
    assert small["symbol"] == "Small" and "outline" not in small


def _mcp(repo: Repo, index_dir: Path, args: dict[str, Any]) -> Any:
    async def main() -> Any:
        with anyio.fail_after(120):
            async with Client(create_server(repo.root, index_dir, embedder="fake-bow-64"), mode="legacy") as client:
                return await client.call_tool("search", args)
    return anyio.run(main)


def test_mcp_search_answers_each_piece_of_code_once(repo: Repo, index_dir: Path) -> None:
    _built(repo, index_dir, {**SHOP, "big.py": _big_class()})
    result = _mcp(repo, index_dir, {"query": "refund_order", "k": 3})
    assert not result.is_error
    hits = result.structured_content["hits"]
    [refund] = [h for h in hits if h["path"] == "shop/refund.py"]
    assert "text" not in refund and "text" not in refund["current"]
    # The text content, what a client shows its model: the hits written once each, not their JSON.
    [content] = result.content
    assert content.text.count("return order.refund()") == 1
    assert "source: shop/refund.py#L1-L2 (refund_order)" in content.text and '"verdict"' not in content.text
    picked = _mcp(repo, index_dir, {"query": "BigResponse", "k": 1, "fields": ["path", "code", "outline"],
                                    "max_chars": 120})
    [big] = picked.structured_content["hits"]
    assert set(big) == {"path", "code", "outline", "cut"} and len(big["code"]) + len(big["outline"]["text"]) <= 120
    assert big["cut"][0]["field"] == "outline" and "not shown: big.py#L" in picked.content[0].text


WSGI = {"wsgi.py": ('def build_environ(scope):\n    """Build a WSGI environ."""\n'
                    '    environ = {"REQUEST_METHOD": scope["method"]}\n'
                    '    return environ\n\n\nclass Environ:\n    def get(self, key):\n        return key\n')}


def test_a_name_deleted_since_the_build_is_said_gone_with_where_it_was(repo: Repo, index_dir: Path) -> None:
    _built(repo, index_dir, WSGI)
    commit = repo.git("rev-parse", "HEAD").strip()
    repo.write("wsgi.py", "class Environ:\n    def get(self, key):\n        return key\n")     # build_environ deleted
    out = cv("search", "build_environ", "--json", cwd=repo.root, index=index_dir)
    assert out.returncode == 0, out.stderr
    hits = json.loads(out.stdout)
    # What is left shares the name's words, not the name: none is a good match on their strength.
    assert hits and all(h["good_match"] is False and "build_environ" not in (h.get("code") or "") for h in hits)
    [gone] = [json.loads(line)["gone"] for line in out.stderr.splitlines() if line.startswith('{"gone"')]
    assert gone["definitions"] == [{"symbol": "build_environ", "path": "wsgi.py", "start_line": 1, "end_line": 9,
                                    "commit": commit, "branch": "main"}]
    assert gone["note"].startswith(f"build_environ was defined at the indexed commit (wsgi.py#L1-L9 at main@{commit[:7]})")
    text = cv("search", "build_environ", cwd=repo.root, index=index_dir)
    assert f"note: {gone['note']}" in text.stdout.splitlines() and "no good match" in text.stdout
    # A name that still exists is not said gone; nor is one the index never had.
    for query in ("Environ", "never_defined_anywhere"):
        kept = cv("search", query, "--json", cwd=repo.root, index=index_dir)
        assert kept.returncode == 0 and '"gone"' not in kept.stderr, kept.stderr
    answer = _mcp(repo, index_dir, {"query": "build_environ"})
    assert answer.structured_content["gone"] == gone and f"note: {gone['note']}" in answer.content[0].text
    assert _mcp(repo, index_dir, {"query": "Environ"}).structured_content["gone"] is None
