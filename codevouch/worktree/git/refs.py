"""Which repository, commit and branch a path is in: the top of its work tree, HEAD, branches,
revisions resolved to commit ids, the root commit, the remote's URL, merge bases.

A revision a user gave is refused when it starts with `-` and follows `--end-of-options`, so
git never reads one as an option. A work tree that git's configuration moves away from the
directory holding `.git` (`core.worktree`) is refused (`confine`).
"""
from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from codevouch.errors import DetachedHead, GitError, NoCommits, NotARepository, UnknownRevision
from codevouch.kept import Kept
from codevouch.worktree.git.confine import confined, dot_git_holder
from codevouch.worktree.git.runner import Pending, run
from codevouch.worktree.git.unchanged import git_state


def repo_root(path: Path | str) -> Path:
    """The top of the work tree that contains `path`."""
    p = Path(path)
    if not p.exists():
        raise NotARepository(f"{p} does not exist; pass --repo with the path of a git repository.")
    try:
        out = run(p, "rev-parse", "--show-toplevel")
    except GitError as exc:
        raise _not_a_repository(p, exc) from exc
    return confined(p, _toplevel(out))


def _toplevel(out: bytes) -> Path:
    """`rev-parse --show-toplevel`'s answer as repo_root gives it; NotARepository when it is not
    UTF-8 (the index keeps paths as text: such a path could be neither stored nor looked up)."""
    top = out.decode("utf-8", "surrogateescape").strip()
    if not _is_text(top):
        raise NotARepository(f"the repository's path {os.fsencode(top)!r} is not UTF-8 text, which codevouch "
                             "needs to keep it in the index; move or rename it to a UTF-8 path, and retry.")
    return Path(top).resolve()


def _is_text(decoded: str) -> bool:
    """Whether a string decoded with surrogateescape was UTF-8 throughout."""
    try:
        decoded.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def _not_a_repository(p: Path, exc: GitError) -> NotARepository:
    """Why `rev-parse --show-toplevel` failed in `p`, said for a user: bare, or no repository."""
    loop = _INCLUDE_LOOP.search(exc.stderr or "")
    if loop is not None:
        said = _one_line(" ".join(loop.group(0).split()))
        return NotARepository(
            f"git cannot read the configuration of the repository at {p}: an `[include] path` includes "
            f"itself ({said}); remove the include that leads back, and retry.",
            exc.cmd, exc.returncode, exc.stderr)
    config = _CONFIG_ERROR.search(exc.stderr or "")
    if config is not None:
        return NotARepository(
            f"git cannot read the configuration of the repository at {p} ({_one_line(config.group(0))}); "
            "fix or remove that line of the file git names, and retry.", exc.cmd, exc.returncode, exc.stderr)
    bare = run(p, "rev-parse", "--is-bare-repository", ok_codes=(0, 128)).strip() == b"true"
    if bare:
        return NotARepository(
            f"{p} is a bare git repository: it has no working tree to index or check against; "
            "clone it, or add a working tree with `git worktree add`, and pass that path.",
            exc.cmd, exc.returncode, exc.stderr)
    return NotARepository(
        f"{p} is not inside a git repository; pass --repo with the path of one "
        "(or run `git init` and commit first).", exc.cmd, exc.returncode, exc.stderr)


# git's words for a configuration file it cannot parse (a repository's own .git/config among them).
# git's words for an include that leads back to a file it is reading (git stops at depth 10).
_INCLUDE_LOOP = re.compile(r"exceeded maximum include depth[^\n]*(?:\n\s+[^\n]+)?")
_CONFIG_ERROR = re.compile(r"bad config line \d+ in [^\n]*|bad (numeric )?config[^\n]*|unable to parse[^\n]*config[^\n]*")


def _one_line(text: str) -> str:
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)[:300]


class PendingRoot:
    """repo_root started in the background: `result()` gives what it returns, and raises what it
    raises."""

    def __init__(self, path: Path | str) -> None:
        self._path = Path(path)
        self._pending = Pending(self._path, "rev-parse", "--show-toplevel") if self._path.is_dir() else None

    def result(self) -> Path:
        if self._pending is None:      # missing, or a file: repo_root says which
            return repo_root(self._path)
        try:
            out = self._pending.result()
        except GitError as exc:
            raise _not_a_repository(self._path, exc) from exc
        return confined(self._path, _toplevel(out))


