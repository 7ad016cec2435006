"""Starting one git process that runs nothing the repository or the environment chose.

Every git process codevouch starts is assembled here: the `-c` settings, `--no-pager` and
`--no-optional-locks` (`_command`), an environment without the variables that would point git
at another repository or make it run a program (`_env`), a count by subcommand (PROCESSES), and
one way of saying a failure (`_checked`), and one way of starting it (`_spawn`, which has the
watchdog of `_lifetime` kill it if codevouch dies first, and bounds it: `Limits`). Arguments go
as lists, never through a shell.

The filter drivers a repository's configuration names are turned off a layer up (`filters`),
because finding them takes a git process of its own, started with `_run_raw`; `runner` joins
the two into the `run` and `Pending` every other module calls.
"""
from __future__ import annotations

import math
import os
import re
import select
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codevouch import call, environment
from codevouch.errors import FilterFailed, GitError, GitLimit
from codevouch.worktree.git import _lifetime

try:
    import resource
except ImportError:          # not POSIX: no memory bound (Limits)
    _PRLIMIT = None
else:
    _PRLIMIT = getattr(resource, "prlimit", None)      # Linux's prlimit(2)

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
# git process it starts turns all of them off (SECURITY.md): the `-c` settings below, the
# filter drivers named in the configuration (filters.filter_overrides), `--no-pager`,
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
    # Files a repository's config names, which git opened on read paths: diff.orderFile on every
    # status and diff (a FIFO there hung search; a missing one failed it), mailmap.file on every
    # log and show. No command here orders a diff or shows an author's name, so neither is needed.
    "diff.orderFile=/dev/null",     # an empty order (an empty value is an unreadable path to git)
    "log.mailmap=false",            # no .mailmap, mailmap.file or mailmap.blob read
)

# Opt-in, from the environment only (never from a repository): run the filter drivers that the
# configuration names (git-lfs, git-crypt ...), so hashes of working-tree files match what `git
# add` would store. Off by default: a filter is a program the repository's config chose.
RUN_FILTERS_VAR = environment.RUN_GIT_FILTERS.name

