"""git's ignore rules through `git check-ignore`, on real repositories: every source, tracked
files, probes past symlinks and into submodules, FIFOs that would block git, and no process when
no rule exists."""
from __future__ import annotations

import os
from pathlib import Path

from codevouch.worktree.git import _process
from codevouch.worktree.git.ignores import ignored
from tests.gitrepo import Repo


def test_gitignore_negation_and_odd_names(repo: Repo) -> None:
    repo.commit_files({".gitignore": "secrets/\n*.log\n!keep.log\n", "a.py": "x = 1\n"})
    got = ignored(repo.root, ["secrets/k.py", "new.log", "keep.log", "a.py", ":colon.log", "new\nline.log",
                              "sp ace.log"])
    assert set(got.rules) == {"secrets/k.py", "new.log", ":colon.log", "new\nline.log", "sp ace.log"}
    assert got.rules["secrets/k.py"] == ".gitignore:1: secrets/" and not got.unknown


def test_a_tracked_file_is_never_ignored(repo: Repo) -> None:
    repo.write("build.log", "kept\n")
    repo.git("add", "-f", "build.log")
    repo.commit("force-added", **{".gitignore": "*.log\n"})
    assert ignored(repo.root, ["build.log", "other.log"]).rules.keys() == {"other.log"}


def test_info_exclude_and_core_excludes_file(repo: Repo, tmp_path: Path) -> None:
    repo.commit_files({"a.py": "x = 1\n"})
    (repo.root / ".git" / "info").mkdir(exist_ok=True)
    (repo.root / ".git" / "info" / "exclude").write_text("# comment\nlocal.py\n")
    (tmp_path / "global").write_text(".env\n")
    repo.git("config", "core.excludesFile", str(tmp_path / "global"))
    got = ignored(repo.root, ["local.py", ".env", "a.py"])
    assert set(got.rules) == {"local.py", ".env"}
    assert got.rules[".env"].startswith(str(tmp_path / "global"))


def test_paths_past_a_symlink_or_in_a_submodule_do_not_fail_the_batch(repo: Repo, tmp_path: Path) -> None:
    sub = Repo(tmp_path / "sub")
    sub.commit_files({"z.py": "z = 1\n"})
    repo.commit_files({".gitignore": "secrets/\nlinks/\n", "a.py": "x = 1\n"})
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub.root), "sub")
    repo.commit("submodule")
    (repo.root / "secrets").mkdir()
    (repo.root / "secrets" / "k.py").write_text("k = 1\n")
    os.symlink("secrets", repo.root / "lnk")
    (repo.root / "links").mkdir()
    os.symlink("../a.py", repo.root / "links" / "a.py")
    got = ignored(repo.root, ["sub/z.py", "lnk/k.py", "secrets/k.py", "links/a.py", "a.py"])
    # lnk itself is not ignored (its target is: the validator asks about both); links/ is.
    assert set(got.rules) == {"secrets/k.py", "links/a.py"} and not got.unknown


def test_an_uninitialised_submodule_path_is_answered_by_halves(repo: Repo, tmp_path: Path) -> None:
    sub = Repo(tmp_path / "sub")
    sub.commit_files({"z.py": "z = 1\n"})
    repo.commit_files({".gitignore": "*.log\n"})
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub.root), "sub")
    repo.commit("submodule")
    repo.git("submodule", "deinit", "-q", "-f", "sub")       # an empty directory, no .git in it
    got = ignored(repo.root, ["sub/x.log", "a.log", "b.py", "c.log"])
    assert set(got.rules) == {"a.log", "c.log"}
    assert set(got.unknown) == {"sub/x.log"}                # never assumed not ignored


def test_a_fifo_ignore_file_is_never_opened(repo: Repo) -> None:
    repo.commit_files({"a.py": "x = 1\n"})
    os.mkfifo(repo.root / ".gitignore")
    (repo.root / "b.py").write_text("y = 1\n")
    before = _process.PROCESSES["check-ignore"]
    got = ignored(repo.root, ["a.py", "b.py"])       # git would block on the FIFO for ever
    assert _process.PROCESSES["check-ignore"] == before
    assert set(got.unknown) == {"b.py"} and ".gitignore is not a regular file" in got.unknown["b.py"]


def test_no_rules_no_process(repo: Repo) -> None:
    repo.commit_files({"a.py": "x = 1\n"})        # git's default info/exclude: comments only
    before = _process.PROCESSES["check-ignore"]
    assert ignored(repo.root, ["a.py", "b.log"]).rules == {}
    assert _process.PROCESSES["check-ignore"] == before
    repo.write(".gitignore", "*.log\n")
    assert set(ignored(repo.root, ["a.py", "b.log"]).rules) == {"b.log"}
    assert _process.PROCESSES["check-ignore"] == before + 1


def test_a_fifo_gitignore_in_a_directory_spares_the_rest(repo: Repo) -> None:
    repo.commit_files({".gitignore": "*.log\n", "a.py": "x = 1\n", "deep/b.py": "y = 1\n"})
    os.mkfifo(repo.root / "deep" / ".gitignore")
    (repo.root / "deep" / "new.py").write_text("z = 1\n")
    got = ignored(repo.root, ["deep/b.py", "deep/new.py", "c.log", "a.py"])
    # deep/b.py is tracked (the index says so without opening the FIFO): never ignored.
    assert set(got.rules) == {"c.log"} and set(got.unknown) == {"deep/new.py"}
    assert "deep/.gitignore" in got.unknown["deep/new.py"]
