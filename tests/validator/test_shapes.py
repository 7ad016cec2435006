"""Native inputs: LangChain Documents, LlamaIndex nodes and plain snippets, each item read by its
own shape, through Index.validate and the CLI, on a real repository."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codevouch import Index, InputError
from tests.clihelp import cv
from tests.gitrepo import Repo

langchain = pytest.importorskip("langchain_core.documents")
from langchain_core.load import dumpd  # noqa: E402  (after the skip: the test extra holds it)

CODE = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"


def doc(source: str, text: str, start: int | None = None, id: str | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"source": source}
    if start is not None:
        metadata["start_index"] = start
    return langchain.Document(page_content=text, metadata=metadata, id=id).model_dump()


def node(path: str, text: str, start: int | None, id_: str) -> dict[str, Any]:
    """A TextNode as llama-index-core 0.14's `model_dump()` gives it (its output, copied)."""
    return {"id_": id_, "embedding": None, "metadata": {"file_path": path}, "excluded_embed_metadata_keys": [],
            "excluded_llm_metadata_keys": [], "relationships": {}, "metadata_template": "{key}: {value}",
            "metadata_separator": "\n", "text": text, "mimetype": "text/plain", "start_char_idx": start,
            "end_char_idx": None if start is None else start + len(text),
            "text_template": "{metadata_str}\n\n{content}", "class_name": "TextNode"}


@pytest.fixture
def idx(repo: Repo, tmp_path: Path) -> Index:
    repo.commit(**{"m.py": CODE})
    return Index(repo.root, tmp_path / "index")


def test_each_item_is_read_by_its_own_shape(idx: Index) -> None:
    g = CODE.index("def g")
    items = [doc("m.py", "return 1", CODE.index("return 1"), id="d1"),
             dumpd(langchain.Document(page_content=CODE[g:].strip(), metadata={"source": "m.py", "start_index": g},
                                      id="d2")),
             node("m.py", "return 2", CODE.index("return 2"), "n1"),
             {"node": node("m.py", "return 3", None, "n2"), "score": 0.5, "class_name": "NodeWithScore"},
             {"path": "m.py", "start_line": 1, "end_line": 2, "text": "def f():\n    return 1"}]
    got = idx.validate(items)
    assert [(r.verdict, r.reason, r.position, r.item_id) for r in got] == [
        ("stale-but-ok", "text-found", 0, "d1"), ("stale-but-ok", "text-found", 1, "d2"),
        ("stale-but-ok", "text-found", 2, "n1"), ("historical-only", "no-version-metadata", 3, "n2"),
        ("stale-but-ok", "text-found", 4, None)]
    assert "at its own offset" in got[0].detail
    assert (got[1].current.start_line, got[2].current.start_line) == (5, 6)    # type: ignore[union-attr]


def test_a_bad_item_among_good_ones_and_a_forced_format(idx: Index) -> None:
    items = [doc("m.py", "return 1"), {"page_content": "return 1", "metadata": {"title": "m"}},
             {"commit": "abc1234"}, {"path": "m.py", "text": "return 2"}]
    got = idx.validate(items)
    assert [(r.verdict, r.reason) for r in got] == [("stale-but-ok", "text-found"), ("excluded", "malformed-input"),
                                                    ("excluded", "malformed-input"), ("stale-but-ok", "text-found")]
    assert got[1].detail.startswith('input item 2: a LangChain Document without "metadata.source"')
    assert got[2].detail.startswith('input item 3: missing "path"')
    # Forced: every item must be that shape; the one that is not says which field it lacks.
    forced = idx.validate(items, input_format="langchain")
    assert [r.reason for r in forced] == ["text-found", "malformed-input", "malformed-input", "malformed-input"]
    assert 'missing "page_content" (the input format says a LangChain Document)' in forced[3].detail
    assert [r.reason for r in idx.validate(items[3:], input_format="codevouch")] == ["text-found"]
    with pytest.raises(InputError, match="unknown input format"):
        idx.validate(items, input_format="yaml")


def test_a_bad_offset_is_named_as_the_item_spells_it(idx: Index) -> None:
    items = [node("m.py", "return 2", -1, "n1"), doc("m.py", "return 1", -3),
             {"path": "m.py", "text": "return 1", "start_char_idx": 2**40},
             node("m.py", "return 2", CODE.index("return 2"), "n2")]
    got = idx.validate(items)
    assert [r.reason for r in got] == ["malformed-input"] * 3 + ["text-found"]
    assert got[0].detail.startswith('input item 1: "start_char_idx" must be a character offset')
    assert got[1].detail.startswith('input item 2: "metadata.start_index" must be a character offset')
    assert got[2].detail.startswith('input item 3: "start_char_idx" must be a character offset')


def test_absolute_paths_inside_are_relative_and_outside_excluded(idx: Index, repo: Repo, tmp_path: Path) -> None:
    outside = tmp_path / "m.py"
    outside.write_text(CODE)
    got = idx.validate([doc(str(repo.root / "m.py"), "return 1"),
                        node(f"file://{repo.root / 'm.py'}", "return 2", None, "n"),
                        doc(str(outside), "return 1")])
    assert [(r.verdict, r.reason) for r in got] == [("stale-but-ok", "text-found"), ("stale-but-ok", "text-found"),
                                                    ("excluded", "outside-repo")]
    assert [r.parsed.path for r in got[:2]] == ["m.py", "m.py"]
    assert all(r.citation.startswith("source: m.py\n") for r in got[:2])


def test_the_cli_judges_the_good_items_and_exits_2_on_a_bad_one(repo: Repo, tmp_path: Path) -> None:
    repo.commit(**{"m.py": CODE})
    lines = [doc("m.py", "return 1", id="d1"), {"page_content": "x"}, {"path": "m.py", "text": "return 9"}]
    out = cv("validate", "-", "--json", "--no-record", "--repo", str(repo.root), index=tmp_path / "index",
             stdin="\n".join(json.dumps(line) for line in lines))
    assert out.returncode == 2, out.stderr
    got = json.loads(out.stdout)
    assert [(r["input_index"], r["input_id"], r["reason"]) for r in got] == [
        (0, "d1", "text-found"), (1, None, "malformed-input"), (2, None, "no-version-metadata")]
    assert got[0]["page_content"] == "return 1"           # each item comes back as given
    assert 'input item 2: a LangChain Document without "metadata.source"' in out.stderr
    forced = cv("validate", "-", "--json", "--no-record", "--input-format", "llamaindex", "--repo", str(repo.root),
                index=tmp_path / "index", stdin=json.dumps(node("m.py", "return 2", None, "n")))
    assert forced.returncode == 0 and json.loads(forced.stdout)[0]["reason"] == "text-found", forced.stderr


def test_real_llamaindex_nodes(idx: Index) -> None:
    schema = pytest.importorskip("llama_index.core.schema")
    start = CODE.index("return 2")
    text = schema.TextNode(text="return 2", metadata={"file_path": "m.py"}, id_="n1", start_char_idx=start,
                           end_char_idx=start + len("return 2"))
    items = [text.model_dump(), text.to_dict(), text.model_dump(by_alias=True),
             schema.NodeWithScore(node=text, score=0.5).model_dump(),
             schema.Document(text=CODE, metadata={"file_name": "m.py"}).model_dump(exclude={"text"})]
    assert node("m.py", "return 2", start, "n1") == items[0]      # the dump copied above
    got = idx.validate(json.loads(json.dumps(items)), input_format="llamaindex")
    assert [(r.reason, r.item_id) for r in got[:4]] == [("text-found", "n1")] * 4
    assert got[4].verdict == "stale-but-ok"