@dataclass(frozen=True)
class HeadState:
    root: Path           # the work tree's top, resolved as repo_root() resolves it
    commit: str          # HEAD's commit
    branch: str | None   # HEAD's branch; None when HEAD is detached


def head_state(path: Path | str) -> HeadState | None:
    """repo_root, head_commit and HEAD's branch in one git process (a search asks all three
    each time; one process instead of four saves ~30 ms on a busy machine). None when any of
    them fails (not a repository, no commits yet, bare): the separate calls say which.

    For the top of a work tree, the answer is kept for the process while HEAD, the ref it names,
    packed-refs and the configuration are unchanged (unchanged.git_state): a warm call over many
    repositories starts no process for those nobody touched."""
    where = os.path.abspath(path)
    seen = git_state(where)
    key = (where, os.path.realpath(where))
    found = _HEADS.get(key, seen)
    if found is None:
        found = _head_state(path)
        if found is not None:
            _HEADS.put(key, seen, found)
    return found


_HEADS: Kept[tuple[str, str], HeadState] = Kept("codevouch.worktree.gitio.heads")


def _head_state(path: Path | str) -> HeadState | None:
    try:
        out = run(path, "rev-parse", "--show-toplevel", "HEAD", "--symbolic-full-name", "HEAD")
    except GitError:
        return None
    parts = out.decode("utf-8", "surrogateescape").rstrip("\n").rsplit("\n", 2)  # the top may hold a newline
    if len(parts) != 3 or not _is_text(parts[0]) or not _is_text(parts[2]):
        return None     # the separate calls say why (a path or a branch name that is not UTF-8)
    root, commit, ref = parts
    branch = ref[len("refs/heads/"):] if ref.startswith("refs/heads/") else None
    top = Path(root).resolve()
    if dot_git_holder(Path(path)) != top:
        return None          # a moved work tree: repo_root, which the caller asks next, refuses it
    return HeadState(top, commit, branch)


def head_commit(repo: Path) -> str | None:
    """HEAD's commit, or None for a repository with no commits yet."""
    out = run(repo, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", ok_codes=(0, 1))
    return out.decode().strip() or None


def check_branch_name(repo: Path, name: str) -> None:
    """GitError when a branch's name (read with surrogateescape) is not UTF-8 text: the index
    keeps branch names as text."""
    if not _is_text(name):
        raise GitError(f"the branch name {os.fsencode(name)!r} is not UTF-8 text, which codevouch needs to keep "
                       f"it in the index; rename it (`git -C {repo} branch -m NEW`) or build other branches "
                       "(--branch NAME, or --exclude-branch for --all-branches).")


def current_branch(repo: Path) -> str:
    out = run(repo, "symbolic-ref", "--quiet", "--short", "HEAD", ok_codes=(0, 1)).decode(
        "utf-8", "surrogateescape").strip()
    check_branch_name(repo, out)
    if not out:
        raise DetachedHead(
            f"HEAD is detached in {repo}; name the branch to use with --branch NAME.")
    if head_commit(repo) is None:
        raise NoCommits(f"{repo} has no commits yet; commit something before indexing it.")
    return out


def resolve_commit(repo: Path, rev: str) -> str:
    if rev.startswith("-"):
        raise UnknownRevision(f"{rev!r} is not a branch or commit name.")
    out = run(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}",
              ok_codes=(0, 1)).decode().strip()
    if not out:
        if head_commit(repo) is None:
            raise NoCommits(f"{repo} has no commits yet; commit something before indexing it.")
        raise UnknownRevision(
            f"{rev!r} is not a branch or commit in {repo}; `git branch` lists the branches.")
    return out


def branch_commit(repo: Path, branch: str) -> str:
    """The commit a branch points at: a local branch first, else any rev git resolves."""
    local = run(repo, "rev-parse", "--verify", "--quiet", "--end-of-options",
                f"refs/heads/{branch}^{{commit}}", ok_codes=(0, 1)).decode().strip()
    return local or resolve_commit(repo, branch)


def local_branches(repo: Path, newest_first: bool = False) -> list[str]:
    """Every local branch, by name; `newest_first`: by the date of its commit, latest first (then
    by name), to take the most recently committed ones when there are too many."""
    order = ("--sort=refname", "--sort=-committerdate") if newest_first else ()
    out = run(repo, "for-each-ref", *order, "--format=%(refname:short)", "refs/heads/")
    return [line for line in out.decode("utf-8", "surrogateescape").splitlines() if line]


