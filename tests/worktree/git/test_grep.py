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


def test_grep_word_lines_gives_each_line_with_its_number(repo: Repo) -> None:
    repo.commit(**{"a.py": "def helper(x):\n    return helper_two(x)\n", "b\nc.py": "y = helper(1)\n"})
    repo.write("new/u.py", "\n\nhelper()\n")
    repo.write(".gitignore", "ignored.py\n")
    repo.write("ignored.py", "helper()\n")
    repo.remove("a.py")
    found = list(gitio.grep_word_lines(repo.root, "helper"))
    # Deleted and ignored files are not in the working tree's answer; a newline in a path is kept.
    assert found == [("b\nc.py", 1, "y = helper(1)"), ("new/u.py", 3, "helper()")]
    assert list(gitio.grep_word_lines(repo.root, "-e")) == [] and list(gitio.grep_word_lines(repo.root, "")) == []
