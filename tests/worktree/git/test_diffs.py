"""Diffs between commits and to the working tree."""
from __future__ import annotations

from codevouch.worktree import gitio
from tests.gitrepo import Repo


def test_diffs_with_renames_between_commits_and_to_the_working_tree(repo: Repo) -> None:
    body = "".join(f"line {i}\n" for i in range(30))
    first = repo.commit(**{"old.py": body, "gone.py": "x\n"})
    repo.git("mv", "old.py", "new.py")
    repo.remove("gone.py")
    # Not committed yet: only the working-tree diff sees it.
    assert gitio.renames_between(repo.root, first, None) == {"old.py": "new.py"}
    second = repo.commit("move")
    changes = {(c.status, c.old_path, c.new_path) for c in gitio.diff_trees(repo.root, first, second)}
    assert changes == {("R", "old.py", "new.py"), ("D", "gone.py", None)}
