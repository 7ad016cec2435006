"""The filters' shared part: a pipeline item as a snippet, paths made relative, the policy."""
from __future__ import annotations

from pathlib import Path

import pytest

from codevouch import InputError
from codevouch.integrations.windows import judge, langchain_item, llamaindex_item
from codevouch.validator.shapes import Window
from tests.gitrepo import Repo


def test_absolute_paths_inside_are_made_relative(repo: Repo, tmp_path: Path) -> None:
    repo.commit(**{"a/b.py": "X = 1\n"})
    inside, outside = judge(repo.root, [langchain_item("X = 1", {"source": str(repo.root / "a" / "b.py")}, None),
                                        langchain_item("X = 1", {"source": str(tmp_path / "b.py")}, None)],
                            "langchain")
    assert (inside.validated.verdict, inside.validated.parsed.path) == ("stale-but-ok", "a/b.py")
    assert inside.metadata["codevouch_citation"].startswith("source: a/b.py\n")
    assert (outside.validated.reason, outside.text) == ("outside-repo", None)


def test_other_tools_metadata_of_another_shape_is_left_out() -> None:
    w = Window("a.py", "x", 3, {"commit": "not-hex", "start_line": "7", "end_line": 9, "blob_sha": None})
    assert w.snippet("abc1234") == {"path": "a.py", "text": "x", "start_index": 3, "end_line": 9,
                                    "commit": "abc1234"}


def test_judge_keeps_fresh_drops_stale_and_excluded(repo: Repo) -> None:
    commit = repo.commit(**{"m.py": "def f():\n    return 1\n", "vendor/v.py": "X = 1\n"})
    repo.write("m.py", "# top\ndef f():\n    return 1\n\n\ndef g():\n    return 2\n")
    got = judge(repo.root, [llamaindex_item("return 1", {"file_path": "m.py"}, 22, "n1", commit),
                            llamaindex_item("return 3", {"file_name": "m.py"}, None, "n2", commit),
                            llamaindex_item("X = 1", {"file_path": "vendor/v.py"}, None, "n3", commit)], "llamaindex")
    assert [(j.validated.verdict, j.text is not None) for j in got] == [
        ("stale-but-ok", True), ("historical-only", False), ("excluded", False)]
    assert got[0].metadata["codevouch_current_start_line"] == 3


def test_an_unreadable_item_is_dropped_and_the_others_judged(repo: Repo) -> None:
    commit = repo.commit(**{"m.py": "X = 1\n"})
    docs = judge(repo.root, [langchain_item("X = 1", {"title": "m"}, "d1", commit),
                             langchain_item("X = 1", {"source": "m.py", "start_index": -1}, "d2", commit),
                             langchain_item("X = 1", {"source": "m.py"}, "d3", commit)], "langchain")
    nodes = judge(repo.root, [llamaindex_item("X = 1", {}, 0, "n1", commit),
                              llamaindex_item("X = 1", {"file_path": "m.py"}, 0, "n2", commit)], "llamaindex")
    assert [(j.validated.reason, j.validated.item_id, j.text) for j in docs + nodes] == [
        ("malformed-input", "d1", None), ("malformed-input", "d2", None), ("same-commit", "d3", "X = 1"),
        ("malformed-input", "n1", None), ("same-commit", "n2", "X = 1")]
    # Dropped as any excluded item is: its verdict and reason in the metadata, the field named.
    assert docs[0].metadata["codevouch_verdict"] == "excluded"
    assert 'without "metadata.source"' in docs[0].metadata["codevouch_detail"]
    assert '"metadata.start_index" must be a character offset' in docs[1].metadata["codevouch_detail"]
    assert 'without "metadata.file_path"' in nodes[0].metadata["codevouch_detail"]


def test_the_filters_commit_stands_in_only_for_items_without_one() -> None:
    own = "a" * 40
    assert langchain_item("x", {"commit": own}, None, "b" * 40)["metadata"]["commit"] == own
    assert llamaindex_item("x", {"commit": "HEAD"}, None, None, "b" * 40)["metadata"]["commit"] == "b" * 40
    with pytest.raises(InputError, match="commit= must be a hexadecimal object id"):
        langchain_item("x", {}, None, "HEAD~1")


@pytest.mark.process
def test_import_codevouch_imports_no_pipeline_library() -> None:
    import subprocess
    import sys
    code = ("import sys, codevouch, codevouch.integrations.windows; "
            "print(sorted(m for m in sys.modules if m.startswith(('langchain', 'llama_index'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_dropped_item_is_counted_as_its_detail_counts_it(repo: Repo, caplog: pytest.LogCaptureFixture) -> None:
    commit = repo.commit(**{"m.py": "X = 1\n"})
    with caplog.at_level("WARNING", logger="codevouch"):
        [first, second] = judge(repo.root, [langchain_item("X = 1", {"source": "m.py"}, "d1", commit),
                                            langchain_item("X = 1", {"title": "no source"}, "d2", commit)], "langchain")
    assert first.validated.reason == "same-commit" and "input item 2" in second.validated.detail
    assert "dropped item 2," in caplog.text and "dropped item 1," not in caplog.text, caplog.text
