"""A repository is the same one only when its history says so, not its root commit alone.

A private project P is indexed. A fork F shares only P's first commit (its own history after
it, P's indexed commit not in it) and was never built. Searched with P's index directory, F got
exit 0 and hits naming P's files, symbols, commits and blob ids, and its own files were not
searched; `index status` listed P's branch as F's. Now F is not indexed (exit 5), while a second
clone of P, and a clone made after P moved on, are served from P's entry as before. A build of F
after P's directory moved away wrote over P's entry, which kept P's files as F's history.

A clone made before P's last commits (a team reader behind the nightly build) lacks the indexed
commit but holds older commits of the same history: it is served when it holds one of the
ancestors the build sampled (never the root commit); an entry built before the samples were kept
asks for its indexed commit, as it did."""
from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.clihelp import FAKE, cv
from tests.gitrepo import Repo

README = "# shop\n"
PRIVATE = "def cancel_private_order(order):\n    return 'p-secret-cancel'\n"
FORKED = "def cancel_forked_order(order):\n    return order.cancel()\n"


def _clone(source: Path | str, path: Path, *options: str) -> Repo:
    subprocess.run(["git", "clone", "-q", *options, str(source), str(path)], check=True, capture_output=True)
    return Repo(path)


@pytest.fixture
def project(tmp_path: Path) -> tuple[Repo, Path]:
    """P: a first commit, then its private code; indexed at that second commit."""
    p = Repo(tmp_path / "p")
    p.commit_files({"README.md": README})
    p.git("branch", "first")                           # where a fork starts from
    p.commit_files({"shop/private.py": PRIVATE})
    index = tmp_path / "index"
    built = cv("index", "build", *FAKE, cwd=p.root, index=index)
    assert built.returncode == 0, built.stderr
    return p, index


def _fork(p: Repo, path: Path) -> Repo:
    """A repository that shares only P's first commit: cloned from that commit alone (not a
    local clone, which would share every object of P), then its own history."""
    fork = _clone(f"file://{p.root}", path, "--no-local", "--single-branch", "--branch", "first")
    fork.git("checkout", "-q", "-b", "main")
    fork.git("remote", "remove", "origin")
    fork.commit_files({"shop/forked.py": FORKED})
    assert fork.git("rev-list", "--max-parents=0", "HEAD") == p.git("rev-list", "--max-parents=0", "HEAD")
    assert subprocess.run(["git", "-C", str(fork.root), "cat-file", "-e", p.head()], capture_output=True).returncode
    return fork


def test_a_fork_that_shares_only_the_root_commit_is_not_indexed(project: tuple[Repo, Path], tmp_path: Path) -> None:
    p, index = project
    fork = _fork(p, tmp_path / "fork")
    for args in (["search", "cancel order"], ["search", "cancel order", "--json", "--include-history"],
                 ["context", "cancel order"]):
        out = cv(*args, cwd=fork.root, index=index)
        said = out.stdout + out.stderr
        assert out.returncode == 5, (args, out.returncode, said)
        assert "private" not in said and p.head()[:7] not in said and str(p.root) not in said, said
        assert "does not have" in out.stderr and "git fetch" in out.stderr, out.stderr
    # The fork's own status lists no branch of P's (a status of the whole index lists every entry).
    status = cv("index", "status", "--json", "--repo", str(fork.root), index=index)
    assert status.returncode == 0 and json.loads(status.stdout)["branches"] == [], status.stdout


def test_clones_of_the_same_repository_are_served_from_its_entry(project: tuple[Repo, Path], tmp_path: Path) -> None:
    p, index = project
    second = _clone(p.root, tmp_path / "second")
    p.commit_files({"shop/later.py": "def later():\n    return 1\n"})
    later = _clone(p.root, tmp_path / "later")        # made after new commits: the indexed one is its ancestor
    for clone in (second, later):
        out = cv("search", "cancel order", "--json", cwd=clone.root, index=index)
        assert out.returncode == 0, out.stderr
        assert "shop/private.py" in {hit["path"] for hit in json.loads(out.stdout)}


