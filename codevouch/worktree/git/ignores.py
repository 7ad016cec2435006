"""Which working-tree paths git ignores, by its own rules: `.gitignore` files, the repository's
`info/exclude`, and `core.excludesFile`. One `git check-ignore --stdin -z -v` for all paths.

Git, not a copy of its matcher, decides: negations, directory patterns and the order of the
sources are its. A tracked file is never ignored (git's rule: ignore rules apply only to
untracked paths), so a tracked file that matches a pattern is not reported.

Two kinds of path make `check-ignore` fail for the whole batch: one beyond a symbolic link, and
one inside a submodule. Each path is therefore asked about through its *probe*: the path itself,
or its leading part up to the first symlink or nested repository (a directory holding `.git`):
git ignores what lies under an ignored directory, and a nested repository's own rules are not
the superproject's. A batch that fails anyway is split and asked again in halves (at most
MAX_RETRIES more processes); paths git still cannot answer for are `unknown`, never assumed
not ignored.

`check-ignore` opens every ignore file it reads with a blocking open: a FIFO as a `.gitignore`,
`info/exclude` or the global excludes file would hang it for ever. Those files are checked first
(a stat each); when one is not a regular file, git is not asked about the paths it would
apply to (those under that directory; every path, for `info/exclude` or the global file): a
tracked one among them is not ignored (`ls-files --cached`, which opens no ignore file), the
others are `unknown`.
When none of them holds a pattern (no `.gitignore` on the way, the default `info/exclude` of
comments only, no global file), nothing can be ignored and no process is started.
"""
from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from codevouch.errors import GitError
from codevouch.worktree.git._process import zsplit
from codevouch.worktree.git.filters import excludes_file
from codevouch.worktree.git.runner import Pending, run
from codevouch.worktree.safe_read import read_file

# Extra check-ignore processes after a failed batch (halves, then quarters ...).
MAX_RETRIES = 16
# Paths under an ignore file git cannot open that are looked up in the index (on one command line).
MAX_TRACKED_ASKED = 1000
_ARGS = ("check-ignore", "--stdin", "-z", "-v")
# Each path is given as `:(top)<path>`: check-ignore takes pathspec magic (a name starting with
# `:` would be read as magic) but no `--literal-pathspecs`; the long form's rest is the path.
_TOP = ":(top)"


@dataclass(frozen=True)
class Ignored:
    """The answer for a set of repo-relative paths."""
    rules: Mapping[str, str] = field(default_factory=dict)     # ignored path -> "source:line: pattern"
    unknown: Mapping[str, str] = field(default_factory=dict)   # path -> why git could not be asked

    def why(self, rel: str) -> str | None:
        """The rule that ignores `rel`, or why it is treated as ignored; None: not ignored."""
        return self.rules.get(rel) or self.unknown.get(rel)


class PendingIgnored:
    """`ignored(root, paths)` started now, collected by result()."""

    def __init__(self, root: Path, paths: Iterable[str]) -> None:
        self._root = root
        self._probes = _probes(root, sorted(set(paths)))
        probes = set(self._probes.values())
        unsafe, rules = _sources(root, probes) if probes else ({}, False)
        # Probes under a .gitignore git must not open are not asked (every other one is).
        self._unsafe = {probe: why for probe in probes if (why := _under(probe, unsafe)) is not None}
        self._asked = sorted(probes - set(self._unsafe))
        self._pending = Pending(root, *_ARGS, stdin=_feed(self._asked), ok_codes=(0, 1)) \
            if rules and self._asked else None
        # Tracked ones are never ignored, and `ls-files --cached` opens no ignore file.
        self._tracked = Pending(root, "--literal-pathspecs", "ls-files", "-z", "--cached", "--",
                                *sorted(self._unsafe)[:MAX_TRACKED_ASKED]) if self._unsafe else None

    def result(self) -> Ignored:
        found: dict[str, str] = {}
        failed: dict[str, str] = dict(self._unsafe)
        if self._tracked is not None:
            try:
                for path in zsplit(self._tracked.result()):
                    failed.pop(path, None)
            except GitError:
                pass
        if self._pending is not None:
            try:
                found = _parse(self._pending.result())
            except GitError:
                found, more = _retry(self._root, self._asked, [MAX_RETRIES])
                failed.update(more)
        found_rules = {path: found[probe] for path, probe in self._probes.items() if probe in found}
        unknown = {path: failed[probe] for path, probe in self._probes.items() if probe in failed}
        return Ignored(found_rules, unknown)


def _under(probe: str, unsafe: Mapping[str, str]) -> str | None:
    """Why `probe` cannot be asked about: an unsafe ignore file of the whole repository ("*" in
    `unsafe`), or the `.gitignore` of a directory it lies in; else None."""
    if "*" in unsafe:
        return unsafe["*"]
    parts = probe.split("/")[:-1]
    return next((unsafe[d] for n in range(len(parts) + 1) if (d := "/".join(parts[:n])) in unsafe), None)


def ignored(root: Path, paths: Iterable[str]) -> Ignored:
    """Which of `paths` (repo-relative, under the top of the work tree `root`) git ignores."""
    return PendingIgnored(root, paths).result()


def _feed(paths: Iterable[str]) -> bytes:
    return b"".join((_TOP + p).encode("utf-8", "surrogateescape") + b"\0" for p in paths)


