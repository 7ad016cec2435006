"""A warm process takes git's last HEAD and status of a work tree nobody touched, and asks git again
after any change that could change the answer (codevouch/worktree/git/unchanged.py). Real git
repositories; the git processes are counted, never mocked. RACY_NS is 0 where a test means the
answer to be kept (files written a moment ago would not be), and each edit changes a size or an
entry, so no edit hides in one clock tick."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from codevouch import clear_caches
from codevouch.worktree import gitio
from codevouch.worktree.git import unchanged
from tests.gitrepo import Repo


@pytest.fixture
def kept(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> Repo:
    clear_caches()
    monkeypatch.setattr(unchanged, "RACY_NS", 0)
    repo.commit("one", **{"a.py": "A = 1\n", "pkg/b.py": "B = 2\n"})
    return repo


def _status(repo: Repo, untracked: bool = True) -> tuple[gitio.WorktreeStatus, int]:
    """The status as a search asks it, and how many status processes it started."""
    before = gitio.PROCESSES["status"]
    found = gitio.worktree_status(repo.root, untracked=untracked, toplevel=True)
    return found, gitio.PROCESSES["status"] - before


def _head(repo: Repo) -> tuple[gitio.HeadState | None, int]:
    before = gitio.PROCESSES["rev-parse"]
    found = gitio.head_state(repo.root)
    return found, gitio.PROCESSES["rev-parse"] - before


def test_an_untouched_work_tree_is_answered_without_git(kept: Repo) -> None:
    first, ran = _status(kept)
    assert ran == 1 and first.changed == frozenset() and first.untracked == frozenset()
    assert _status(kept) == (first, 0)
    head, ran = _head(kept)
    assert ran == 1 and head is not None
    assert _head(kept) == (head, 0)


@pytest.mark.parametrize("change", ["edit", "new file", "new file deep", "remove", "new folder file", "chmod",
                                    "gitignore"])
def test_each_change_is_seen_at_the_next_call(kept: Repo, change: str) -> None:
    _status(kept)
    if change == "edit":
        kept.write("pkg/b.py", "B = 22\n")
    elif change == "new file":
        kept.write("c.py", "C = 3\n")
    elif change == "new file deep":
        (kept.root / "pkg" / "deep").mkdir()
        _status(kept)
        kept.write("pkg/deep/d.py", "D = 4\n")
    elif change == "remove":
        kept.remove("a.py")
    elif change == "new folder file":
        kept.write("new/e.py", "E = 5\n")
    elif change == "chmod":
        os.chmod(kept.root / "a.py", 0o755)
    else:
        kept.write("x.log", "x\n")
        _status(kept)
        kept.write(".gitignore", "*.log\n")
    found, ran = _status(kept)
    assert ran == 1
    assert found == gitio.worktree_status(kept.root)      # as git says, without the kept answer


def test_an_ignored_file_still_counts_and_a_folder_git_ignores_is_walked(kept: Repo) -> None:
    kept.commit("ignore", **{".gitignore": "build/\n"})
    (kept.root / "build").mkdir()
    _status(kept)
    kept.write("build/out.o", "x\n")
    assert _status(kept)[1] == 1           # more git than needed, never a stale answer


def test_staging_and_committing_are_seen(kept: Repo) -> None:
    kept.write("a.py", "A = 11\n")
    assert _status(kept)[0].changed == {"a.py"}
    kept.git("add", "a.py")
    assert _status(kept) == (gitio.worktree_status(kept.root), 1)
    head, _ = _head(kept)
    kept.git("commit", "-q", "-m", "two")
    assert _status(kept) == (gitio.WorktreeStatus(frozenset(), frozenset()), 1)
    after, ran = _head(kept)
    assert ran == 1 and after is not None and head is not None and after.commit != head.commit


def test_a_branch_switch_and_a_moved_ref_are_seen(kept: Repo) -> None:
    head, _ = _head(kept)
    kept.git("checkout", "-q", "-b", "other")
    moved, ran = _head(kept)
    assert ran == 1 and moved is not None and moved.branch == "other"
    kept.commit("on other", **{"a.py": "A = 111\n"})
    kept.git("checkout", "-q", "main")
    kept.git("update-ref", "refs/heads/main", "other")
    again, ran = _head(kept)
    assert ran == 1 and again is not None and head is not None and again.commit != head.commit


def test_a_changed_configuration_or_environment_asks_git_again(kept: Repo, monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: Path) -> None:
    kept.write("x.tmp", "x\n")
    _status(kept)
    exclude = tmp_path / "excludes"
    exclude.write_text("*.tmp\n")
    kept.git("config", "core.excludesFile", str(exclude))
    found, ran = _status(kept)
    assert ran == 1 and "x.tmp" not in found.untracked
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'status.showUntrackedFiles'='no'")
    assert _status(kept)[1] == 1


def test_a_write_in_the_same_moment_is_never_kept(repo: Repo) -> None:
    # With the real RACY_NS: a file written a moment ago may be written again within one clock
    # tick, its stat data unchanged; its status is not kept, so the second write is seen.
    clear_caches()
    repo.commit("one", **{"a.py": "A = 1\n"})
    repo.write("a.py", "A = 2\n")
    assert _status(repo)[0].changed == {"a.py"}
    repo.write("a.py", "A = 1\n")                # same size, same second
    assert _status(repo) == (gitio.WorktreeStatus(frozenset(), frozenset()), 1)


def test_a_linked_work_tree_or_a_large_tree_is_always_asked(kept: Repo, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    kept.git("worktree", "add", "-q", str(tmp_path / "linked"), "-b", "side")
    assert unchanged.tree_state(tmp_path / "linked") is None
    monkeypatch.setattr(unchanged, "MAX_ENTRIES", 3)
    assert unchanged.tree_state(kept.root) is None
    assert _status(kept)[1] == 1 and _status(kept)[1] == 1



def test_a_tree_whose_index_lists_more_than_the_walk_takes_is_asked_without_a_walk(
        repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    # Told by the index's header: eight files committed, six since deleted from the work tree, so a
    # walk would find it small (4 entries) and keep git's answers; the index says 8, over 5.
    clear_caches()
    monkeypatch.setattr(unchanged, "RACY_NS", 0)
    monkeypatch.setattr(unchanged, "MAX_ENTRIES", 5)
    repo.commit("eight", **{f"m{n}.py": f"M = {n}\n" for n in range(8)})
    for n in range(6):
        (repo.root / f"m{n}.py").unlink()
    assert unchanged._indexed(str(repo.root / ".git" / "index")) == 8
    assert unchanged.tree_state(repo.root) is None
    status, asked = _status(repo)
    assert asked == 1 and status.changed == {f"m{n}.py" for n in range(6)} and _status(repo)[1] == 1
    small = repo.root.parent / "small"
    other = Repo(small)
    other.commit("two", **{"a.py": "A = 1\n", "b.py": "B = 2\n"})
    assert unchanged._indexed(str(small / ".git" / "index")) == 2 and unchanged.tree_state(small) is not None
    assert unchanged._indexed(str(small / "missing-index")) == 0

def test_filters_opted_in_turn_it_off(kept: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEVOUCH_RUN_GIT_FILTERS", "1")
    assert unchanged.git_state(kept.root) is None


def test_a_configuration_that_gains_an_include_is_never_answered_from_memory(kept: Repo, tmp_path: Path) -> None:
    # filter_names keeps no file list for a configuration with includes (and left the old one in
    # place): a change in the included file, or in a file it names, must still reach git.
    kept.write("x.tmp", "x\n")
    _status(kept)
    extra = tmp_path / "extra.cfg"
    excludes = tmp_path / "excludes"
    excludes.write_text("*.log\n")
    extra.write_text(f"[core]\n\texcludesFile = {excludes}\n")
    kept.git("config", "include.path", str(extra))
    assert unchanged.git_state(kept.root) is None
    assert "x.tmp" in _status(kept)[0].untracked
    excludes.write_text("*.tmp\n")
    found, ran = _status(kept)
    assert ran == 1 and "x.tmp" not in found.untracked


def test_a_ref_that_names_another_ref_is_followed(kept: Repo) -> None:
    # HEAD -> refs/heads/main -> refs/heads/other: moving `other` moves HEAD's commit.
    kept.git("branch", "other")
    kept.git("symbolic-ref", "refs/heads/main", "refs/heads/other")
    head, _ = _head(kept)
    tree = kept.git("rev-parse", "HEAD^{tree}").strip()
    two = kept.git("commit-tree", tree, "-p", "HEAD", "-m", "two").strip()
    kept.git("update-ref", "refs/heads/other", two)       # moves HEAD's commit, writes nothing else
    again, ran = _head(kept)
    assert ran == 1 and again is not None and head is not None and again.commit != head.commit


def test_a_file_in_the_git_directory_reached_through_a_link_is_never_kept(kept: Repo, tmp_path: Path) -> None:
    target = tmp_path / "shared-exclude"
    target.write_text("*.log\n")
    exclude = kept.root / ".git" / "info" / "exclude"
    exclude.unlink()
    exclude.symlink_to(target)
    kept.write("x.tmp", "x\n")
    assert "x.tmp" in _status(kept)[0].untracked
    target.write_text("*.tmp\n*.log\n")
    found, ran = _status(kept)
    assert ran == 1 and "x.tmp" not in found.untracked


def test_a_ref_folder_reached_through_a_link_is_never_kept(kept: Repo, tmp_path: Path) -> None:
    # .git/refs/heads a link to a folder elsewhere: a ref moved there changes no stat data here.
    heads = kept.root / ".git" / "refs" / "heads"
    elsewhere = tmp_path / "heads-elsewhere"
    heads.rename(elsewhere)
    heads.symlink_to(elsewhere, target_is_directory=True)
    head, ran = _head(kept)
    assert ran == 1 and head is not None
    again, ran = _head(kept)
    assert ran == 1 and again == head


def test_an_excludes_file_reached_through_a_link_is_seen(kept: Repo, tmp_path: Path) -> None:
    # Dotfile managers link ~/.config/git/ignore or core.excludesFile to a file elsewhere; an
    # edit there leaves the link's own stat data as they were.
    target = tmp_path / "dotfiles-ignore"
    target.write_text("*.log\n")
    link = tmp_path / "excludes-link"
    link.symlink_to(target)
    kept.git("config", "core.excludesFile", str(link))
    kept.write("x.tmp", "x\n")
    assert "x.tmp" in _status(kept)[0].untracked
    target.write_text("*.tmp\n*.log\n")
    found, ran = _status(kept)
    assert ran == 1 and "x.tmp" not in found.untracked


def test_a_configuration_file_that_appears_is_seen(kept: Repo, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # git reads the system's and the user's files where they are; one created after the last
    # answer (an administrator's /etc/gitconfig, GIT_CONFIG_GLOBAL's file) was in no list.
    system = tmp_path / "system-gitconfig"
    monkeypatch.setenv("GIT_CONFIG_SYSTEM", str(system))
    monkeypatch.delenv("GIT_CONFIG_NOSYSTEM", raising=False)
    kept.write("x.tmp", "x\n")
    assert "x.tmp" in _status(kept)[0].untracked
    excludes = tmp_path / "excludes"
    excludes.write_text("*.tmp\n")
    system.write_text(f"[core]\n\texcludesFile = {excludes}\n")
    found, ran = _status(kept)
    assert ran == 1 and "x.tmp" not in found.untracked


def test_an_excludes_file_named_by_a_relative_path_is_seen(kept: Repo) -> None:
    # git reads a relative core.excludesFile from the top of the work tree, not from this
    # process's directory: `../shared-ignore` beside the repository.
    shared = kept.root.parent / "shared-ignore"
    shared.write_text("*.log\n")
    kept.git("config", "core.excludesFile", "../shared-ignore")
    kept.write("x.tmp", "x\n")
    assert "x.tmp" in _status(kept)[0].untracked
    shared.write_text("*.tmp\n*.log\n")
    found, ran = _status(kept)
    assert ran == 1 and "x.tmp" not in found.untracked


def test_one_look_a_call_a_write_inside_it_shows_at_the_next(kept: Repo) -> None:
    with gitio.one_look():
        first, ran = _status(kept)
        assert ran == 1 and first.changed == frozenset()
        kept.write("pkg/b.py", "B = 22\n")
        # The call's look was taken: its answer stands for the whole call, as git's would.
        assert _status(kept) == (first, 0)
        assert unchanged.tree_state(kept.root) is unchanged.tree_state(kept.root)
    with gitio.one_look():
        again, ran = _status(kept)
        assert ran == 1 and again.changed == frozenset({"pkg/b.py"})
    # Outside a scope every look is taken afresh.
    assert unchanged.tree_state(kept.root) is not unchanged.tree_state(kept.root)


def test_a_status_no_look_stands_for_is_asked_once_a_call(kept: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tree over MAX_ENTRIES has no look, so its status is never kept from one call to the next;
    within one call (a search across repositories: the bound, then the overlay), git is asked once,
    from any thread of the call, and a write inside the call shows at the next one."""
    import contextvars
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setattr(unchanged, "MAX_ENTRIES", 3)
    assert unchanged.tree_state(kept.root) is None
    with gitio.one_look():
        first, ran = _status(kept)
        assert ran == 1 and first.changed == frozenset()
        kept.write("pkg/b.py", "B = 22\n")
        context = contextvars.copy_context()
        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(lambda _: context.copy().run(_status, kept), range(4)))
        assert answers == [(first, 0)] * 4
        assert _status(kept, untracked=False)[1] == 1     # another question: asked
    with gitio.one_look():
        again, ran = _status(kept)
        assert ran == 1 and again.changed == frozenset({"pkg/b.py"})
    assert _status(kept)[1] == 1 and _status(kept)[1] == 1     # outside a call's scope: each time
