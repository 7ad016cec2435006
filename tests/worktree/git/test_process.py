"""Every git process ignores the variables that would point it at another repository, and is
bounded in time and memory (CODEVOUCH_GIT_TIMEOUT, CODEVOUCH_GIT_MEMORY_MB)."""
from __future__ import annotations

from pathlib import Path

import pytest

from codevouch.errors import GitError, GitLimit, SettingError
from codevouch.worktree import gitio
from tests.clihelp import FAKE, cv
from tests.gitrepo import Repo, plant_special


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


def test_a_git_without_config_env_is_refused_with_a_clear_error() -> None:
    """git before 2.31 does not know --config-env (the filter guard): the command is refused, and
    the message says to upgrade, instead of running it without the guard or printing git's words."""
    from codevouch.errors import GitError
    from codevouch.worktree.git._process import _checked

    cmd = ("git", "--config-env=filter.x=y.clean=CV_GIT_EMPTY", "-C", "/r", "status")
    with pytest.raises(GitError) as caught:
        _checked(cmd, 129, b"", b"unknown option: --config-env=filter.x=y.clean=CV_GIT_EMPTY\nusage: git ...", (0,))
    assert "older than 2.31" in str(caught.value) and "upgrade git" in str(caught.value)


def test_filter_guard_names_every_driver_whole(repo: Repo) -> None:
    """A driver name holding `=` (or a dot, a quote) is one subsection to git: each gets
    --config-env options whose key is the whole name, and the variables they name are set."""
    from codevouch.worktree.git import _process
    from codevouch.worktree.git.filters import filter_overrides

    repo.commit(**{"a.py": "A = 1\n"})
    with open(repo.root / ".git" / "config", "a") as handle:
        handle.write('[filter "x=y"]\n\tclean = cat\n[filter "a.b"]\n\tsmudge = cat\n')
    options = filter_overrides(repo.root)
    assert "--config-env=filter.x=y.process=CV_GIT_EMPTY" in options
    assert "--config-env=filter.a.b.required=CV_GIT_FALSE" in options
    assert not any(o.startswith("-c") for o in options)
    assert _process._env()["CV_GIT_EMPTY"] == "" and _process._env()["CV_GIT_FALSE"] == "false"


# --- every git process is bounded in time and memory (Limits) ----------------------------------

def _loose_object_fifo(repo: Repo) -> str:
    """A repository whose blob of a.py is a loose object that is a FIFO: git blocks opening it."""
    repo.commit(**{"a.py": "A = 1\n"})
    blob = repo.blob("HEAD", "a.py")
    loose = repo.root / ".git" / "objects" / blob[:2] / blob[2:]
    plant_special(loose, "fifo")
    return blob


def test_a_ref_linked_to_dev_zero_stops_at_the_memory_limit_with_a_clear_error(
        repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """git read the link without end (18 GB until the kernel killed it: "git failed ... exit -9");
    now its allocations fail at the limit and the error names the command and the setting."""
    repo.commit(**{"a.py": "A = 1\n"})
    plant_special(repo.root / ".git" / "refs" / "heads" / "other", "zero")
    monkeypatch.setenv("CODEVOUCH_GIT_MEMORY_MB", "128")
    with pytest.raises(GitLimit) as caught:
        gitio.local_branches(repo.root)
    message = str(caught.value)
    assert caught.value.limit == "memory" and "memory limit of 128 MiB" in message
    assert "for-each-ref" in message and "CODEVOUCH_GIT_MEMORY_MB" in message


def test_the_build_says_which_limit_stopped_git(repo: Repo, index_dir: Path) -> None:
    repo.commit(**{"a.py": "A = 1\n"})
    plant_special(repo.root / ".git" / "refs" / "heads" / "other", "zero")
    result = cv("index", "build", "--all-branches", "--repo", str(repo.root), *FAKE,
                index=index_dir, env={"CODEVOUCH_GIT_MEMORY_MB": "128"})
    assert result.returncode == 1, result.stderr
    assert "memory limit of 128 MiB" in result.stderr and "CODEVOUCH_GIT_MEMORY_MB" in result.stderr
    assert "exit -9" not in result.stderr


def test_a_loose_object_that_is_a_fifo_stops_at_the_time_limit(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """`cat-file` blocked in open() for ever; run, Pending and the long-lived reader all stop."""
    blob = _loose_object_fifo(repo)
    monkeypatch.setenv("CODEVOUCH_GIT_TIMEOUT", "0.5")
    with pytest.raises(GitLimit, match=r"time limit of 0\.5 s .*cat-file --batch.*CODEVOUCH_GIT_TIMEOUT"):
        gitio.read_blobs(repo.root, [blob])
    with gitio.blob_reader(repo.root) as reader, pytest.raises(GitLimit) as caught:
        reader.read(blob)
    assert caught.value.limit == "time"
    with pytest.raises(GitLimit):
        gitio.run(repo.root, "cat-file", "-p", blob)


def test_the_long_lived_reader_still_reads_within_its_limits(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    big = "x = 1\n" * 100_000          # more than a pipe holds: read in parts
    repo.commit(**{"a.py": "A = 1\n", "big.py": big})
    monkeypatch.setenv("CODEVOUCH_GIT_TIMEOUT", "60")
    with gitio.blob_reader(repo.root) as reader:
        assert reader.read(repo.blob("HEAD", "big.py")) == big.encode()
        assert reader.read("0" * 40) is None
        assert reader.read(repo.blob("HEAD", "a.py")) == b"A = 1\n"


def test_a_killed_git_is_said_in_words() -> None:
    from codevouch.worktree.git._process import Limits, _checked

    with pytest.raises(GitError, match=r"killed by SIGKILL \(log\).*out-of-memory killer"):
        _checked(("git", "-C", "/r", "log"), -9, b"", b"", (0,), Limits(600, 1 << 30))
    # Over the memory limit is an error even where the caller takes exit 128 ("no such commit").
    with pytest.raises(GitLimit, match="memory limit of 1024 MiB"):
        _checked(("git", "-C", "/r", "rev-list"), 128, b"", b"fatal: Out of memory, realloc failed", (0, 128),
                 Limits(600, 1 << 30))


@pytest.mark.parametrize("value", ["-1", "lots", "2000000"])
def test_a_bad_bound_names_its_variable(repo: Repo, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    repo.commit(**{"a.py": "A = 1\n"})
    monkeypatch.setenv("CODEVOUCH_GIT_MEMORY_MB", value)
    with pytest.raises(SettingError, match="CODEVOUCH_GIT_MEMORY_MB"):
        gitio.head_commit(repo.root)


def test_a_wait_returns_the_exit_code_and_stops_at_its_deadline() -> None:
    import subprocess
    import time

    from codevouch.worktree.git._process import wait_exit

    done = subprocess.Popen(["sh", "-c", "exit 3"])     # a shell, not an interpreter: a process that ends
    assert wait_exit(done, time.monotonic() + 60) == 3
    assert wait_exit(done, time.monotonic() + 60) == 3          # reaped already: its code again
    assert wait_exit(subprocess.Popen(["true"]), None) == 0
    slow = subprocess.Popen(["sleep", "60"])
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            wait_exit(slow, time.monotonic() + 0.2)
        assert slow.poll() is None                               # still running: the caller kills it
    finally:
        slow.kill()
        slow.wait()
