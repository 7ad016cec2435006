"""All git I/O of codevouch: small typed functions over plumbing commands.

Bulk work goes through one process per call (`ls-tree -r -z`, `diff --raw -z`,
`cat-file --batch`, `hash-object --stdin-paths`), never one process per file: a git
process costs ~4 ms here, so per-file calls dominate anything else we do.
Arguments are passed as lists (never through a shell) and paths that come from users
or snippets are fed on stdin or after `--`, so they cannot be read as options.
"""
from __future__ import annotations

import atexit
import os
import re
import shutil
import stat as stat_module
import subprocess
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codevouch import caches
from codevouch.errors import (
    CommitGone,
    DetachedHead,
    FilterFailed,
    GitError,
    NoCommits,
    NotARepository,
    UnknownRevision,
)

_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_OBJECT_TYPES = ("commit", "tree", "blob", "tag")


# Variables that tell git which repository, index or object store to use. Git sets them for
# hooks (GIT_DIR, GIT_INDEX_FILE ...), and a user may have them exported: left in place they
# would make `git -C <repo>` read a different repository than the one we were asked about.
REPO_LOCATING_VARS = (
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE",
)


def no_git_env(environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` without the repository-locating variables (pre-commit's `no_git_env`, narrowed
    to those: configuration such as GIT_CONFIG_GLOBAL or GIT_SSH_COMMAND is the user's and stays)."""
    return {k: v for k, v in environ.items() if k not in REPO_LOCATING_VARS}


# --- no program from a repository's configuration runs ------------------------------------------
#
# A repository's own config (.git/config, config.worktree, files it includes) can name programs
# that git runs as a side effect of read-only commands: core.fsmonitor (status, diff, ls-files),
# filter.<x>.clean / smudge / process (hash-object, status, diff of the working tree), hooks
# (post-index-change when an index is written, our temporary read-tree index included),
# diff.<x>.textconv and diff.<x>.command (diff, log -p, log -S, grep), core.pager, gpg.program
# (log.showSignature), credential helpers. codevouch reads repositories it did not write, so every
# git process it starts turns all of them off (README, "Security"): the `-c` settings below, the
# filter drivers named in the configuration (filter_overrides), `--no-pager`,
# `--no-optional-locks`, and `--no-textconv --no-ext-diff` on every command that diffs.

# Settings given to every git process (`-c` beats every configuration file).
SAFE_CONFIG: tuple[str, ...] = (
    "core.fsmonitor=false",         # no fsmonitor hook or daemon
    "core.hooksPath=/dev/null",     # no hook of any name (a directory that holds nothing)
    "credential.helper=",           # an empty value clears the list of helpers
    "core.pager=cat",               # --no-pager too; belt and braces
    "log.showSignature=false",      # no gpg.program from `log` / `show`
    "gc.auto=0", "maintenance.auto=false",     # no background work started by git itself
    "core.untrackedCache=false",    # nothing to write back into the index
    "diff.autoRefreshIndex=false",  # `git diff` rewrites .git/index (whatever --no-optional-locks
                                    # says, git 2.39) when it met files whose stat data was stale
)

# Opt-in, from the environment only (never from a repository): run the filter drivers that the
# configuration names (git-lfs, git-crypt ...), so hashes of working-tree files match what `git
# add` would store. Off by default: a filter is a program the repository's config chose.
RUN_FILTERS_VAR = "CODEVOUCH_RUN_GIT_FILTERS"

# Environment variables that make git run a program, dropped; the pager ones are set to `cat`.
_PROGRAM_VARS = ("GIT_EXTERNAL_DIFF", "GIT_PAGER", "PAGER", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_EDITOR")


def run_filters() -> bool:
    """Whether the user opted in (CODEVOUCH_RUN_GIT_FILTERS=1) to running configured filters."""
    return os.environ.get(RUN_FILTERS_VAR, "").strip().lower() in ("1", "true", "yes", "on")


def _env() -> dict[str, str]:
    # Read per call, not at import, so a changed environment (HOME in tests) reaches git.
    env = {k: v for k, v in no_git_env(os.environ).items() if k not in _PROGRAM_VARS}
    return {
        **env,
        "LC_ALL": "C",
        # `git status` refreshes the index as a side effect; a read-only tool must not write.
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_PAGER": "cat", "PAGER": "cat",
    }


@dataclass(frozen=True)
class _Filters:
    names: tuple[str, ...]                       # filter drivers the configuration defines
    files: tuple[tuple[str, tuple[int, int, int]], ...]   # the config files read, and their stat
    env: tuple[str, ...]                         # the config-bearing environment when read
    attributes: tuple[str, ...] = ()             # core.attributesFile, where the configuration names one


_FILTERS: dict[str, _Filters] = {}
_CONFIG_ENV = ("GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
               "GIT_CONFIG_NOSYSTEM", "HOME", "XDG_CONFIG_HOME")


def _stat_key(path: str) -> tuple[int, int, int]:
    try:
        st = os.stat(path)
    except OSError:
        return (0, 0, 0)
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _config_env() -> tuple[str, ...]:
    """The environment that decides git's configuration: the variables above and the
    GIT_CONFIG_KEY_<n> / GIT_CONFIG_VALUE_<n> pairs that GIT_CONFIG_COUNT says git reads (only
    those: walking all of os.environ cost a millisecond per git call)."""
    named = tuple(os.environ.get(k, "\0") for k in _CONFIG_ENV)
    count = os.environ.get("GIT_CONFIG_COUNT", "").strip()
    if not count.isdigit():
        return named
    return named + tuple(os.environ.get(f"GIT_CONFIG_{part}_{n}", "\0")
                         for n in range(min(int(count), 10_000)) for part in ("KEY", "VALUE"))


def filter_names(repo: Path | str) -> tuple[str, ...]:
    """The filter drivers (`filter.<name>.*`) that git's configuration defines in `repo`.

    Read with `git config --list` (which runs nothing) and kept while none of the files it read
    changes; a configuration with include directives (an `includeIf` can depend on the branch),
    or whose files cannot all be found again, is read again each time."""
    key = os.path.abspath(str(repo))
    cached = _FILTERS.get(key)
    env = _config_env()
    if cached is not None and cached.env == env and all(_stat_key(f) == st for f, st in cached.files):
        return cached.names
    try:
        out = _run_raw(repo, ("config", "--list", "--show-origin", "-z"), extra=())
    except GitError:
        return ()
    names: set[str] = set()
    attributes: list[str] = []
    files: dict[str, tuple[int, int, int]] = {}
    includes = False
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    for origin, entry in zip(fields[0::2], fields[1::2]):
        name = entry.split("\n", 1)[0]
        section, _, rest = name.partition(".")
        if section.lower() == "filter" and "." in rest:
            names.add(rest.rsplit(".", 1)[0])
        if section.lower() in ("include", "includeif"):
            includes = True
        if name.lower() == "core.attributesfile" and "\n" in entry:
            attributes.append(os.path.expanduser(entry.split("\n", 1)[1]))
        if origin.startswith("file:"):
            path = origin[len("file:"):]
            full = path if os.path.isabs(path) else os.path.join(key, path)
            files.setdefault(full, _stat_key(full))
            # Relative origins are relative to the top of the work tree, which `repo` may not
            # be: a file that cannot be found is a file whose changes we could not see.
            includes = includes or files[full] == (0, 0, 0)
    home = os.environ.get("HOME")
    for extra_file in ([os.path.join(home, ".gitconfig")] if home else []) + [
            os.path.join(os.environ.get("XDG_CONFIG_HOME") or os.path.join(home or "/", ".config"), "git", "config")]:
        files.setdefault(extra_file, _stat_key(extra_file))
    result = tuple(sorted(names))
    if not includes:
        _FILTERS[key] = _Filters(result, tuple(files.items()), env, tuple(attributes))
    return result


def filter_overrides(repo: Path | str) -> tuple[str, ...]:
    """`-c` settings that stop every configured filter driver from running (an empty command is
    no command; `required=false` keeps git from failing the path for it). Empty when the user
    opted in with CODEVOUCH_RUN_GIT_FILTERS=1."""
    if run_filters():
        return ()
    args: list[str] = []
    for name in filter_names(repo):
        for setting in ("clean=", "smudge=", "process=", "required=false"):
            args += ["-c", f"filter.{name}.{setting}"]
    return tuple(args)


def git_command(repo: Path | str, args: Iterable[str]) -> tuple[str, ...]:
    """The argv of a git process in `repo` that runs no program the repository configured."""
    return _command(repo, tuple(args), filter_overrides(repo))


def _command(repo: Path | str, args: tuple[str, ...], extra: tuple[str, ...]) -> tuple[str, ...]:
    safe: list[str] = []
    for setting in SAFE_CONFIG:
        safe += ["-c", setting]
    return ("git", "--no-pager", "--no-optional-locks", *safe, *extra, "-C", str(repo), *args)


# Git processes this process started, by subcommand (tests and benchmarks read it; each start
# counts, whether it succeeded or not).
PROCESSES: Counter[str] = Counter()


def _counted(cmd: tuple[str, ...]) -> None:
    at = cmd.index("-C") + 2 if "-C" in cmd else 1
    PROCESSES[cmd[at] if at < len(cmd) else "?"] += 1


def _run_raw(repo: Path | str, args: tuple[str, ...], extra: tuple[str, ...],
             stdin: bytes | None = None, ok_codes: tuple[int, ...] = (0,),
             env: Mapping[str, str] | None = None) -> bytes:
    cmd = _command(repo, args, extra)
    _counted(cmd)
    try:
        proc = subprocess.run(cmd, input=stdin, capture_output=True, env={**_env(), **(env or {})}, check=False)
    except FileNotFoundError as exc:  # git itself is missing
        raise _missing_git(cmd) from exc
    return _checked(cmd, proc.returncode, proc.stdout, proc.stderr, ok_codes)


# Options for every command that can diff (diff, log, show): no textconv, no external diff.
NO_PROGRAMS = ("--no-textconv", "--no-ext-diff")


def run(repo: Path | str, *args: str, stdin: bytes | None = None, ok_codes: tuple[int, ...] = (0,),
        env: Mapping[str, str] | None = None) -> bytes:
    return _run_raw(repo, args, filter_overrides(repo), stdin=stdin, ok_codes=ok_codes, env=env)


def _missing_git(cmd: tuple[str, ...]) -> GitError:
    return GitError("git is not installed or not on PATH; install git and retry.", cmd)


def _shown(cmd: tuple[str, ...]) -> tuple[str, ...]:
    """The part of a git argv a message shows: what follows `-C <repo>`."""
    return cmd[cmd.index("-C") + 2:] if "-C" in cmd else cmd[1:]


_FILTER_FAILED = re.compile(r"fatal: (?P<path>.+?): (?P<side>clean|smudge) filter '(?P<name>[^']*)' failed")


def _printable_path(path: str) -> str:
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in path)[:200]


def _checked(cmd: tuple[str, ...], returncode: int, stdout: bytes, stderr_bytes: bytes,
             ok_codes: tuple[int, ...]) -> bytes:
    if returncode not in ok_codes:
        stderr = stderr_bytes.decode("utf-8", "replace").strip()
        failed = _FILTER_FAILED.search(stderr)
        if failed is not None:
            # A filter driver the user let run (CODEVOUCH_RUN_GIT_FILTERS=1) is missing or failed:
            # say which, and how to check without it, not git's words.
            raise FilterFailed(
                f"the repository's {failed['side']} filter {failed['name']!r} failed on "
                f"{_printable_path(failed['path'])} (its program is missing or broken, and git's "
                f"configuration makes it required), so git cannot read the working tree with it; install "
                "the filter's program, or unset CODEVOUCH_RUN_GIT_FILTERS so codevouch checks without "
                "running it.", cmd, returncode, stderr)
        raise GitError(
            f"git failed ({' '.join(_shown(cmd))}): exit {returncode}: {stderr or '(no output)'}",
            cmd, returncode, stderr,
        )
    return stdout


class Pending:
    """A git process started now and collected later (`result()`, which raises as `run` does):
    git works on the other core while the caller goes on with its own work.

    git reads its input from, and writes its output into, anonymous files, not pipes: it never
    waits for this process to drain a pipe, and no thread is needed to drain one. (A draining
    thread cost more than the process it served on two busy cores: starting one waits until
    the scheduler runs it, and it then competes for the interpreter lock.)"""

    def __init__(self, repo: Path | str, *args: str, stdin: bytes | None = None,
                 ok_codes: tuple[int, ...] = (0,), env: Mapping[str, str] | None = None) -> None:
        self._cmd = git_command(repo, args)
        _counted(self._cmd)
        self._ok = ok_codes
        self._error: OSError | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._output: tuple[int, bytes, bytes] | None = None
        self._out = _anonymous_file()
        self._err = _anonymous_file()
        feed = None
        try:
            if stdin is not None:
                feed = _anonymous_file()
                _write_all(feed, stdin)
                os.lseek(feed, 0, os.SEEK_SET)
            self._proc = subprocess.Popen(self._cmd, stdin=subprocess.DEVNULL if feed is None else feed,
                                          stdout=self._out, stderr=self._err,
                                          env={**_env(), **(env or {})})
        except OSError as exc:        # raised by result(), as `run` would raise it
            self._error = exc
        finally:
            if feed is not None:
                os.close(feed)

    def done(self) -> bool:
        """Whether git has finished (result() would not wait)."""
        return self._proc is None or self._proc.poll() is not None

    def result(self) -> bytes:
        if self._proc is None:
            assert self._error is not None
            if isinstance(self._error, FileNotFoundError):
                raise _missing_git(self._cmd) from self._error
            raise self._error
        if self._output is None:
            try:
                returncode = self._proc.wait()
                self._output = (returncode, _read_all(self._out), _read_all(self._err))
            finally:
                self.close()
        return _checked(self._cmd, *self._output, self._ok)

    def close(self) -> None:
        for fd in (getattr(self, "_out", -1), getattr(self, "_err", -1)):   # set unless __init__ failed
            if fd >= 0:
                os.close(fd)
        self._out = self._err = -1

    def __del__(self) -> None:
        self.close()


def _anonymous_file() -> int:
    """A file descriptor of a new file with no name (memory-backed on Linux), closed on exec."""
    if hasattr(os, "memfd_create"):
        try:
            return os.memfd_create("codevouch-git", os.MFD_CLOEXEC)
        except OSError:
            pass
    import tempfile
    handle = tempfile.TemporaryFile()
    fd = os.dup(handle.fileno())
    handle.close()
    os.set_inheritable(fd, False)
    return fd


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _read_all(fd: int) -> bytes:
    size = os.fstat(fd).st_size
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = [os.read(fd, size)] if size else []
    got = len(chunks[0]) if chunks else 0
    while got < size:
        chunks.append(os.read(fd, size - got))
        if not chunks[-1]:
            break
        got += len(chunks[-1])
    return b"".join(chunks)


def zsplit(out: bytes) -> list[str]:
    return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]


