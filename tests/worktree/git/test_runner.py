"""git processes started in the background give what `run` gives."""
from __future__ import annotations

from pathlib import Path

import pytest

from codevouch.errors import GitError
from codevouch.worktree import gitio
from tests.gitrepo import Repo


def test_background_git_processes_give_what_run_gives(repo: Repo) -> None:
    commit = repo.commit(**{f"d{n}/f{m}.py": f"X = {n * m}\n" for n in range(40) for m in range(40)})
    # 1,600 entries: more output than a pipe holds, which git must be able to write in full
    # before anyone collects it.
    pending = gitio.start_tree_blobs(repo.root, commit)
    pending._proc.wait()      # noqa: SLF001 - git finishes without anyone reading its output
    assert gitio.parse_tree_blobs(pending.result()) == gitio.tree_blobs(repo.root, commit)
    assert pending.result() == pending.result()           # collected once, kept
    with pytest.raises(GitError, match="exit 128"):
        gitio.Pending(repo.root, "rev-parse", "--verify", "no-such-branch").result()
    # More input than a pipe holds, given to git whole.
    names = [commit] * 20_000
    out = gitio.Pending(repo.root, "cat-file", "--batch-check", stdin="".join(f"{n}\n" for n in names).encode())
    size = repo.git('cat-file', '-s', commit).strip()
    assert out.result().decode().splitlines() == [f"{commit} commit {size}"] * 20_000


def test_a_collected_background_process_is_done(repo: Repo) -> None:
    commit = repo.commit(**{"a.py": "A = 1\n"})
    pending = gitio.start_tree_blobs(repo.root, commit)
    assert gitio.parse_tree_blobs(pending.result()) == {"a.py": repo.blob("HEAD", "a.py")}
    assert pending.done()


def test_a_background_process_without_git_on_path_fails_when_collected(
        repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))       # no git here: fails when started, said when collected
    pending = gitio.Pending(repo.root, "status")
    with pytest.raises(GitError, match="git is not installed"):
        pending.result()