def _parse(out: bytes) -> dict[str, str]:
    """check-ignore -v -z: source, line, pattern, path, each NUL-ended. A path whose last matching
    pattern is a negation (`!keep.py`) is listed too, and is not ignored."""
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    found: dict[str, str] = {}
    for n in range(0, len(fields) - 3, 4):
        source, line, pattern, path = fields[n:n + 4]
        if pattern and not pattern.startswith("!"):
            found[path.removeprefix(_TOP)] = f"{source}:{line}: {pattern}"
    return found


def _retry(root: Path, paths: list[str], budget: list[int]) -> tuple[dict[str, str], dict[str, str]]:
    """A failed batch asked again in halves, while the budget of processes lasts."""
    if len(paths) == 1 or budget[0] < 2:
        return {}, dict.fromkeys(paths, "treated as ignored: git could not tell whether it is")
    half = len(paths) // 2
    found: dict[str, str] = {}
    failed: dict[str, str] = {}
    for part in (paths[:half], paths[half:]):
        budget[0] -= 1
        try:
            found.update(_parse(run(root, *_ARGS, stdin=_feed(part), ok_codes=(0, 1))))
        except GitError:
            more, bad = _retry(root, part, budget)
            found.update(more)
            failed.update(bad)
    return found, failed


def _probes(root: Path, paths: list[str]) -> dict[str, str]:
    """path -> what to ask git about: the path, or its leading part through the first symlink or
    nested repository along it (see the module's docstring). One lstat per new directory."""
    seen: dict[str, bool] = {}       # directory prefix -> whether asking stops there

    def stops(prefix: str) -> bool:
        if prefix not in seen:
            full = os.path.join(root, prefix)
            seen[prefix] = os.path.islink(full) or os.path.lexists(os.path.join(full, ".git"))
        return seen[prefix]

    probes: dict[str, str] = {}
    for path in paths:
        parts = path.split("/")
        probe = path
        for n in range(1, len(parts)):
            prefix = "/".join(parts[:n])
            if stops(prefix):
                probe = prefix
                break
        else:
            if os.path.islink(os.path.join(root, path)):
                probe = path      # a symlink itself is a path git answers for
        probes[path] = probe
    return probes


def _sources(root: Path, probes: set[str]) -> tuple[dict[str, str], bool]:
    """(why git must not be asked, by directory whose `.gitignore` it is ("" the root), or "*" for
    the whole repository; whether any ignore rule could apply at all).

    Git must not be asked when an ignore file it would open (the `.gitignore` of each directory
    down to a probe, `info/exclude`, the global excludes file) is not a regular file: a FIFO
    blocks the open. No rule can apply when none of them exists or holds a pattern; then no
    process is needed (a file or two stat'ed instead, the repository's config read once)."""
    dirs = {""}
    for probe in probes:
        parts = probe.split("/")[:-1]
        dirs.update("/".join(parts[:n]) for n in range(1, len(parts) + 1))
    git_dir = _git_dir(root)
    excludes = excludes_file(root)
    followed = [os.path.join(git_dir, "info", "exclude")] if git_dir is not None else []
    followed += [os.path.join(root, excludes)] if excludes is not None else []
    rules = git_dir is None or excludes is None       # unknown: ask
    unsafe: dict[str, str] = {}
    for d in sorted(dirs):
        path = os.path.join(root, d, ".gitignore")
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            continue
        if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):     # git skips a symlinked .gitignore
            unsafe[d] = _unsafe(root, path)
        rules = rules or stat.S_ISREG(mode)
    for path in followed:
        try:
            mode = os.stat(path).st_mode
        except OSError:
            continue
        if not stat.S_ISREG(mode):
            unsafe["*"] = _unsafe(root, path)
        rules = rules or _has_patterns(path)
    return unsafe, rules


def _unsafe(root: Path, path: str) -> str:
    shown = os.path.relpath(path, root) if path.startswith(str(root)) else path
    return (f"treated as ignored: git's ignore file {shown} is not a regular file, so git could not be "
            "asked safely")


# An ignore file larger than this is taken to hold patterns without reading it.
_PATTERN_SNIFF = 1 << 16


def _has_patterns(path: str) -> bool:
    """Whether an ignore file holds a line that is not blank or a comment (git's default
    info/exclude holds only comments)."""
    data = read_file(path, _PATTERN_SNIFF, follow=True)
    if not isinstance(data, bytes):
        return True      # too large to sniff, or changed under us: git decides
    return any(line.strip() and not line.lstrip().startswith(b"#") for line in data.split(b"\n"))


def _git_dir(root: Path) -> str | None:
    """The common git directory of the work tree at `root` (where `info/exclude` lives): `.git`,
    or the directory a `.git` file names and its `commondir`. Each file read is checked to be a
    regular file first and read bounded; None when it cannot be told (then git finds no other)."""
    dot_git = os.path.join(root, ".git")
    if os.path.isdir(dot_git):
        return dot_git
    named = _first_line(dot_git)
    if named is None or not named.startswith("gitdir: "):
        return None
    git_dir = os.path.join(root, named[len("gitdir: "):])
    common = _first_line(os.path.join(git_dir, "commondir"))
    return os.path.join(git_dir, common) if common else git_dir


def _first_line(path: str) -> str | None:
    data = read_file(path, 4096, follow=True)
    if not isinstance(data, bytes):
        return None
    return data.split(b"\n", 1)[0].decode("utf-8", "surrogateescape").strip() or None
