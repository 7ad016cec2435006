"""codevouch/worktree/gitreads.py: the files git reads before it answers, checked before git
starts. Real repositories with real FIFOs, /dev/zero links and sparse files where git looks:
each is refused by name; a clean repository, and odd files git never reads, pass."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from codevouch.errors import ConfigError
from codevouch.worktree.gitreads import GIT_FILE_CAP, config_entries, first_refused, guard, worktree_top
from tests.gitrepo import Repo, plant_special


def plant(path: Path, kind: str) -> None:
    plant_special(path, kind, GIT_FILE_CAP + 1)


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path / "repo")
    repo.commit(**{"a.py": "def a():\n    return 1\n", "pkg/b.py": "B = 2\n", ".gitignore": "*.pyc\n"})
    return repo


WORDS = {"fifo": "a FIFO", "zero": "a character device", "sparse": "over the 16777216-byte cap"}


def test_a_clean_repository_passes(repo: Repo) -> None:
    guard(repo.root)
    guard(repo.root / "pkg")
    assert first_refused(repo.root) is None


@pytest.mark.parametrize("kind", ["fifo", "zero", "sparse"])
@pytest.mark.parametrize("where", [".gitignore", ".gitattributes", "pkg/.gitignore", "new/deep/.gitattributes",
                                   ".git/info/exclude", ".git/info/attributes"])
def test_a_file_git_reads_is_refused_by_name(repo: Repo, kind: str, where: str) -> None:
    plant(repo.root / where, kind)
    with pytest.raises(ConfigError) as caught:
        guard(repo.root / "pkg")            # from anywhere in the work tree
    message = str(caught.value)
    assert message.startswith(where + " ") and WORDS[kind] in message and "remove it" in message, message


@pytest.mark.parametrize("kind", ["fifo", "zero", "sparse"])
@pytest.mark.parametrize("key, value", [
    ("include.path", "../inc"),                              # relative to the including file
    ("include.path", "{root}/inc"),
    ("includeIf.gitdir:/.path", "{root}/inc"),               # whatever the condition
    ("core.excludesFile", "inc"),                            # relative to the work tree
    ("core.attributesFile", "{root}/inc"),
])
def test_a_file_the_config_names_is_refused(repo: Repo, kind: str, key: str, value: str) -> None:
    repo.git("config", key, value.format(root=repo.root))
    plant(repo.root / "inc", kind)
    with pytest.raises(ConfigError, match=r"^inc \(") as caught:
        guard(repo.root)
    assert WORDS[kind] in str(caught.value)


def test_includes_are_followed_to_the_file_they_include(repo: Repo, tmp_path: Path) -> None:
    (tmp_path / "one.cfg").write_text('[include]\n\tpath = "two.cfg" ; a comment\n')
    (tmp_path / "two.cfg").write_text("[include] path = three.cfg\n")
    repo.git("config", "include.path", str(tmp_path / "one.cfg"))
    guard(repo.root)                                         # three.cfg is missing: git skips it too
    os.mkfifo(tmp_path / "three.cfg")
    with pytest.raises(ConfigError, match=r"three\.cfg \(a file .*two\.cfg includes\) is a FIFO"):
        guard(repo.root)


def test_an_include_loop_ends(repo: Repo, tmp_path: Path) -> None:
    (tmp_path / "loop.cfg").write_text(f"[include]\n\tpath = {tmp_path / 'loop.cfg'}\n")
    repo.git("config", "include.path", str(tmp_path / "loop.cfg"))
    guard(repo.root)


@pytest.mark.parametrize("name", ["config", "config.worktree"])
def test_the_repository_config_itself_is_checked(repo: Repo, name: str) -> None:
    plant(repo.root / ".git" / name, "fifo")
    with pytest.raises(ConfigError, match=rf"^\.git/{name} \(the repository's {name}\) is a FIFO"):
        guard(repo.root)


def test_a_linked_worktree_is_checked_through_its_git_file(repo: Repo, tmp_path: Path) -> None:
    repo.git("worktree", "add", "-q", str(tmp_path / "wt"))
    guard(tmp_path / "wt")
    plant(tmp_path / "wt" / "pkg" / ".gitattributes", "fifo")
    with pytest.raises(ConfigError, match=r"^pkg/\.gitattributes "):
        guard(tmp_path / "wt")
    os.unlink(tmp_path / "wt" / "pkg" / ".gitattributes")
    plant(repo.root / ".git" / "info" / "exclude", "zero")     # the common dir's, read for the worktree too
    with pytest.raises(ConfigError, match="info/exclude"):
        guard(tmp_path / "wt")


def test_files_git_never_reads_pass(repo: Repo, tmp_path: Path) -> None:
    # A nested repository's .gitignore, a FIFO of another name, a .gitignore behind a symlinked
    # directory, a symlink .gitignore to a regular file: git reads none of them as a .gitignore
    # of this repository (or reads a regular file).
    nested = Repo(repo.root / "vendor" / "nested")
    plant(nested.root / ".gitignore", "fifo")
    plant(repo.root / "pipe.py", "fifo")
    plant(tmp_path / "elsewhere" / ".gitignore", "fifo")
    os.symlink(tmp_path / "elsewhere", repo.root / "linked")
    os.symlink("a.py", repo.root / "pkg" / ".gitattributes")
    (repo.root / "new" / ".gitignore").mkdir(parents=True)     # git's read of a directory fails at once
    guard(repo.root)


def test_no_repository_is_left_to_git(tmp_path: Path) -> None:
    plant(tmp_path / ".gitignore", "fifo")         # no .git here: git reads nothing of this directory
    assert worktree_top(tmp_path / "missing") is None
    guard(tmp_path / "missing")


def test_config_entries_reads_the_forms_git_writes() -> None:
    text = ('[core]\n\texcludesFile = "~/ignore # not a comment"\n[includeIf "gitdir:~/w/"]\n\tpath = a\\"b\n'
            '[include.old]\npath=c ; comment\n[Include] PATH = d\n# path = e\n[user]\n\tname = x\n')
    assert list(config_entries(text)) == [
        ("core", "excludesfile", "~/ignore # not a comment"), ("includeif", "path", 'a"b'),
        ("include", "path", "c"), ("include", "path", "d"), ("user", "name", "x")]


def test_a_kept_listing_still_sees_a_new_fifo_and_a_grown_file(repo: Repo) -> None:
    # The walk keeps each directory's listing while its mtime stands still; age them past the
    # racy window so they are kept, then change the tree the two ways a listing could miss.
    old = 1_000_000_000
    for directory in (repo.root, repo.root / "pkg"):
        os.utime(directory, (old, old))
    guard(repo.root)
    guard(repo.root)                                # from the kept listings
    plant(repo.root / "pkg" / ".gitignore", "fifo")  # a new entry moves pkg's mtime
    with pytest.raises(ConfigError, match=r"^pkg/\.gitignore .* a FIFO"):
        guard(repo.root)
    os.unlink(repo.root / "pkg" / ".gitignore")
    os.utime(repo.root / "pkg", (old, old))
    guard(repo.root)
    with open(repo.root / ".gitignore", "ab") as handle:   # grows in place: no directory changes
        handle.truncate(GIT_FILE_CAP + 1)
    os.utime(repo.root, (old, old))
    with pytest.raises(ConfigError, match=r"^\.gitignore .* over the"):
        guard(repo.root)


def test_a_git_directory_reached_through_a_symlink_is_read_as_one(repo: Repo, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    os.rename(repo.root / ".git", tmp_path / "moved.git")
    os.symlink(tmp_path / "moved.git", repo.root / ".git")
    with pytest.raises(ConfigError, match="CODEVOUCH_ALLOW_OUTSIDE_GIT_DIR"):
        guard(repo.root)          # a git directory elsewhere: refused unless the user allows it
    monkeypatch.setenv("CODEVOUCH_ALLOW_OUTSIDE_GIT_DIR", "1")
    guard(repo.root)
    plant(tmp_path / "moved.git" / "info" / "exclude", "fifo")
    with pytest.raises(ConfigError, match="info/exclude"):
        guard(repo.root)


def test_a_directory_the_top_gitignore_ignores_is_not_walked(repo: Repo) -> None:
    """git never walks into `.venv/` when the top .gitignore ignores it; the guard walked its
    thousands of directories on every call (0.6 s of a cold CLI call in this repository)."""
    repo.write(".gitignore", "*.pyc\n.venv/\n")
    plant(repo.root / ".venv" / "lib" / ".gitignore", "fifo")    # git would never open it
    assert first_refused(repo.root) is None
    # Where a deeper .gitignore may re-include what the top one ignores, the walk goes on.
    repo.write("pkg/.gitignore", "!.venv/\n")
    plant(repo.root / "pkg" / ".venv" / ".gitattributes", "fifo")
    found = first_refused(repo.root)
    assert found is not None and found.path == repo.root / "pkg" / ".venv" / ".gitattributes"


@pytest.mark.parametrize("name", ["HEAD", "index", "packed-refs", "shallow", "info/grafts",
                                  "objects/info/alternates", "refs/heads/main", ".mailmap"])
@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_fifo_or_device_among_the_files_git_opens_on_every_command_is_refused(repo: Repo, name: str,
                                                                              kind: str) -> None:
    """Each hung build, search, validate and review (a link to /dev/zero as the branch's ref drove
    git to 18 GB); a large index or packed-refs is no problem (read in parts: no size cap)."""
    head = repo.git("symbolic-ref", "HEAD").strip()
    path = repo.root / name if name == ".mailmap" else repo.root / ".git" / name.replace("refs/heads/main", head)
    if path.exists():
        path.unlink()
    plant(path, kind)
    with pytest.raises(ConfigError, match=WORDS[kind]):
        guard(repo.root)


def test_a_large_index_is_not_refused(repo: Repo) -> None:
    index = repo.root / ".git" / "index"
    with index.open("ab") as grown:
        grown.truncate(GIT_FILE_CAP + 1)     # sparse: larger than any file the guard caps
    guard(repo.root)


@pytest.fixture
def looked(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> Repo:
    """A repository whose files may be kept under a look (no write counts as too recent)."""
    from codevouch import clear_caches
    from codevouch.worktree.git import unchanged

    clear_caches()
    monkeypatch.setattr(unchanged, "RACY_NS", 0)
    return repo


def _guard_in_a_call(path: Path) -> None:
    from codevouch.worktree import gitio

    with gitio.one_look():
        guard(path)


def test_a_pass_is_kept_only_inside_one_look_calls_while_nothing_changed(looked: Repo,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import codevouch.worktree.gitreads as gitreads
    from codevouch.worktree.git.unchanged import git_state

    reads: list[Path] = []
    read = gitreads.first_refused
    monkeypatch.setattr(gitreads, "first_refused", lambda top: reads.append(top) or read(top))
    _guard_in_a_call(looked.root)
    assert len(reads) == 1
    git_state(looked.root)          # the configuration's list read, as the search's look at HEAD reads it
    _guard_in_a_call(looked.root)
    _guard_in_a_call(looked.root / "pkg")
    assert len(reads) == 2                        # the third call's look saw what the second's saw
    guard(looked.root)
    assert len(reads) == 3                        # no look outside a call's scope: read again
    looked.write("pkg/c.py", "C = 3\n")
    _guard_in_a_call(looked.root)
    assert len(reads) == 4


def _linked_ignore(repo: Repo, tmp_path: Path) -> Path:
    target = tmp_path / "shared-ignore"
    target.write_text("*.log\n")
    os.unlink(repo.root / ".gitignore")
    os.symlink(target, repo.root / ".gitignore")
    return target


def _alternates_through_a_link(repo: Repo, tmp_path: Path) -> Path:
    link = tmp_path / "via"
    os.symlink(repo.root, link)                   # its own objects, reached through a link outside
    (repo.root / ".git" / "objects" / "info" / "alternates").write_text(f"{link}/.git/objects\n")
    return link


@pytest.mark.parametrize("hazard", ["new deep fifo", "exclude grown", "linked gitignore's target",
                                    "alternates re-pointed", "excludesFile's target"])
def test_a_kept_pass_never_hides_a_hazard_planted_after_it(looked: Repo, tmp_path: Path, hazard: str) -> None:
    other = Repo(tmp_path / "other")
    other.commit(**{"o.py": "O = 1\n"})
    if hazard == "linked gitignore's target":
        target = _linked_ignore(looked, tmp_path)
    elif hazard == "alternates re-pointed":
        link = _alternates_through_a_link(looked, tmp_path)
    elif hazard == "excludesFile's target":
        (tmp_path / "excludes-a").write_text("*.tmp\n")
        os.symlink(tmp_path / "excludes-a", tmp_path / "excludes")
        looked.git("config", "core.excludesFile", str(tmp_path / "excludes"))
    _guard_in_a_call(looked.root)
    _guard_in_a_call(looked.root)
    if hazard == "new deep fifo":
        plant(looked.root / "pkg" / "deep" / ".gitignore", "fifo")
    elif hazard == "exclude grown":
        with open(looked.root / ".git" / "info" / "exclude", "ab") as handle:
            handle.truncate(GIT_FILE_CAP + 1)
    elif hazard == "linked gitignore's target":
        plant(target, "fifo")                      # the link's own stat data do not move
    elif hazard == "alternates re-pointed":
        os.unlink(link)
        os.symlink(other.root, link)               # nothing inside the repository moves
    else:
        plant(tmp_path / "excludes-b", "fifo")
        os.replace(tmp_path / "excludes", tmp_path / "old-link")
        os.symlink(tmp_path / "excludes-b", tmp_path / "excludes")
    with pytest.raises(ConfigError):
        _guard_in_a_call(looked.root)


@pytest.mark.parametrize("first", ["kept before", "never looked at"])
def test_a_guard_in_a_call_starts_no_git_before_its_checks(looked: Repo, first: str) -> None:
    # The look a kept pass is compared with needs the configuration's file list; reading it again
    # runs `git config`, which would open a FIFO planted as .git/config before the guard saw it.
    from codevouch.worktree import gitio
    from codevouch.worktree.git.unchanged import git_state

    if first == "kept before":
        git_state(looked.root)                        # the list read, as a search's HEAD look reads it
        _guard_in_a_call(looked.root)
        _guard_in_a_call(looked.root)
    plant(looked.root / ".git" / "config", "fifo")
    before = sum(gitio.PROCESSES.values())
    with pytest.raises(ConfigError, match="config"):
        _guard_in_a_call(looked.root)
    assert sum(gitio.PROCESSES.values()) == before