# Environment variables that make git run a program, dropped; the pager ones are set to `cat`.
_PROGRAM_VARS = ("GIT_EXTERNAL_DIFF", "GIT_PAGER", "PAGER", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_EDITOR")


def caller_env() -> environment.Environment:
    """The environment of the call running in this context: the caller's, which the door that
    took the call (the CLI, the engine per request, the api's `Index`) made its `Call` of and
    entered (`Call.entered()` sets a context variable; unset, this process's own variables).

    The one reader of the running call's environment below the api (tests/test_environment_readers.py
    holds every other module to that). Git's children must be started with the caller's
    variables at every use (HOME, XDG_CONFIG_HOME, GIT_CONFIG_*, ssh settings), and so must the
    git facts that follow them (the user's config and attributes files, `~` in a config path,
    the variables that make history unkeyable: filters.py, gitreads.py, rootcache.py ask here).
    Passing the environment through every git call instead would thread it through a hundred
    functions that only reach git; the settings codevouch itself acts on are passed down as values."""
    return environment.current()


def run_filters() -> bool:
    """Whether the user opted in (CODEVOUCH_RUN_GIT_FILTERS=1) to running configured filters."""
    return caller_env().run_git_filters


# The variables that `--config-env` settings take their values from (filters.filter_overrides):
# git reads the value of `--config-env=<key>=<VAR>` from $VAR, which is how a key whose name holds
# an `=` (a filter driver named `x=y`) is set at all. git 2.31 or newer.
EMPTY_VAR = "CV_GIT_EMPTY"   # not CODEVOUCH_*: a setting for git, never read (tests/test_environment.py)
FALSE_VAR = "CV_GIT_FALSE"


def _env() -> dict[str, str]:
    # Read per call, not at import, so a changed environment (HOME in tests) reaches git.
    env = {k: v for k, v in no_git_env(caller_env().raw).items() if k not in _PROGRAM_VARS}
    return {
        **env,
        EMPTY_VAR: "", FALSE_VAR: "false",
        "LC_ALL": "C",
        # `git status` refreshes the index as a side effect; a read-only tool must not write.
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_PAGER": "cat", "PAGER": "cat",
    }


def _command(repo: Path | str, args: tuple[str, ...], extra: tuple[str, ...]) -> tuple[str, ...]:
    safe: list[str] = []
    for setting in SAFE_CONFIG:
        safe += ["-c", setting]
    return ("git", "--no-pager", "--no-optional-locks", *safe, *extra, "-C", str(repo), *args)


# --- every git process is bounded in time and memory -------------------------------------------
#
# A repository can make git read without end (a ref that is a link to /dev/zero drove git to
# 18 GB until the kernel killed it; "git failed ... exit -9" was all codevouch said) or wait for
# ever (a loose object that is a FIFO: `cat-file` blocks in open()). gitreads.guard refuses the
# files every command opens before git starts; these bounds catch the rest, and say which.

@dataclass(frozen=True)
class Limits:
    """What one git process may use (the caller's CODEVOUCH_GIT_TIMEOUT and _GIT_MEMORY_MB, read
    when it starts): `seconds` of wall-clock time (a long-lived `cat-file --batch`: per answer),
    `memory` bytes of data segment (RLIMIT_DATA: what malloc takes; the pack files git maps are
    not counted, so a big repository's history is not cut short by its size on disk); 0 is none."""
    seconds: float
    memory: int

    def deadline(self, started: float) -> float | None:
        """The monotonic time by which a process started at `started` must be done; None: never."""
        return started + self.seconds if self.seconds else None


def limits() -> Limits:
    """The running call's bounds on a git process (SettingError naming the variable when bad)."""
    env = caller_env()
    return Limits(env.git_timeout, env.git_memory_mb << 20)


def remaining(deadline: float | None) -> float | None:
    """Seconds left until `deadline` (never below 0), None for no deadline: a `timeout=` argument."""
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def wait_exit(proc: subprocess.Popen[bytes], deadline: float | None) -> int:
    """`proc`'s exit code once it ends, woken the moment it does; TimeoutExpired once `deadline`
    passes first. `Popen.wait(timeout)` polls with sleeps that double up to 50 ms, so a git that
    ran 20 ms was noticed up to 11 ms late, on every git process a call waits for; a pidfd
    (Linux 5.3) becomes readable at the exit itself. Without one: `Popen.wait(timeout)`."""
    timeout = remaining(deadline)
    code = proc.poll()
    if code is not None or timeout is None:
        return code if code is not None else proc.wait()
    try:
        # Not reaped yet (poll() said so, and only this thread reaps it): the pid is still git's.
        handle = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        return proc.wait(timeout)
    try:
        ready = select.poll()
        ready.register(handle, select.POLLIN)
        if not ready.poll(math.ceil(timeout * 1000)):
            raise subprocess.TimeoutExpired(proc.args, timeout)
    finally:
        os.close(handle)
    return proc.wait()


def _bound_memory(pid: int, memory: int) -> None:
    """Lower the data-segment limit of the git child `pid`, just started, to `memory` bytes.

    Set from here with prlimit(2) rather than in the child before exec: a `preexec_fn` makes
    subprocess fork() instead of vfork(), which costs 14-117 ms per git start in a big process
    (_lifetime's docstring). The child runs for the few microseconds between its exec and this
    call unbounded; the runaway reads this bounds take seconds to reach a gigabyte. Without
    prlimit (not Linux) git runs without the memory bound; the time bound still holds."""
    if not memory or _PRLIMIT is None:
        return
    try:
        _PRLIMIT(pid, resource.RLIMIT_DATA, (memory, memory))
    except (OSError, ValueError):
        pass        # it has ended already, or the limit is above a hard limit set for us: leave it


def over_time(cmd: tuple[str, ...], bound: Limits) -> GitLimit:
    """The error for a git process stopped at its time limit: which command, which limit, what to do."""
    return GitLimit(
        f"git ran longer than its time limit of {bound.seconds:g} s and was stopped "
        f"({_printable_path(' '.join(_shown(cmd)))}); git may be waiting on a FIFO or device the repository "
        f"planted in .git (replace it with a regular file), or the repository is that big: raise "
        f"{environment.GIT_TIMEOUT.name} (seconds; 0: no limit).", cmd, None, "", limit="time")


_OUT_OF_MEMORY = re.compile(r"fatal: Out of memory|cannot allocate memory|unable to allocate", re.IGNORECASE)


def _limit_error(cmd: tuple[str, ...], returncode: int, stderr: str, bound: Limits | None) -> GitError | None:
    """The error for a git process that ran out of the memory it may use, or that a signal killed
    (the kernel's out-of-memory killer, or someone else), in words; None for other failures."""
    shown = _printable_path(" ".join(_shown(cmd)))
    if bound is not None and bound.memory and _OUT_OF_MEMORY.search(stderr):
        return GitLimit(
            f"git needed more than its memory limit of {bound.memory >> 20} MiB and was stopped ({shown}); "
            f"a ref, packed-refs or object in .git may be a link to a device or far too big (replace it), or "
            f"the repository is that big: raise {environment.GIT_MEMORY_MB.name} (MiB; 0: no limit).",
            cmd, returncode, stderr, limit="memory")
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return GitError(
            f"git was killed by {name} ({shown}){': ' + stderr if stderr else ''}; SIGKILL is often the "
            f"kernel's out-of-memory killer: lower {environment.GIT_MEMORY_MB.name} so git stops with a clear "
            "error first, or find what in the repository makes git read so much.", cmd, returncode, stderr)
    return None


# Git processes this process started, by subcommand (tests and benchmarks read it; each start
# counts, whether it succeeded or not).
PROCESSES: Counter[str] = Counter()


def _counted(cmd: tuple[str, ...]) -> None:
    at = cmd.index("-C") + 2 if "-C" in cmd else 1
    PROCESSES[cmd[at] if at < len(cmd) else "?"] += 1


def _run_raw(repo: Path | str, args: tuple[str, ...], extra: tuple[str, ...],
             stdin: bytes | None = None, ok_codes: tuple[int, ...] = (0,),
             env: Mapping[str, str] | None = None) -> bytes:
    # `extra`: the filter guard's `-c` settings (runner.run), or none for the one command that
    # reads the configuration to find them (filters: `git config` runs no filter).
    cmd = _command(repo, args, extra)
    try:
        proc, bound = _spawn(cmd, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    except FileNotFoundError as exc:  # git itself is missing
        raise _missing_git(cmd) from exc
    with proc:
        try:
            stdout, stderr = proc.communicate(stdin, timeout=bound.seconds or None)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise over_time(cmd, bound) from None
        except BaseException:         # Ctrl-C, or anything else: git does not outlive the call
            proc.kill()
            raise
    return _checked(cmd, proc.returncode, stdout, stderr, ok_codes, bound)


def _spawn(cmd: tuple[str, ...], *, stdin: int, stdout: int, stderr: int,
           env: Mapping[str, str] | None = None) -> tuple[subprocess.Popen[bytes], Limits]:
    """Start one git process (`cmd` from `_command`): counted, in the hardened environment
    (`env` on top), its stdin never this process's own (an MCP server's is the client's pipe),
    watched, so it dies with this process (`_lifetime`), and held to the memory of its `Limits`
    (returned with it: the caller holds it to their time). Every git start goes through here,
    so a call whose caller gave up (call.check) stops here, before its next git process."""
    call.check()
    bound = limits()
    _counted(cmd)
    full_env = {**_env(), **(env or {})}
    group = _lifetime.group()
    proc = None
    if group is not None:
        in_group: dict[str, Any] = {"process_group": group}    # Python 3.11's (_lifetime)
        try:
            proc = subprocess.Popen(cmd, stdin=stdin, stdout=stdout, stderr=stderr, env=full_env, **in_group)
        except PermissionError:
            pass              # the watchdog's group ended under us (killed by hand): start unwatched
    if proc is None:
        proc = subprocess.Popen(cmd, stdin=stdin, stdout=stdout, stderr=stderr, env=full_env)
    _bound_memory(proc.pid, bound.memory)
    return proc, bound


# Options for every command that can diff (diff, log, show): no textconv, no external diff.
NO_PROGRAMS = ("--no-textconv", "--no-ext-diff")


def _missing_git(cmd: tuple[str, ...]) -> GitError:
    return GitError("git is not installed or not on PATH; install git and retry.", cmd)


def _shown(cmd: tuple[str, ...]) -> tuple[str, ...]:
    """The part of a git argv a message shows: what follows `-C <repo>`."""
    return cmd[cmd.index("-C") + 2:] if "-C" in cmd else cmd[1:]


_OLD_GIT = re.compile(r"unknown option: --config-env")
_FILTER_FAILED = re.compile(r"fatal: (?P<path>.+?): (?P<side>clean|smudge) filter '(?P<name>[^']*)' failed")


def _printable_path(path: str) -> str:
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in path)[:200]


def _checked(cmd: tuple[str, ...], returncode: int, stdout: bytes, stderr_bytes: bytes,
             ok_codes: tuple[int, ...], bound: Limits | None = None) -> bytes:
    if returncode != 0:
        # Over a limit even where the code is one the caller takes (128: "no such commit").
        limited = _limit_error(cmd, returncode, stderr_bytes.decode("utf-8", "replace").strip(), bound)
        if limited is not None:
            raise limited
    if returncode not in ok_codes:
        stderr = stderr_bytes.decode("utf-8", "replace").strip()
        if _OLD_GIT.search(stderr):
            # Refused rather than run without the filter guard: `-c` cannot name every driver.
            raise GitError(
                "this git is older than 2.31 and cannot take --config-env, which codevouch needs to "
                "turn off the filter drivers this repository's configuration defines (a `-c` setting "
                "cannot name a driver whose name holds `=`); upgrade git to 2.31 or newer.",
                cmd, returncode, stderr)
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