def test_a_fork_built_after_the_project_moved_gets_an_entry_of_its_own(project: tuple[Repo, Path],
                                                                       tmp_path: Path) -> None:
    # The project's directory is gone from its path: a clone of it may take its entry over, a
    # fork may not (P's files would stay in the fork's entry as deleted history).
    p, index = project
    fork = _fork(p, tmp_path / "fork")
    p.root.rename(tmp_path / "p-moved")
    built = cv("index", "build", *FAKE, cwd=fork.root, index=index)
    assert built.returncode == 0, built.stderr
    out = cv("search", "cancel order", "--json", "--include-history", cwd=fork.root, index=index)
    assert out.returncode == 0, out.stderr
    paths = {hit["path"] for hit in json.loads(out.stdout)}
    assert "shop/forked.py" in paths and "shop/private.py" not in paths, paths
    moved = cv("search", "cancel order", "--json", cwd=tmp_path / "p-moved", index=index)
    assert moved.returncode == 0 and "shop/private.py" in moved.stdout, moved.stderr


@pytest.fixture
def longer(tmp_path: Path) -> tuple[Repo, Repo, Path]:
    """P with seven commits (the root, then a, b, c with its private code, then d, e, f), a clone
    made at c (three commits behind), and P indexed at f. From f the build samples e, d and b
    (1, 2 and 4 steps back); 6 steps back is the root, never sampled. The clone holds b."""
    p = Repo(tmp_path / "p")
    p.commit_files({"README.md": README})
    p.git("branch", "first")
    for name in ("a", "b"):
        p.commit_files({f"shop/{name}.py": f"{name.upper()} = 1\n"})
    p.commit_files({"shop/private.py": PRIVATE})
    behind = _clone(p.root, tmp_path / "behind")
    for name in ("d", "e", "f"):
        p.commit_files({f"shop/{name}.py": f"{name.upper()} = 1\n"})
    index = tmp_path / "index"
    built = cv("index", "build", *FAKE, cwd=p.root, index=index)
    assert built.returncode == 0, built.stderr
    assert subprocess.run(["git", "-C", str(behind.root), "cat-file", "-e", p.head()], capture_output=True).returncode
    return p, behind, index


def _served(clone: Repo, index: Path) -> bool:
    out = cv("search", "cancel order", "--json", cwd=clone.root, index=index)
    if out.returncode == 5:
        assert "does not have" in out.stderr and "git fetch" in out.stderr, out.stderr
        return False
    assert out.returncode == 0, out.stderr
    return "shop/private.py" in {hit["path"] for hit in json.loads(out.stdout)}


def test_a_clone_behind_the_build_is_served_and_a_fork_still_is_not(longer: tuple[Repo, Repo, Path],
                                                                    tmp_path: Path) -> None:
    p, behind, index = longer
    assert _served(behind, index)
    status = cv("index", "status", "--json", "--repo", str(behind.root), index=index)
    assert status.returncode == 0 and [b["branch"] for b in json.loads(status.stdout)["branches"]] == ["main"]
    assert not _served(_fork(p, tmp_path / "fork"), index)


def test_an_entry_built_without_samples_asks_for_its_indexed_commit(longer: tuple[Repo, Repo, Path]) -> None:
    # The entry as a release before the samples left it: no `ancestors` column, the step not applied.
    p, behind, index = longer
    db = sqlite3.connect(index / "state.sqlite")
    with db:
        db.execute("ALTER TABLE branches DROP COLUMN ancestors")
        db.execute("DELETE FROM _migrations WHERE name = 'm007_branches_keep_sampled_ancestors'")
    db.close()
    assert not _served(behind, index)                   # the upgrade keeps today's rule: exit 5, fetch
    assert _served(_clone(p.root, behind.root.parent / "second"), index)
    # The next build, at the same commit, reads no file again and samples the history.
    built = cv("index", "build", *FAKE, cwd=p.root, index=index)
    assert built.returncode == 0 and "(0 files read)" in built.stdout, (built.stdout, built.stderr)
    assert _served(behind, index)
