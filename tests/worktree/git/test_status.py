"""What `git status` reports."""
from __future__ import annotations

from codevouch.worktree import gitio
from tests.gitrepo import Repo


def test_status_without_untracked_files_still_sees_a_file_taken_out_of_the_index(repo: Repo) -> None:
    repo.commit(**{"a.py": "A = 1\n", "b.py": "B = 1\n"})
    repo.write("new.py", "N = 1\n")
    repo.git("rm", "-q", "--cached", "b.py")        # still in the working tree, untracked now
    full, quick = gitio.worktree_status(repo.root), gitio.worktree_status(repo.root, untracked=False)
    assert full.untracked == {"new.py", "b.py"} and quick.untracked == frozenset()
    assert full.changed == quick.changed == {"b.py"}
    assert not quick.is_clean("b.py") and quick.is_clean("a.py")
