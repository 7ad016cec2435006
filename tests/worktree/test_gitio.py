"""The git layer against real repositories."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from codevouch.errors import DetachedHead, GitError, NoCommits, NotARepository, UnknownRevision
from codevouch.worktree import gitio
from tests.gitrepo import Repo


def test_ls_tree_lists_blobs_only(repo: Repo) -> None:
    repo.write("a.py", "A = 1\n")
    repo.write("dir/b.txt", "b\n")
    os.symlink("a.py", repo.root / "link.py")
    commit = repo.commit("files")
    tree = gitio.ls_tree(repo.root, commit)
    assert set(tree) == {"a.py", "dir/b.txt"}  # the symlink is left out
    assert tree["a.py"].blob_sha == repo.blob(commit, "a.py") and tree["a.py"].size == 6


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


def test_hash_worktree_files_matches_git_and_skips_what_it_cannot_hash(repo: Repo) -> None:
    repo.write("a.py", "A = 1\n")
    repo.write("b.py", "B = 2\n")
    commit = repo.commit("files")
    hashed = gitio.hash_worktree_files(repo.root, ["a.py", "missing.py", "b.py"])
    assert hashed == {"a.py": repo.blob(commit, "a.py"), "b.py": repo.blob(commit, "b.py")}


def test_blob_reader_and_batch_check(repo: Repo) -> None:
    commit = repo.commit(**{"a.py": "A = 1\n"})
    blob = repo.blob(commit, "a.py")
    assert gitio.read_blobs(repo.root, [blob, "0" * 40]) == {blob: b"A = 1\n"}
    found = gitio.batch_check(repo.root, ["HEAD", f"{commit}:a.py", "f" * 40, "--output=x"])
    assert found == {"HEAD": (commit, "commit"), f"{commit}:a.py": (blob, "blob")}


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


def test_repository_locating_variables_are_ignored(repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    head = repo.commit(**{"a.py": "A = 1\n"})
    other = Repo(tmp_path / "other")
    other.commit(**{"b.py": "B = 2\n"})
    blob = repo.blob("HEAD", "a.py")   # before the variables are set: they redirect the helper too
    for name in gitio.REPO_LOCATING_VARS:
        monkeypatch.setenv(name, str(other.root / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other.root))
    assert gitio.head_commit(repo.root) == head
    assert set(gitio.ls_tree(repo.root, head)) == {"a.py"}
    assert gitio.worktree_status(repo.root).changed == frozenset()
    with gitio.blob_reader(repo.root) as reader:
        assert reader.read(blob) == b"A = 1\n"
    assert gitio.no_git_env({"GIT_DIR": "x", "GIT_CONFIG_GLOBAL": "g", "PATH": "p"}) == {
        "GIT_CONFIG_GLOBAL": "g", "PATH": "p"}


def test_grep_lines_finds_whole_lines_in_tracked_and_untracked_files(repo: Repo) -> None:
    repo.commit(**{"a.py": "def helper(x):\n    return 1\n", "b.py": "x = helper(x)  # def helper(x):\n"})
    repo.write("new/u.py", "class K:\n    def helper(x):\n        pass\n")
    repo.write(".gitignore", "ignored.py\n")
    repo.write("ignored.py", "def helper(x):\n")
    found = gitio.grep_lines(repo.root, ["def helper(x):", "-e", "absent line"])
    assert found == {"def helper(x):": ["a.py", "new/u.py"]}
    assert gitio.grep_lines(repo.root, []) == {}


def test_read_commits_gives_ids_types_and_the_dates_git_gives(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    commits = []
    for n, zone in enumerate(("+0000", "+0530", "-0800", "+1400")):
        monkeypatch.setenv("GIT_COMMITTER_DATE", f"2021-03-0{n + 1}T05:06:07 {zone}")
        commits.append(repo.commit(**{"a.py": f"A = {n}\n"}))
    blob = repo.blob("HEAD", "a.py")
    found = gitio.read_commits(repo.root, ["HEAD", commits[0][:9], *commits, blob, "f" * 40, "--output=x"])
    dates = gitio.commit_dates(repo.root, commits)     # git's own %cI
    assert {c: found[c] for c in commits} == {c: (c, "commit", dates[c]) for c in commits}
    assert dates[commits[1]] == "2021-03-02T05:06:07+05:30"
    assert found["HEAD"] == found[commits[-1]] and found[commits[0][:9]] == found[commits[0]]
    assert found[blob] == (blob, "blob", None)
    assert "f" * 40 not in found and "--output=x" not in found


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


def test_status_without_untracked_files_still_sees_a_file_taken_out_of_the_index(repo: Repo) -> None:
    repo.commit(**{"a.py": "A = 1\n", "b.py": "B = 1\n"})
    repo.write("new.py", "N = 1\n")
    repo.git("rm", "-q", "--cached", "b.py")        # still in the working tree, untracked now
    full, quick = gitio.worktree_status(repo.root), gitio.worktree_status(repo.root, untracked=False)
    assert full.untracked == {"new.py", "b.py"} and quick.untracked == frozenset()
    assert full.changed == quick.changed == {"b.py"}
    assert not quick.is_clean("b.py") and quick.is_clean("a.py")


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


def _age(path: Path, seconds: float = 60.0) -> None:
    """Set the file's mtime back; its ctime is then now, so it is aged too by waiting past RACY_NS
    (we stand in for that by lowering RACY_NS, the one knob: see the tests below)."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - int(seconds * 1e9)))