def repo_root(path: Path | str) -> Path:
    """The top of the work tree that contains `path`."""
    p = Path(path)
    if not p.exists():
        raise NotARepository(f"{p} does not exist; pass --repo with the path of a git repository.")
    try:
        out = run(p, "rev-parse", "--show-toplevel")
    except GitError as exc:
        raise _not_a_repository(p, exc) from exc
    return _toplevel(out)


def _toplevel(out: bytes) -> Path:
    """`rev-parse --show-toplevel`'s answer as repo_root gives it."""
    return Path(out.decode().strip()).resolve()


def _not_a_repository(p: Path, exc: GitError) -> NotARepository:
    """Why `rev-parse --show-toplevel` failed in `p`, said for a user: bare, or no repository."""
    bare = run(p, "rev-parse", "--is-bare-repository", ok_codes=(0, 128)).strip() == b"true"
    if bare:
        return NotARepository(
            f"{p} is a bare git repository: it has no working tree to index or check against; "
            "clone it, or add a working tree with `git worktree add`, and pass that path.",
            exc.cmd, exc.returncode, exc.stderr)
    return NotARepository(
        f"{p} is not inside a git repository; pass --repo with the path of one "
        "(or run `git init` and commit first).", exc.cmd, exc.returncode, exc.stderr)


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
        return _toplevel(out)


