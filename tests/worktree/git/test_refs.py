"""The work tree's top, HEAD, branches and revisions."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from codevouch.errors import DetachedHead, NoCommits, NotARepository, UnknownRevision
from codevouch.worktree import gitio
from tests.gitrepo import Repo


def test_branch_errors_say_what_to_do(repo: Repo, tmp_path: Path) -> None:
    with pytest.raises(NoCommits):
        gitio.current_branch(repo.root)
    first = repo.commit(**{"a.py": "A = 1\n"})
    assert gitio.current_branch(repo.root) == "main"
    assert gitio.branch_commit(repo.root, "main") == first
    with pytest.raises(UnknownRevision, match="git branch"):
        gitio.branch_commit(repo.root, "nope")
    with pytest.raises(UnknownRevision):
        gitio.resolve_commit(repo.root, "--output=/tmp/x")
    repo.checkout("--detach", first)
    with pytest.raises(DetachedHead, match="--branch"):
        gitio.current_branch(repo.root)


def test_head_state_agrees_with_the_separate_calls(repo: Repo, tmp_path: Path) -> None:
    assert gitio.head_state(repo.root) is None  # no commits yet: the separate calls say so
    first = repo.commit(**{"pkg/a.py": "A = 1\n"})
    repo.git("checkout", "-q", "-b", "feature/x")
    state = gitio.head_state(repo.root / "pkg")
    assert state == gitio.HeadState(gitio.repo_root(repo.root / "pkg"), first, "feature/x")
    assert state.branch == gitio.current_branch(repo.root) and state.commit == gitio.head_commit(repo.root)
    repo.checkout("--detach", first)
    assert gitio.head_state(repo.root) == gitio.HeadState(gitio.repo_root(repo.root), first, None)
    (tmp_path / "plain").mkdir()
    assert gitio.head_state(tmp_path / "plain") is None
    assert gitio.head_state(tmp_path / "missing") is None


def test_the_root_asked_in_the_background_is_repo_root_s_answer(repo: Repo, tmp_path: Path) -> None:
    repo.commit(**{"pkg/a.py": "A = 1\n"})
    assert gitio.PendingRoot(repo.root / "pkg").result() == gitio.repo_root(repo.root) == repo.root.resolve()
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "bare")], check=True)
    (tmp_path / "plain").mkdir()
    for where in (tmp_path / "missing", tmp_path / "plain", tmp_path / "bare"):
        with pytest.raises(NotARepository) as background:
            gitio.PendingRoot(where).result()
        with pytest.raises(NotARepository) as foreground:
            gitio.repo_root(where)
        assert str(background.value) == str(foreground.value)
        assert ("bare git repository" in str(background.value)) == (where.name == "bare")


def test_has_commit_asks_for_the_commit_and_its_tree(repo: Repo) -> None:
    # The test an index entry built in another clone passes to answer for this one.
    first = repo.commit(**{"a.py": "A = 1\n"})
    tree = repo.git("rev-parse", "HEAD^{tree}").strip()
    blob = repo.git("rev-parse", "HEAD:a.py").strip()
    assert gitio.has_commit(repo.root, first)
    missing = ("0" if first[0] != "0" else "1") + first[1:]
    for absent in (missing, tree, blob, first[:12], "HEAD", "--all", ""):
        assert not gitio.has_commit(repo.root, absent), absent
    # A commit that no ref reaches any more is still an object of the repository: held.
    repo.git("commit", "-q", "--amend", "-m", "rewritten")
    assert gitio.has_commit(repo.root, first)


def test_has_any_commit_asks_for_them_all_at_once(repo: Repo) -> None:
    first = repo.commit(**{"a.py": "A = 1\n"})
    missing = ("0" if first[0] != "0" else "1") + first[1:]
    blob = repo.git("rev-parse", "HEAD:a.py").strip()
    assert gitio.has_any_commit(repo.root, (missing, blob, first))
    assert not gitio.has_any_commit(repo.root, (missing, blob, "HEAD"))
    assert not gitio.has_any_commit(repo.root, ())


def test_first_parent_samples_double_back_and_leave_the_root_out(repo: Repo) -> None:
    # Commits c0 (the root) .. c9: from c9 the samples are 1, 2, 4 and 8 steps back; 9 is the root.
    made = [repo.commit(**{"a.py": f"A = {n}\n"}) for n in range(10)]
    assert gitio.first_parent_samples(repo.root, made[9]) == (made[8], made[7], made[5], made[1])
    assert gitio.first_parent_samples(repo.root, made[8]) == (made[7], made[6], made[4])   # 8 back: the root
    assert gitio.first_parent_samples(repo.root, made[1]) == ()                           # only the root behind
    assert gitio.first_parent_samples(repo.root, made[0]) == ()
    assert gitio.first_parent_samples(repo.root, "HEAD") == ()                            # a full id only
    # A merge's second parent is not on the chain: the samples follow the branch itself.
    repo.git("checkout", "-q", "-b", "side", made[5])
    side = repo.commit(**{"b.py": "B = 1\n"})
    repo.git("checkout", "-q", "-")
    repo.git("merge", "-q", "--no-ff", "-m", "merge side", "side")
    merged = repo.git("rev-parse", "HEAD").strip()
    samples = gitio.first_parent_samples(repo.root, merged)
    assert samples[:2] == (made[9], made[8]) and side not in samples


def test_a_remote_that_is_not_utf8_is_a_label_not_a_crash(repo: Repo) -> None:
    # A cloned repository's config may hold any bytes; the label is for people (and the ledger).
    subprocess.run([b"git", b"config", b"remote.origin.url", b"https://example.com/caf\xe9/x.git"], cwd=repo.root,
                   check=True)
    assert gitio.remote_url(repo.root) == "https://example.com/caf\ufffd/x.git"
    subprocess.run([b"git", b"config", b"--remove-section", b"remote.origin"], cwd=repo.root, check=True)
    subprocess.run([b"git", b"config", b"remote.caf\xe9.url", b"https://example.com/y.git"], cwd=repo.root, check=True)
    assert gitio.remote_url(repo.root) == "https://example.com/y.git"


def test_a_repository_whose_path_is_not_utf8_is_refused_in_words(tmp_path: Path, index_dir: Path) -> None:
    """A directory name of bytes that are not UTF-8 (b'caf\\xe9'): the index keeps paths as text, so
    the build and the search say so, instead of a UnicodeError reported as a bug."""
    import os

    from tests.clihelp import cv

    where = Path(os.fsdecode(os.fsencode(str(tmp_path)) + b"/caf\xe9"))
    repo = Repo.create(where)
    repo.commit_files({"a.py": "def hello():\n    return 1\n"})
    with pytest.raises(NotARepository, match="not UTF-8"):
        gitio.repo_root(where)
    assert gitio.head_state(where) is None
    for args in (("index", "build"), ("search", "hello")):
        out = cv(*args, cwd=where, index=index_dir)
        assert out.returncode == 1 and "not UTF-8 text" in out.stderr and "bug" not in out.stderr


def test_a_branch_whose_name_is_not_utf8_is_refused_in_words(repo: Repo, index_dir: Path) -> None:
    """A branch named b'caf\\xe9' (git takes any bytes): the build and the search say the name is
    not UTF-8 and what to do, instead of a UnicodeError reported as a bug."""
    import os

    from codevouch.errors import GitError
    from tests.clihelp import cv

    repo.commit_files({"a.py": "def hello():\n    return 1\n"})
    repo.git("checkout", "-q", "-b", os.fsdecode(b"caf\xe9"))
    with pytest.raises(GitError, match="not UTF-8"):
        gitio.current_branch(repo.root)
    assert gitio.head_state(repo.root) is None
    for args in (("index", "build"), ("search", "hello")):
        out = cv(*args, cwd=repo.root, index=index_dir)
        assert out.returncode == 1 and "not UTF-8 text" in out.stderr and "bug" not in out.stderr
    repo.git("checkout", "-q", "main")
    assert cv("index", "build", "--all-branches", cwd=repo.root, index=index_dir).returncode == 1
    built = cv("index", "build", "--all-branches", "--exclude-branch", "caf*", cwd=repo.root, index=index_dir)
    assert built.returncode == 0, built.stderr


def test_a_work_tree_moved_with_an_include_added_after_a_warm_check_is_refused(repo: Repo, tmp_path: Path) -> None:
    """A warm process checked a core.worktree that keeps the work tree at home; then the work tree
    is moved outside and an include added beside it. The configuration kept from before (no
    includes: kept while its files' stat holds) must not vouch for the new one, which is never
    kept (an include's files cannot all be listed)."""
    from codevouch.errors import NotARepository
    from codevouch.worktree.git import confine

    outside = tmp_path / "outside"
    outside.mkdir()
    repo.git("config", "core.worktree", str(repo.root))
    confine.check(repo.root)                        # at home: passes, and is remembered
    (repo.root / ".git" / "empty.cfg").write_text("")
    repo.git("config", "include.path", "empty.cfg")
    repo.git("config", "core.worktree", str(outside))
    with pytest.raises(NotARepository, match="core.worktree"):
        confine.check(repo.root)
