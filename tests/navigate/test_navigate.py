"""navigate.read_source: what navigation reads of the working tree, and what it refuses."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from codevouch.errors import InputError
from codevouch.navigate import read_source, refusal
from tests.gitrepo import Repo


def test_a_tracked_file_is_read_and_others_refused(repo: Repo, tmp_path: Path) -> None:
    repo.commit_files({"a.py": "x = 1\n", ".gitignore": "*.log\n"})
    repo.write("b.log", "secret\n")
    os.symlink("a.py", repo.root / "same.py")
    assert read_source(repo.root, "a.py", 1000).text == "x = 1\n"
    assert read_source(repo.root, "same.py", 1000).real == "a.py"      # a symlink that stays inside
    assert "ignored by git" in (refusal(repo.root, "b.log") or "")
    assert "outside the repository" in (refusal(repo.root, "../x.py") or "")
    with pytest.raises(InputError, match="size cap"):
        read_source(repo.root, "a.py", 3)
