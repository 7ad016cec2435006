"""Whole lines looked up across the working tree."""
from __future__ import annotations

from codevouch.worktree import gitio
from tests.gitrepo import Repo


def test_grep_lines_finds_whole_lines_in_tracked_and_untracked_files(repo: Repo) -> None:
    repo.commit(**{"a.py": "def helper(x):\n    return 1\n", "b.py": "x = helper(x)  # def helper(x):\n"})
    repo.write("new/u.py", "class K:\n    def helper(x):\n        pass\n")
    repo.write(".gitignore", "ignored.py\n")
    repo.write("ignored.py", "def helper(x):\n")
    found = gitio.grep_lines(repo.root, ["def helper(x):", "-e", "absent line"])
    assert found == {"def helper(x):": ["a.py", "new/u.py"]}
    assert gitio.grep_lines(repo.root, []) == {}