@dataclass(frozen=True)
class HeadState:
    root: Path           # the work tree's top, resolved as repo_root() resolves it
    commit: str          # HEAD's commit
    branch: str | None   # HEAD's branch; None when HEAD is detached


def head_state(path: Path | str) -> HeadState | None:
    """repo_root, head_commit and HEAD's branch in one git process (a search asks all three
    each time; one process instead of four saves ~30 ms on a busy machine). None when any of
    them fails (not a repository, no commits yet, bare): the separate calls say which."""
    try:
        out = run(path, "rev-parse", "--show-toplevel", "HEAD", "--symbolic-full-name", "HEAD")
    except GitError:
        return None
    parts = out.decode().rstrip("\n").rsplit("\n", 2)  # the top may itself hold a newline
    if len(parts) != 3:
        return None
    root, commit, ref = parts
    branch = ref[len("refs/heads/"):] if ref.startswith("refs/heads/") else None
    return HeadState(Path(root).resolve(), commit, branch)


def head_commit(repo: Path) -> str | None:
    """HEAD's commit, or None for a repository with no commits yet."""
    out = run(repo, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", ok_codes=(0, 1))
    return out.decode().strip() or None


def current_branch(repo: Path) -> str:
    out = run(repo, "symbolic-ref", "--quiet", "--short", "HEAD", ok_codes=(0, 1)).decode().strip()
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


def local_branches(repo: Path) -> list[str]:
    out = run(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/")
    return [line for line in out.decode("utf-8", "surrogateescape").splitlines() if line]


def root_commit(repo: Path) -> str:
    """The root commit reached from HEAD by first parents: the same in every clone of the
    repository (a shallow clone's boundary stands in for it), whatever its directory."""
    out = run(repo, "rev-list", "--first-parent", "--max-parents=0", "HEAD", ok_codes=(0, 128)).decode().split()
    if not out:
        raise NoCommits(f"{repo} has no commits yet; commit something before indexing it.")
    return out[-1]


def remote_url(repo: Path) -> str | None:
    """The `origin` remote's URL (else the first remote's), a label for people; None without one."""
    names = run(repo, "remote").decode().split()
    if not names:
        return None
    name = "origin" if "origin" in names else names[0]
    out = run(repo, "remote", "get-url", "--", name, ok_codes=(0, 2, 128)).decode().strip()
    # A URL may carry a token (https://user:token@host/...): a label never keeps it.
    return re.sub(r"^([a-z][a-z0-9+.-]*://)[^/@]*@", r"\1", out) or None


def commit_dates(repo: Path, commits: Iterable[str]) -> dict[str, str]:
    """Committer date (strict ISO 8601) of each commit, in one process."""
    wanted = list(dict.fromkeys(commits))
    if not wanted:
        return {}
    out = run(repo, "show", "-s", *NO_PROGRAMS, "--no-walk=unsorted", "--format=%H %cI", *wanted, "--")
    dates: dict[str, str] = {}
    for line in out.decode().splitlines():
        sha, _, date = line.partition(" ")
        dates[sha] = date
    return dates


def batch_check(root: Path, exprs: Iterable[str]) -> dict[str, tuple[str, str]]:
    """Resolve object names (`HEAD`, abbreviated commits, `<commit>:<path>`) in one process.

    One process answers HEAD, the snippets' commits and each `<commit>:<path>` blob together.
    `%(rest)` is not used, so a path with spaces is read whole; answers come back one line
    per question, in order.
    """
    wanted = [e for e in dict.fromkeys(exprs) if e and "\n" not in e and not e.startswith("-")]
    found: dict[str, tuple[str, str]] = {}
    git_dir = _object_store(root)
    for e in wanted:
        known = _OBJECTS.get((git_dir, e)) if git_dir and _immutable(e) else None
        if known is not None:
            found[e] = known
    wanted = [e for e in wanted if e not in found]
    if not wanted:
        return found
    out = run(root, "cat-file", "--batch-check=%(objectname) %(objecttype)",
                    stdin="".join(f"{e}\n" for e in wanted).encode("utf-8", "surrogateescape"))
    for expr, line in zip(wanted, out.decode("utf-8", "surrogateescape").split("\n")):
        parts = line.split(" ")
        if len(parts) == 2 and _OID.fullmatch(parts[0]) and parts[1] in _OBJECT_TYPES:
            found[expr] = (parts[0], parts[1])
            if git_dir and _immutable(expr):
                _remember(_OBJECTS, (git_dir, expr), found[expr])
    return found


# Answers about objects that cannot change, kept for the process: a full object id, or
# `<full commit id>:<path>` (a commit's tree is part of its id). Only what was found: a missing
# object may arrive with the next fetch. Keyed by the repository's object store, so two clones
# never share an answer.
_OBJECTS: dict[tuple[str, str], tuple[str, str]] = {}
_COMMITS: dict[tuple[str, str], tuple[str, str, str | None]] = {}
_OBJECTS_MAX = 100_000
_STORES: dict[str, str | None] = {}


def _immutable(name: str) -> bool:
    head, sep, _ = name.partition(":")
    return bool(_OID.fullmatch(head)) and (bool(sep) or ":" not in name)


def _remember(memo: dict[Any, Any], key: tuple[str, str], value: object) -> None:
    if len(memo) >= _OBJECTS_MAX:
        memo.clear()
    memo[key] = value


def _object_store(root: Path | str) -> str | None:
    """A key for the repository `root` is in (its real path), None when it is not a work tree's
    top we can tell (then nothing is kept)."""
    key = os.path.abspath(str(root))
    if key not in _STORES:
        _STORES[key] = os.path.realpath(key) if os.path.exists(os.path.join(key, ".git")) else None
    return _STORES[key]


def _clear_objects() -> None:
    _TREES.clear()
    _OBJECTS.clear()
    _COMMITS.clear()
    _STORES.clear()


caches.register("codevouch.worktree.gitio.objects", _clear_objects, lambda: len(_OBJECTS) + len(_COMMITS) + len(_TREES))


def read_commits(root: Path, names: Iterable[str]) -> dict[str, tuple[str, str, str | None]]:
    """name -> (object id, type, committer date) for object names (`HEAD`, abbreviated ids)
    in one `cat-file --batch`: what `batch_check` and `commit_dates` give in two processes.
    The date is strict ISO 8601 as `%cI` gives it, None for objects that are not commits.
    Names that resolve to nothing are left out."""
    return PendingCommits(root, names).result()


class PendingCommits:
    """read_commits started in the background (`result()` gives what it returns)."""

    def __init__(self, root: Path, names: Iterable[str], known: Mapping[str, str] | None = None) -> None:
        """known: names already resolved to a full commit id in this call (`HEAD` from the
        search's rev-parse): read as that id, from memory once read."""
        wanted = [n for n in dict.fromkeys(names) if n and "\n" not in n and " " not in n and not n.startswith("-")]
        self._store = _object_store(root)
        self._aliases = {n: (known or {}).get(n, n) for n in wanted}
        self._found: dict[str, tuple[str, str, str | None]] = {}
        for name, oid in self._aliases.items():
            cached = _COMMITS.get((self._store, oid)) if self._store and _OID.fullmatch(oid) else None
            if cached is not None:
                self._found[name] = cached
        self._names = list(dict.fromkeys(oid for n, oid in self._aliases.items() if n not in self._found))
        self._pending = Pending(root, "cat-file", "--batch", stdin=_batch_input(self._names)) if self._names else None

    def result(self) -> dict[str, tuple[str, str, str | None]]:
        found = dict(self._found)
        if self._pending is not None:
            read = {name: (oid, kind, _committer_date(body) if kind == "commit" else None)
                    for name, (oid, kind, body) in _parse_batch(self._pending.result(), self._names).items()}
            for answer in read.values():
                if self._store and answer[1] == "commit":
                    _remember(_COMMITS, (self._store, answer[0]), answer)
            for name, oid in self._aliases.items():
                if name not in found and oid in read:
                    found[name] = read[oid]
        return found


def _batch_input(names: list[str]) -> bytes:
    return "".join(f"{n}\n" for n in names).encode("utf-8", "surrogateescape")


def _parse_batch(out: bytes, names: list[str]) -> dict[str, tuple[str, str, bytes]]:
    """`cat-file --batch` output for `names` (one answer each, in order) -> name -> (object id,
    type, content); names git could not resolve are left out."""
    found: dict[str, tuple[str, str, bytes]] = {}
    pos = 0
    for name in names:
        eol = out.find(b"\n", pos)
        if eol < 0:
            break
        parts = out[pos:eol].decode("utf-8", "surrogateescape").split(" ")
        pos = eol + 1
        if len(parts) != 3 or not _OID.fullmatch(parts[0]) or parts[1] not in _OBJECT_TYPES:
            continue    # "<name> missing" or "<name> ambiguous": no content follows
        size = int(parts[2])
        found[name] = (parts[0], parts[1], out[pos:pos + size])
        pos += size + 1                      # the content, then a newline
    return found


def _committer_date(body: bytes) -> str | None:
    """`%cI` of a raw commit object: its committer line's epoch seconds in its own zone."""
    from datetime import datetime, timedelta, timezone
    headers = body.split(b"\n\n", 1)[0]
    for line in headers.split(b"\n"):
        if line.startswith(b"committer "):
            try:
                stamp, zone = line.rsplit(b" ", 2)[1:]
                minutes = int(zone[1:3]) * 60 + int(zone[3:5])
                tz = timezone(timedelta(minutes=-minutes if zone[:1] == b"-" else minutes))
                return datetime.fromtimestamp(int(stamp), tz).isoformat()
            except (ValueError, OverflowError, OSError):
                return None
    return None


@dataclass(frozen=True)
class TreeEntry:
    path: str
    mode: str
    blob_sha: str
    size: int


def tree_blobs(repo: Path, commit: str) -> dict[str, str]:
    """path -> blob id of every blob in a commit (symlinks included, as `<commit>:<path>` would
    give them). No sizes: `ls-tree -l` opens every blob for its size, ~10x slower."""
    return parse_tree_blobs(run(repo, "ls-tree", "-r", "-z", "--full-tree", commit))


def start_tree_blobs(repo: Path, commit: str) -> Pending:
    """tree_blobs started in the background: `parse_tree_blobs(pending.result())`."""
    return Pending(repo, "ls-tree", "-r", "-z", "--full-tree", commit)


# Whole trees of commits (full ids), kept for the process: a long-lived searcher (the MCP server,
# an agent's Index) looks up each hit's `<commit>:<path>` in memory, not in a git process per call.
_TREES: dict[tuple[str, str], dict[str, str]] = {}
_TREES_MAX = 4
KEPT_TREE_MAX = 200_000        # files: a larger tree is not kept


def kept_tree(root: Path, commit: str) -> dict[str, str] | None:
    """path -> blob id of `commit` (a full id) when this process listed it already."""
    store = _object_store(root)
    return _TREES.get((store, commit)) if store else None


def keep_tree(root: Path, commit: str, blobs: dict[str, str]) -> None:
    """Keep a commit's whole tree (tree_blobs' answer) for kept_tree."""
    store = _object_store(root)
    if store and _OID.fullmatch(commit) and len(blobs) <= KEPT_TREE_MAX:
        if len(_TREES) >= _TREES_MAX:
            _TREES.pop(next(iter(_TREES)))
        _TREES[(store, commit)] = blobs


def parse_tree_blobs(out: bytes, only: Collection[str] | None = None) -> dict[str, str]:
    """`ls-tree -r -z` output -> path -> blob id; only the paths in `only` when given."""
    blobs: dict[str, str] = {}
    for rec in zsplit(out):
        meta, _, path = rec.partition("\t")
        if only is not None and path not in only:
            continue
        _, otype, sha = meta.split()
        if otype == "blob":
            blobs[path] = sha
    return blobs


def ls_tree(repo: Path, commit: str) -> dict[str, TreeEntry]:
    """Every regular file (blob) of a commit; symlinks and submodules are left out."""
    return tree_entries(repo, commit)[0]


def tree_entries(repo: Path, commit: str) -> tuple[dict[str, TreeEntry], list[TreeEntry]]:
    """A commit's regular files, and its other entries (symlinks: mode 120000, submodules:
    160000, size 0), from one `ls-tree`: a build lists the others with a reason."""
    out = run(repo, "ls-tree", "-r", "-z", "-l", "--full-tree", commit)
    entries: dict[str, TreeEntry] = {}
    others: list[TreeEntry] = []
    for rec in zsplit(out):
        meta, _, path = rec.partition("\t")
        mode, otype, sha, size = meta.split()
        if otype != "blob" or mode == "120000":
            others.append(TreeEntry(path, mode, sha, 0))
            continue
        entries[path] = TreeEntry(path, mode, sha, int(size))
    return entries, others


@dataclass(frozen=True)
class Change:
    status: str          # A, M, D, T, R (rename), C (copy)
    old_path: str | None
    new_path: str | None
    old_blob: str | None
    new_blob: str | None


_ZERO = "0" * 40


def diff_trees(repo: Path, old: str, new: str | None, renames: bool = True) -> list[Change]:
    """Changed files between two commits (`new=None`: the working tree's tracked files),
    with git's rename detection."""
    args = ["diff", "--raw", "-z", "--no-abbrev", *NO_PROGRAMS, *([] if new else ["--ignore-submodules=dirty"])]
    args += ["-M"] if renames else ["--no-renames"]
    try:
        out = run(repo, *args, old, *([new] if new else []), "--")
    except GitError as exc:
        raise _gone_or(repo, (old, new), exc) from exc
    return _parse_raw(out)


def _gone_or(repo: Path, commits: Iterable[str | None], exc: GitError) -> GitError:
    """CommitGone when one of `commits` is not in the repository (what a raw `fatal: bad object`
    from a diff means after a force-push and gc), else `exc` as it was. Asked only on failure."""
    if exc.returncode != 128:
        return exc
    named = [c for c in commits if c]
    found = batch_check(repo, named) if named else {}
    gone = [c for c in named if c not in found]
    if not gone:
        return exc
    return CommitGone(f"commit {gone[0][:12]} is no longer in the repository {repo} (history rewritten, "
                      "by a force-push or an amend, and the old objects garbage-collected)",
                      commit=gone[0], cmd=exc.cmd, returncode=exc.returncode, stderr=exc.stderr)


class PendingDiff:
    """diff_trees started in the background (`result()` gives what it returns)."""

    def __init__(self, repo: Path, old: str, new: str | None, renames: bool = True) -> None:
        args = ["diff", "--raw", "-z", "--no-abbrev", "--no-ext-diff", "--no-textconv"]
        args += ["-M"] if renames else ["--no-renames"]
        self._pending = Pending(repo, *args, old, *([new] if new else []), "--")
        self._repo, self._commits = repo, (old, new)

    def result(self) -> list[Change]:
        try:
            return _parse_raw(self._pending.result())
        except GitError as exc:
            raise _gone_or(self._repo, self._commits, exc) from exc


def _parse_raw(out: bytes) -> list[Change]:
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    changes: list[Change] = []
    i = 0
    while i < len(fields):
        head = fields[i]
        if not head.startswith(":"):
            i += 1
            continue
        _, _, old_sha, new_sha, status = head[1:].split(" ", 4)
        kind = status[0]
        old_path: str | None
        new_path: str | None
        old_blob = None if old_sha == _ZERO else old_sha
        new_blob = None if new_sha == _ZERO else new_sha
        if kind in "RC":
            old_path, new_path = fields[i + 1], fields[i + 2]
            i += 3
        else:
            path = fields[i + 1]
            old_path = None if kind == "A" else path
            new_path = None if kind == "D" else path
            i += 2
        changes.append(Change(kind, old_path, new_path, old_blob, new_blob))
    return changes


def renames_between(repo: Path, old: str, new: str | None) -> dict[str, str]:
    """old path -> new path for every file git sees as renamed from `old` to `new`
    (`new=None`: the working tree, so an uncommitted `git mv` counts)."""
    return {c.old_path: c.new_path for c in diff_trees(repo, old, new)
            if c.status == "R" and c.old_path and c.new_path}


class BlobReader:
    """One `git cat-file --batch` process serving any number of blob reads."""

    def __init__(self, repo: Path) -> None:
        cmd = git_command(repo, ("cat-file", "--batch"))
        _counted(cmd)
        self._proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_env())

    def read(self, sha: str) -> bytes | None:
        assert self._proc.stdin and self._proc.stdout
        self._proc.stdin.write(sha.encode() + b"\n")
        self._proc.stdin.flush()
        header = self._proc.stdout.readline().decode().split()
        if len(header) < 3 or header[1] == "missing":
            return None
        size = int(header[2])
        data = self._proc.stdout.read(size)
        self._proc.stdout.read(1)  # the newline after each object
        return data if header[1] == "blob" else None

    def close(self) -> None:
        if self._proc.poll() is None:
            assert self._proc.stdin
            self._proc.stdin.close()
            self._proc.wait()

    def __enter__(self) -> BlobReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextmanager
def blob_reader(repo: Path) -> Iterator[BlobReader]:
    reader = BlobReader(repo)
    try:
        yield reader
    finally:
        reader.close()


def read_blobs(repo: Path, shas: Iterable[str]) -> dict[str, bytes]:
    """name -> content of each blob (ids or `<rev>:<path>`); names that are missing or not
    blobs are left out."""
    return start_read_blobs(repo, shas).result()


class PendingBlobs:
    """read_blobs started in the background: all names are written at once and the answers
    read by a thread (no round trip per blob), while the caller goes on."""

    def __init__(self, repo: Path, shas: Iterable[str]) -> None:
        self.names = [s for s in dict.fromkeys(shas) if s and "\n" not in s]
        self._pending = Pending(repo, "cat-file", "--batch", stdin=_batch_input(self.names)) if self.names else None

    def result(self) -> dict[str, bytes]:
        if self._pending is None:
            return {}
        found = _parse_batch(self._pending.result(), self.names)
        return {name: body for name, (_, kind, body) in found.items() if kind == "blob"}


def start_read_blobs(repo: Path, shas: Iterable[str]) -> PendingBlobs:
    return PendingBlobs(repo, shas)


@dataclass(frozen=True)
class WorktreeStatus:
    """Paths that differ from HEAD in the index or the working tree, and untracked files."""
    changed: frozenset[str]     # modified, added, deleted, renamed (both sides), type-changed
    untracked: frozenset[str]

    def is_clean(self, path: str) -> bool:
        return path not in self.changed and path not in self.untracked


STATUS_ARGS = ("status", "--porcelain=v1", "-z", "--no-renames", "--ignore-submodules=all")


def worktree_status(repo: Path, untracked: bool = True, toplevel: bool = False) -> WorktreeStatus:
    """What `git status` reports. untracked=False leaves the untracked files out (a third of
    the cost on a large tree); a tracked file removed from the index still counts as changed.
    toplevel: `repo` is the top of its work tree (repo_root's answer), so the status may use
    this process's refreshed copy of the index (see _private_index)."""
    return parse_status(start_worktree_status(repo, untracked, toplevel).result())


def start_worktree_status(repo: Path, untracked: bool = True, toplevel: bool = False) -> Pending:
    """worktree_status started in the background: `parse_status(pending.result())`."""
    args = (*STATUS_ARGS, f"--untracked-files={'all' if untracked else 'no'}")
    private = _private_index(Path(repo)) if toplevel else None
    if private is None:
        return Pending(repo, *args)
    # Our own copy of the index, refreshed when it was taken (see _private_index): the status
    # trusts the stat data git verified then instead of hashing every racily clean file again.
    return Pending(repo, *args, env={"GIT_INDEX_FILE": private})


# --- a private, refreshed copy of the index ------------------------------------------------------
#
# `git status` compares each tracked file's stat data with what the index recorded, and hashes a
# file whose stat data differ, or that is "racily clean": modified in the same second as the
# index was written (git's racy-git rule: then equal stat data prove nothing). A fresh clone's
# files are all racily clean, and codevouch never writes the repository's index, so every status
# hashed the whole tree again (55 ms per call on SQLAlchemy's 26 MB). Instead the status of a
# toplevel we know reads a copy of the index that this process owns, in a private temporary
# directory, refreshed by `git update-index --refresh` when it is taken (written back with the
# stat data git verified, as a `git status` in a terminal refreshes .git/index). Git's own racy-git rules decide what to
# trust, against the copy's own time stamp: the copy keeps the original's mtime, so nothing is
# trusted that the original would not have had rehashed, and an entry git writes back in the
# second its file changed is smudged by git and hashed again on the next status. The copy is
# taken again whenever the real index file changes (stat: inode, size, mtime, ctime): a `git add`,
# a commit, a checkout. Never used with a split index (its shared part lives in the git
# directory, which git would then write).

@dataclass
class _Copy:
    key: tuple[int, int, int, int]     # the real index's stat when copied
    path: str                          # the copy


_PRIVATE: dict[str, _Copy] = {}        # the real index file -> our copy
_PRIVATE_LOCK = threading.Lock()
_private_dir: list[str] = []


def _index_file(root: Path) -> str | None:
    """The index file of the work tree whose top is `root` (a `.git` directory, or a `.git` file
    naming one: a linked worktree or a submodule); None when it cannot be told for sure. Kept
    while `.git` and the git directory keep their stat data (a split index adds a file there)."""
    dot_git = os.path.join(root, ".git")
    key = (_stat4(dot_git), str(root))
    kept = _INDEX_FILES.get(str(root))
    if kept is not None and kept[0] == key and kept[2] == _stat4(kept[3]):
        return kept[1]
    found, git_dir = _find_index_file(root)
    if len(_INDEX_FILES) > 256:
        _INDEX_FILES.clear()
    _INDEX_FILES[str(root)] = (key, found, _stat4(git_dir) if git_dir else None, git_dir or dot_git)
    return found


_INDEX_FILES: dict[str, tuple[object, str | None, object, str]] = {}
caches.register("codevouch.worktree.gitio.index_files", _INDEX_FILES.clear, _INDEX_FILES.__len__)


def _find_index_file(root: Path) -> tuple[str | None, str | None]:
    dot_git = os.path.join(root, ".git")
    try:
        if os.path.isdir(dot_git):
            git_dir = dot_git
        else:
            with open(dot_git, "rb") as handle:
                first = handle.read(4096).split(b"\n", 1)[0].decode("utf-8", "surrogateescape").strip()
            if not first.startswith("gitdir: "):
                return None, None
            git_dir = os.path.join(root, first[len("gitdir: "):])
    except OSError:
        return None, None
    if any(name.startswith("sharedindex.") for name in _listdir(git_dir)):
        return None, git_dir    # a split index: its shared part is found (and written) in the git dir
    index = os.path.join(git_dir, "index")
    return (index if os.path.isfile(index) else None), git_dir


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def _stat4(path: str) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _private_index(root: Path) -> str | None:
    """Our refreshed copy of the index of the work tree at `root` (its top), made or made again
    when the real one changed; None (use the real one) when it cannot be made."""
    real = _index_file(root)
    key = _stat4(real) if real else None
    if real is None or key is None:
        return None
    with _PRIVATE_LOCK:
        found = _PRIVATE.get(real)
        if found is not None and found.key == key and os.path.isfile(found.path):
            return found.path
        try:
            if not _private_dir:
                _private_dir.append(tempfile.mkdtemp(prefix="codevouch-index-"))    # mode 0700
                atexit.register(_drop_private)
            path = found.path if found is not None else os.path.join(_private_dir[0], f"{len(_PRIVATE)}.index")
            tmp = path + ".new"
            shutil.copy2(real, tmp)       # the mtime too: git judges raciness by it
            os.replace(tmp, path)
        except OSError:
            return None
        if _stat4(real) != key:           # written while we copied: use the real one this time
            return None
        try:
            # Refreshed once, here: git hashes what it cannot trust and writes the copy back with
            # the stat data it verified (smudging, by its racy-git rule, any entry whose file
            # changed in the second it writes: that one is hashed again by every status).
            run(root, "-c", "core.splitIndex=false", "update-index", "-q", "--refresh", "--ignore-submodules",
                ok_codes=(0, 1), env={"GIT_INDEX_FILE": path})
        except GitError:
            return None
        _PRIVATE[real] = _Copy(key, path)
        return path


def _drop_private() -> None:
    with _PRIVATE_LOCK:
        _PRIVATE.clear()
        if _private_dir:
            shutil.rmtree(_private_dir.pop(), ignore_errors=True)


caches.register("codevouch.worktree.gitio.private_index", _drop_private, _PRIVATE.__len__)


def parse_status(out: bytes) -> WorktreeStatus:
    changed: set[str] = set()
    untracked: set[str] = set()
    for rec in zsplit(out):
        code, path = rec[:2], rec[3:]
        (untracked if code == "??" else changed).add(path)
    return WorktreeStatus(frozenset(changed), frozenset(untracked))


def hash_worktree_files(repo: Path, paths: Iterable[str]) -> dict[str, str]:
    """Blob id of each working-tree file as git computes it (clean filters and eol rules applied).

    Paths must be repo-relative and already checked to lie inside the repository. A path git
    cannot hash (removed since it was listed, say) is left out of the result rather than
    failing the others: callers treat a missing id as "not provably unchanged".
    """
    return start_hash_worktree_files(repo, paths).result()


class PendingHashes:
    """hash_worktree_files started in the background (`result()` gives what it returns).

    A file hashed before is not hashed again while its stat data, and everything else git's
    answer depends on (see hash_context), are unchanged: a long-lived caller (the MCP server, an
    agent's Index) asks for the same changed files on every call."""

    def __init__(self, repo: Path, paths: Iterable[str]) -> None:
        self._repo = repo
        self._wanted = list(dict.fromkeys(paths))
        self._known: dict[str, str] = {}
        self._keys: dict[str, tuple[object, ...]] = {}     # path -> its key, to remember once hashed
        todo = self._wanted
        context = hash_context(repo) if self._wanted else None
        if context is not None:
            todo, self._known, self._keys = _remembered_hashes(str(repo), self._wanted, context)
        self._todo = todo
        # Paths with a newline cannot go through --stdin-paths; they are hashed one by one.
        self._batch = [p for p in todo if "\n" not in p]
        self._pending = Pending(repo, "hash-object", "--stdin-paths",
                                stdin=("\n".join(self._batch) + "\n").encode("utf-8", "surrogateescape")) \
            if self._batch else None

    def result(self) -> dict[str, str]:
        single = [p for p in self._todo if "\n" in p]
        result: dict[str, str] = dict(self._known)
        if self._pending is not None:
            try:
                result.update(zip(self._batch, self._pending.result().decode().split()))
            except GitError:
                single = self._todo  # one bad path fails the whole batch: fall back to one process each
        for path in single:
            try:
                result[path] = run(self._repo, "hash-object", "--", path).decode().strip()
            except GitError:
                continue
        root = str(self._repo)
        if len(_HASHED) + len(self._keys) > _HASHED_MAX:
            _HASHED.clear()
        for path, key in self._keys.items():
            if path in result:
                _HASHED[(root, path)] = (key, result[path])
        return {p: result[p] for p in self._wanted if p in result}


# --- blob ids of working-tree files, kept by stat ------------------------------------------------
#
# (repo, path) -> (key, blob id). The key is the file's stat data (device, inode, mode, size,
# mtime, ctime) with what else decides the id git computes: the configuration files (eol and
# filter settings) and the environment that names them, the index (`text=auto` looks at the
# indexed blob), and every attributes file that applies to the path. A file is remembered only
# when its mtime and ctime are RACY_NS older than the moment it was hashed: a later write then
# gives it a newer mtime and ctime, even on a file system whose clock ticks coarsely (the
# racy-git problem, solved the way git solves it: distrust what changed too close to the look).
# ctime cannot be set back by a user, so `touch -d` to the old time does not fool it either.
# Nothing is kept when configured filters may run (CODEVOUCH_RUN_GIT_FILTERS=1: a program then
# decides the id), when the configuration has include directives (filter_names reads it each
# time), for symlinks, or for a repository whose index file cannot be found.
_HASHED: dict[tuple[str, str], tuple[tuple[object, ...], str]] = {}
_HASHED_MAX = 50_000
RACY_NS = 2_000_000_000

caches.register("codevouch.worktree.gitio.hashed", _HASHED.clear, _HASHED.__len__)


def hash_context(repo: Path | str) -> tuple[object, ...] | None:
    """What beside a file's own bytes decides the blob id hash-object gives it, repository-wide;
    None when that cannot be told from stat data (then every file is hashed)."""
    if run_filters():
        return None
    root = os.path.abspath(str(repo))
    filter_names(repo)
    config = _FILTERS.get(root)
    index = _index_file(Path(root))
    if config is None or index is None:
        return None
    git_dir = os.path.dirname(index)
    common = git_dir
    try:
        with open(os.path.join(git_dir, "commondir"), "rb") as handle:
            common = os.path.join(git_dir, handle.read(4096).decode("utf-8", "surrogateescape").strip())
    except OSError:
        pass
    home = os.environ.get("HOME") or "/"
    attributes = [os.path.join(common, "info", "attributes"), os.path.join(git_dir, "info", "attributes"),
                  os.path.join(os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config"), "git",
                               "attributes"), *config.attributes]
    return (config.files, config.env, _stat4(index), tuple(_stat4(a) for a in attributes))


def _remembered_hashes(root: str, paths: list[str], context: tuple[object, ...]
                       ) -> tuple[list[str], dict[str, str], dict[str, tuple[object, ...]]]:
    """(paths to hash, ids still good, keys of the paths to remember once hashed)."""
    now = time.time_ns()
    folders: dict[str, tuple[object, ...]] = {}
    todo: list[str] = []
    known: dict[str, str] = {}
    keys: dict[str, tuple[object, ...]] = {}
    for path in paths:
        try:
            st = os.lstat(f"{root}/{path}")
        except (OSError, ValueError):
            todo.append(path)
            continue
        if not stat_module.S_ISREG(st.st_mode):
            todo.append(path)
            continue
        key = (*stat_key(st), context, folder_attributes(root, path, folders))
        hit = _HASHED.get((root, path))
        if hit is not None and hit[0] == key:
            known[path] = hit[1]
            continue
        todo.append(path)
        if settled(st, now):
            keys[path] = key
    return todo, known, keys


def stat_key(st: os.stat_result) -> tuple[int, ...]:
    """What of a file's stat data says it was not written since: device, inode, mode, size,
    mtime and ctime (ctime cannot be set back by a user)."""
    return (st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def settled(st: os.stat_result, now_ns: int) -> bool:
    """The file was last written RACY_NS before `now_ns`: any later write shows in stat_key."""
    return max(st.st_mtime_ns, st.st_ctime_ns) < now_ns - RACY_NS


def folder_attributes(root: str, path: str, seen: dict[str, tuple[object, ...]]) -> tuple[object, ...]:
    """The stat data of every .gitattributes from the top of the work tree down to `path`'s folder
    (`seen`: each folder's, for this call)."""
    return _attributes_down_to(root, path.rpartition("/")[0], seen)


def _attributes_down_to(root: str, folder: str, seen: dict[str, tuple[object, ...]]) -> tuple[object, ...]:
    found = seen.get(folder)
    if found is None:
        own = _stat4(f"{root}/{folder}/.gitattributes" if folder else f"{root}/.gitattributes")
        found = (own,) if not folder else (*_attributes_down_to(root, folder.rpartition("/")[0], seen), own)
        seen[folder] = found
    return found


def start_hash_worktree_files(repo: Path, paths: Iterable[str]) -> PendingHashes:
    return PendingHashes(repo, paths)


def untracked_files(repo: Path) -> list[str]:
    """Files git does not track and does not ignore (the `??` of `git status`)."""
    return zsplit(run(repo, "ls-files", "--others", "--exclude-standard", "-z", "--full-name", "--",
                      ":/"))


def merge_base(repo: Path, a: str, b: str) -> str:
    """The best common ancestor of two commits (UnknownRevision when they share none)."""
    out = run(repo, "merge-base", "--end-of-options", resolve_commit(repo, a), resolve_commit(repo, b),
              ok_codes=(0, 1)).decode().strip()
    if not out:
        raise UnknownRevision(f"{a!r} and {b!r} have no common ancestor.")
    return out


def diff_patch(repo: Path, *revs: str, cached: bool = False) -> bytes:
    """The unified diff between `revs` (none: index vs working tree; one: that commit vs the
    working tree, or vs the index when cached), with git's rename detection, full blob ids,
    no external diff tools or textconv filters, no colour."""
    args = ["diff", "--patch", "--no-color", *NO_PROGRAMS, "-M", "--full-index",
            "--src-prefix=a/", "--dst-prefix=b/", "--submodule=short", "--no-relative"]
    if not cached and len(revs) < 2:
        # The working tree: no `git status` inside a submodule (it would run with the
        # submodule's own configuration).
        args.append("--ignore-submodules=dirty")
    return run(repo, *args, *(["--cached"] if cached else []), *revs, "--")


def grep_words(repo: Path, words: Iterable[str], rev: str | None = None) -> dict[str, set[str]]:
    """word -> the files that contain it as a whole word, in one process.

    rev=None searches the working tree (tracked and untracked files, not ignored ones: the
    working tree is the truth); a rev (a full commit id) searches that commit's tree. Binary
    files are skipped.
    """
    if rev is not None and not _OID.fullmatch(rev):
        raise UnknownRevision(f"grep_words needs a full commit id, not {rev!r}.")
    wanted = [w for w in dict.fromkeys(words) if w and "\n" not in w]
    if not wanted:
        return {}
    args = ["grep", "-z", "-o", "-w", "-F", "-I", "--no-color", "--no-textconv"]
    args += ["--untracked"] if rev is None else []
    for w in wanted:
        args += ["-e", w]
    # Exit 1 means "no match". git grep has no --end-of-options; the rev is a checked object id.
    out = run(repo, *args, *([rev] if rev else []), "--", ok_codes=(0, 1))
    found: dict[str, set[str]] = {}
    prefix = f"{rev}:" if rev else ""
    for path, word in _grep_records(out):
        if word in wanted:
            found.setdefault(word, set()).add(path[len(prefix):] if path.startswith(prefix) else path)
    return found


def _grep_records(out: bytes) -> Iterator[tuple[str, str]]:
    """(path, text) of each `git grep -z` record, `path NUL text LF`. A path may hold a newline
    (it ends at the NUL); the text never does (a match or a line), so it ends at the first LF."""
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    path = fields[0]
    for field in fields[1:]:
        text, sep, following = field.partition("\n")
        yield path, text
        path = following if sep else ""


def worktree_files(repo: Path) -> list[str]:
    """Tracked and untracked (not ignored) files of the working tree, repo-relative."""
    return zsplit(run(repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard"))


def last_commit_touching(repo: Path, path: str) -> str | None:
    """The newest commit on HEAD that changed `path` (None when it never existed there)."""
    out = run(repo, "--literal-pathspecs", "log", "-1", *NO_PROGRAMS, "--format=%H", "HEAD", "--", path,
              ok_codes=(0, 128))
    return out.decode().strip() or None


def paths_in_history(repo: Path, paths: Iterable[str]) -> set[str]:
    """Which of `paths` HEAD's history ever had (check-refs' test of a gone path, for many):
    one `git log -1` for a single path (it stops at the newest commit touching it), else one
    walk of the history listing the commits' changed paths among them. Empty without commits."""
    wanted = sorted(set(paths))
    if len(wanted) == 1:
        return set(wanted) if last_commit_touching(repo, wanted[0]) is not None else set()
    if not wanted:
        return set()
    out = run(repo, "--literal-pathspecs", "log", *NO_PROGRAMS, "--format=", "--name-only", "-z",
              "--no-renames", "HEAD", "--", *wanted, ok_codes=(0, 128))
    return {p.lstrip("\n") for p in zsplit(out)} & set(wanted)


def last_commit_mentioning(repo: Path, word: str) -> str | None:
    """The newest commit on HEAD that changed how often `word` occurs (git's pickaxe, -S)."""
    if not word or "\n" in word:
        return None
    out = run(repo, "log", "-1", *NO_PROGRAMS, "--format=%H", f"-S{word}", "HEAD", "--", ok_codes=(0, 128))
    return out.decode().strip() or None


def parent_commit(repo: Path, commit: str) -> str | None:
    out = run(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{commit}^1^{{commit}}",
              ok_codes=(0, 1))
    return out.decode().strip() or None


def grep_lines(repo: Path, needles: Iterable[str]) -> dict[str, list[str]]:
    """Working-tree files (tracked and untracked, not ignored) holding each needle as a whole
    line, leading and trailing whitespace aside: needle -> repo-relative paths, in one process.

    Needles go on stdin (`-f -`), so none is ever read as an option.
    """
    wanted = {n.strip() for n in needles if n.strip() and "\n" not in n and "\0" not in n}
    if not wanted:
        return {}
    out = run(repo, "grep", "-I", "-z", "-F", "--untracked", "--no-color", "--no-textconv", "-f", "-",
              stdin="".join(f"{n}\n" for n in sorted(wanted)).encode("utf-8", "surrogateescape"),
              ok_codes=(0, 1))
    found: dict[str, list[str]] = {}
    for path, content in _grep_records(out):
        key = content.strip()
        if key in wanted and path not in found.get(key, ()):
            found.setdefault(key, []).append(path)
    return found


LINGUIST_ATTRIBUTES = ("linguist-generated", "linguist-vendored")


def linguist_marks(repo: Path, paths: Iterable[str], commit: str | None = None) -> dict[str, str]:
    """path -> "generated" or "vendored" for the paths that .gitattributes marks
    `linguist-generated` or `linguist-vendored` (set, or `=true`), in one `check-attr` call.

    commit=None: the working tree's .gitattributes (validation). A commit's own
    .gitattributes are read through a temporary index outside the repository (`check-attr
    --source` needs git 2.40), so the repository is not written.
    """
    return marks_of(path_attributes(repo, paths, LINGUIST_ATTRIBUTES, commit))


def marks_of(attributes: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    """linguist_marks from path_attributes' answer (LINGUIST_ATTRIBUTES among those asked)."""
    marks: dict[str, str] = {}
    for path, values in attributes.items():
        for attr in LINGUIST_ATTRIBUTES:
            if values.get(attr) in ("set", "true"):
                marks.setdefault(path, "generated" if attr == "linguist-generated" else "vendored")
    return marks


def unrun_filters(repo: Path, attributes: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    """path -> filter driver for the paths whose `filter` attribute (from path_attributes, with
    "filter" asked) names a driver the configuration defines and codevouch does not run: their
    working-tree hash is not what `git add` would store."""
    if run_filters():
        return {}
    configured = set(filter_names(repo))
    return {path: values["filter"] for path, values in attributes.items()
            if values.get("filter") in configured}


def path_attributes(repo: Path, paths: Iterable[str], attrs: Iterable[str],
                    commit: str | None = None) -> dict[str, dict[str, str]]:
    """path -> {attribute: value} for the attributes that are set (not `unspecified`), in one
    `check-attr` call; commit as for linguist_marks."""
    wanted = [p for p in dict.fromkeys(paths) if p and "\0" not in p]
    names = list(attrs)
    if not wanted or not names:
        return {}
    import tempfile

    with tempfile.TemporaryDirectory(prefix="codevouch-attr-") as tmp:
        env = None
        if commit is not None:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            run(repo, "read-tree", commit, env=env)
        out = run(repo, "check-attr", *(["--cached"] if commit is not None else []), "--stdin", "-z",
                  *names, stdin="\0".join(wanted).encode("utf-8", "surrogateescape") + b"\0", env=env)
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    found: dict[str, dict[str, str]] = {}
    for i in range(0, len(fields) - 2, 3):
        path, attr, value = fields[i:i + 3]
        if value != "unspecified":
            found.setdefault(path, {})[attr] = value
    return found
