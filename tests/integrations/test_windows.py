"""The filters' shared part: a pipeline item as a snippet, paths made relative, the policy."""
from __future__ import annotations

from pathlib import Path

from codevouch.integrations.windows import Window, judge
from tests.gitrepo import Repo


def test_absolute_paths_inside_are_made_relative(repo: Repo, tmp_path: Path) -> None:
    repo.commit(**{"a/b.py": "X = 1\n"})
    inside, outside = judge(repo.root, [Window(str(repo.root / "a" / "b.py"), "X = 1"),
                                        Window(str(tmp_path / "b.py"), "X = 1")])
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
    got = judge(repo.root, [Window("m.py", "return 1", 22), Window("m.py", "return 3"),
                            Window("vendor/v.py", "X = 1")], commit=commit)
    assert [(j.validated.verdict, j.text is not None) for j in got] == [
        ("stale-but-ok", True), ("historical-only", False), ("excluded", False)]
    assert got[0].metadata["codevouch_current_start_line"] == 3


def test_import_codevouch_imports_no_pipeline_library() -> None:
    import subprocess
    import sys
    code = ("import sys, codevouch, codevouch.integrations.windows; "
            "print(sorted(m for m in sys.modules if m.startswith(('langchain', 'llama_index'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
