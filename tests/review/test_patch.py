"""Unified diff parsing (pure) against patches git itself wrote for real repositories."""
from __future__ import annotations

import os

from codevouch.review.patch import added_file, parse_patch, unquote
from tests.gitrepo import Repo


def _diff(repo: Repo, *args: str) -> str:
    return repo.git("-c", "core.quotePath=true", "diff", "--patch", "--no-color", "-M", "--full-index",
                    "--src-prefix=a/", "--dst-prefix=b/", *args)


def test_statuses_paths_modes_and_binary_from_git(repo: Repo) -> None:
    body = "".join(f"line {i}\n" for i in range(40))
    repo.commit_files({"keep.py": "x = 1\n", "old name.py": body, "gone.py": "bye\n", "run.sh": "echo\n",
                       "img.bin": b"\0\1\2", "café.py": "a = 1\n", "edit.py": body})
    first = repo.head()
    repo.git("mv", "old name.py", "new name.py")
    repo.remove("gone.py")
    os.chmod(repo.root / "run.sh", 0o755)
    repo.write("img.bin", b"\0\1\3")
    repo.write("café.py", "a = 2\n")
    repo.write("edit.py", body.replace("line 3\n", "line three\n").replace("line 30\n", "+diff --git a/x b/x\n"))
    repo.write("new.py", "def f():\n    return 1")      # no newline at the end
    second = repo.commit("all kinds")
    files = {fp.path: fp for fp in parse_patch(_diff(repo, first, second))}
    assert set(files) == {"new name.py", "gone.py", "run.sh", "img.bin", "café.py", "edit.py", "new.py"}
    assert (files["new name.py"].status, files["new name.py"].old_path, files["new name.py"].hunks) == (
        "renamed", "old name.py", ())
    assert files["gone.py"].status == "deleted" and files["gone.py"].new_path is None
    assert files["run.sh"].mode_changed and not files["run.sh"].hunks
    assert (files["run.sh"].old_mode, files["run.sh"].new_mode) == ("100644", "100755")
    assert files["img.bin"].binary
    assert files["café.py"].status == "modified" and len(files["café.py"].hunks) == 1
    edit = files["edit.py"]
    assert len(edit.hunks) == 2
    # A changed line that reads like a diff header stays content of its hunk.
    assert "++diff --git a/x b/x" in edit.hunks[1].lines
    new = files["new.py"]
    assert new.status == "added" and new.hunks[0].lines[-1] == "\\ No newline at end of file"
    # Line counts in the hunk headers agree with the bodies that were read.
    for fp in files.values():
        for h in fp.hunks:
            assert sum(not line.startswith(("+", "\\")) for line in h.lines) == h.old_count
            assert sum(not line.startswith(("-", "\\")) for line in h.lines) == h.new_count


def test_quoted_paths_and_untracked_files() -> None:
    assert unquote('"caf\\303\\251 \\"q\\".py"') == 'café "q".py'
    assert unquote("plain.py") == "plain.py"
    patch = ('diff --git "a/tab\\there.py" "b/tab\\there.py"\nindex 1..2 100644\n'
             '--- "a/tab\\there.py"\n+++ "b/tab\\there.py"\n@@ -1 +1 @@\n-a\n+b\n')
    [fp] = parse_patch(patch)
    assert fp.path == "tab\there.py" and fp.hunks[0].lines == ("-a", "+b")
    added = added_file("n.py", "a\nb\n")
    assert added.untracked and added.hunks[0].header == "@@ -0,0 +1,2 @@" and added.hunks[0].lines == ("+a", "+b")
    assert added_file("e.py", "").hunks == () and added_file("b.bin", None, "binary").binary