def _git_hash(repo: Repo, path: str) -> str:
    return repo.git("hash-object", "--", path).strip()


def test_a_file_hashed_before_is_not_hashed_again_until_it_changes(
        repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    import time
    repo.write("a.py", "A = 1\n")
    repo.commit("a")
    target = repo.write("a.py", "A = 2\n")
    _age(target)
    monkeypatch.setattr(gitio, "RACY_NS", 0)     # the ctime is "old enough" at once
    time.sleep(0.01)
    first = gitio.hash_worktree_files(repo.root, ["a.py"])
    before = gitio.PROCESSES["hash-object"]
    assert gitio.hash_worktree_files(repo.root, ["a.py"]) == first == {"a.py": _git_hash(repo, "a.py")}
    assert gitio.PROCESSES["hash-object"] == before            # remembered: no process
    # Rewritten with the same size, and its mtime set back to the remembered one: the ctime moved.
    old = target.stat()
    target.write_text("A = 3\n")
    os.utime(target, ns=(old.st_atime_ns, old.st_mtime_ns))
    again = gitio.hash_worktree_files(repo.root, ["a.py"])
    assert gitio.PROCESSES["hash-object"] == before + 1
    assert again == {"a.py": _git_hash(repo, "a.py")} != first


def test_a_file_changed_too_close_to_its_hashing_is_never_remembered(repo: Repo) -> None:
    repo.write("a.py", "A = 1\n")
    repo.commit("a")
    repo.write("a.py", "A = 2\n")      # just now: within RACY_NS of the hashing
    before = gitio.PROCESSES["hash-object"]
    gitio.hash_worktree_files(repo.root, ["a.py"])
    gitio.hash_worktree_files(repo.root, ["a.py"])
    assert gitio.PROCESSES["hash-object"] == before + 2


def test_a_changed_attributes_file_or_index_makes_files_hashed_again(
        repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    import time
    repo.write("sub/a.txt", b"one\r\ntwo\r\n")
    repo.commit("a")
    target = repo.root / "sub" / "a.txt"
    _age(target)
    monkeypatch.setattr(gitio, "RACY_NS", 0)
    time.sleep(0.01)
    crlf = gitio.hash_worktree_files(repo.root, ["sub/a.txt"])
    assert crlf == {"sub/a.txt": _git_hash(repo, "sub/a.txt")}
    # An attributes file in the file's folder (not the top one) that makes it text: git now
    # stores it with LF, so its blob id changes though the file did not.
    repo.write("sub/.gitattributes", "*.txt text\n")
    lf = gitio.hash_worktree_files(repo.root, ["sub/a.txt"])
    assert lf == {"sub/a.txt": _git_hash(repo, "sub/a.txt")} != crlf
    before = gitio.PROCESSES["hash-object"]
    repo.git("add", "sub/.gitattributes")        # the index changed: hashed again, same answer
    assert gitio.hash_worktree_files(repo.root, ["sub/a.txt"]) == lf
    assert gitio.PROCESSES["hash-object"] == before + 1


def test_nothing_is_remembered_when_configured_filters_may_run(
        repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    import time
    repo.write("a.py", "A = 1\n")
    repo.commit("a")
    _age(repo.write("a.py", "A = 2\n"))
    monkeypatch.setattr(gitio, "RACY_NS", 0)
    monkeypatch.setenv(gitio.RUN_FILTERS_VAR, "1")
    time.sleep(0.01)
    before = gitio.PROCESSES["hash-object"]
    gitio.hash_worktree_files(repo.root, ["a.py"])
    gitio.hash_worktree_files(repo.root, ["a.py"])
    assert gitio.PROCESSES["hash-object"] == before + 2