_FULL_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")   # a commit id in full (SHA-1 or SHA-256): no ref, no option


def root_commit(repo: Path, head: str | None = None) -> str:
    """The root commit reached from HEAD (or the commit `head`, a full hex id) by first parents:
    the same in every clone of the repository (a shallow clone's boundary stands in for it),
    whatever its directory."""
    start = head if head is not None and _FULL_ID.fullmatch(head) else "HEAD"
    out = run(repo, "rev-list", "--first-parent", "--max-parents=0", "--end-of-options", start,
              ok_codes=(0, 128)).decode().split()
    if not out:
        raise NoCommits(f"{repo} has no commits yet; commit something before indexing it.")
    return out[-1]


def is_root(repo: Path, commit: str) -> bool:
    """Whether `commit` (a full hex id) is a commit of `repo` that git sees with no parents: a root,
    or a shallow clone's boundary. One process, whatever the history's length."""
    if not _FULL_ID.fullmatch(commit):
        return False
    out = run(repo, "rev-list", "--no-walk", "--max-parents=0", "--end-of-options", commit, ok_codes=(0, 128))
    return out.decode().split() == [commit]


def has_commit(repo: Path, commit: str) -> bool:
    """Whether `commit` (a full hex id) is a commit of `repo` whose tree is there too: an object of
    its own store (alternates are refused before git runs), reachable or not. One process."""
    return has_any_commit(repo, (commit,))


def has_any_commit(repo: Path, commits: Sequence[str]) -> bool:
    """Whether any of `commits` (full hex ids; others are never held) is a commit of `repo` whose
    tree is there too, as `has_commit` asks it: one process for all of them."""
    wanted = [c for c in commits if _FULL_ID.fullmatch(c)]
    if not wanted:
        return False
    out = run(repo, "cat-file", "--batch-check=%(objecttype)",
              stdin="".join(f"{c}^{{commit}}^{{tree}}\n" for c in wanted).encode())
    return b"tree" in out.splitlines()


# How far back `first_parent_samples` looks: the commits 1, 2, 4, ... SAMPLE_REACH steps back.
SAMPLE_REACH = 1024


def first_parent_samples(repo: Path, commit: str) -> tuple[str, ...]:
    """The commits 1, 2, 4, 8, ... SAMPLE_REACH first-parent steps before `commit` (at most 11), never
    the end of that chain (the root commit, or a shallow clone's boundary): a clone that holds any
    of them shares the history that led to `commit`, not merely its first commit. One process."""
    if not _FULL_ID.fullmatch(commit):
        return ()
    # One commit past the reach tells whether the chain ends inside it (its last commit: no parent here).
    out = run(repo, "rev-list", "--first-parent", f"--max-count={SAMPLE_REACH + 2}", "--end-of-options", commit)
    chain = out.decode().split()
    if len(chain) <= SAMPLE_REACH + 1:
        chain = chain[:-1]
    return tuple(chain[1 << k] for k in range(SAMPLE_REACH.bit_length()) if (1 << k) < len(chain))


def remote_url(repo: Path) -> str | None:
    """The `origin` remote's URL (else the first remote's), a label for people; None without one."""
    # A cloned repository's config may hold any bytes: a name goes back to git as it came
    # (surrogateescape), the URL is a label, stored and printed ("replace").
    names = run(repo, "remote").decode("utf-8", "surrogateescape").split()
    if not names:
        return None
    name = "origin" if "origin" in names else names[0]
    out = run(repo, "remote", "get-url", "--", name, ok_codes=(0, 2, 128)).decode("utf-8", "replace").strip()
    # A URL may carry a token (https://user:token@host/...): a label never keeps it.
    return re.sub(r"^([a-z][a-z0-9+.-]*://)[^/@]*@", r"\1", out) or None


def merge_base(repo: Path, a: str, b: str) -> str:
    """The best common ancestor of two commits (UnknownRevision when they share none)."""
    out = run(repo, "merge-base", "--end-of-options", resolve_commit(repo, a), resolve_commit(repo, b),
              ok_codes=(0, 1)).decode().strip()
    if not out:
        raise UnknownRevision(f"{a!r} and {b!r} have no common ancestor.")
    return out
