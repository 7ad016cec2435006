"""The files `codevouch hooks` writes and reads in a hooks directory: each hook's text, the
install record, and how a hook the user edited is told apart from what codevouch wrote.

- **The hook's text** holds no value pasted as shell text: every value (the Python, the git
  directory, the index directory, the model) is `shlex.quote`d, comments carry values only
  JSON-encoded (one line, whatever the value holds), and the branch and commit the hook fired
  for are shell variables set when it runs, passed on quoted.
- **The record** (`codevouch-hooks.json` in the repository's git directory, beside `hooks/`:
  a hooks directory shared through `core.hooksPath` holds only hooks) is what install wrote: each
  hook's exact text, and a fingerprint (kind and SHA-256) of the hook it put aside as
  `NAME.codevouch-chained`. Uninstall puts back only a hook the record lists with that same
  fingerprint, and removes only text the record says it wrote.
- **Reads are bounded**: a hook or the record is read only when it is a regular file (opened
  non-blocking, without following a link), up to a cap.
"""
from __future__ import annotations

import difflib
import hashlib
import json
import os
import shlex
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HOOKS = ("post-commit", "post-merge", "post-checkout")
CHAINED = ".codevouch-chained"
RECORD = "codevouch-hooks.json"   # in the git common directory
MAX_HOOK_BYTES = 1 << 20         # a hook script, or the record, larger than this is not read
_MAGIC = b"#!/bin/sh\n# codevouch-hook v"   # v1 (no record, no branch passed on) and v2
_VERSION = 2
_FOR = "# installed for: "
_READ = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def read_regular(path: Path, limit: int = MAX_HOOK_BYTES) -> bytes | None:
    """A regular file's bytes (not through a link; never a FIFO or a device); None when it is
    not one, is unreadable, or is over `limit` bytes."""
    try:
        fd = os.open(path, _READ)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        data = os.read(fd, limit + 1)
        return None if len(data) > limit else data
    except OSError:
        return None
    finally:
        os.close(fd)


def is_ours(path: Path) -> bool:
    """Whether `path` is a hook codevouch wrote (any version): its first bytes say so."""
    data = read_regular(path)
    return data is not None and data.startswith(_MAGIC)


def installed_for(path: Path) -> str | None:
    """The git directory a codevouch hook names as the one it was installed for."""
    data = read_regular(path)
    for line in (data or b"").decode("utf-8", "surrogateescape").splitlines():
        if line.startswith(_FOR):
            try:
                value = json.loads(line[len(_FOR):])
            except ValueError:
                return None
            return value if isinstance(value, str) else None
    return None


def script(name: str, common_dir: Path, index_dir: Path, log: Path, embedder: str, wait: float, chained: bool,
           python: str) -> str:
    """The hook's text: start `codevouch hooks run` for the branch and commit it fired on, in
    the background, then run the chained hook."""
    run = " ".join(shlex.quote(part) for part in (
        python, "-m", "codevouch", "hooks", "run", name, "--for", str(common_dir), "--index", str(index_dir),
        "--embedder", embedder, "--wait", f"{wait:g}"))
    lines = [
        f"#!/bin/sh\n# codevouch-hook v{_VERSION}: {name}",
        f"{_FOR}{json.dumps(str(common_dir))}",
        "# Written by `codevouch hooks install`; `codevouch hooks uninstall` puts back what was here.",
        "# Starts, in the background, an incremental build of the branch git is on as it fires; never delays or fails git.",
        f"# Log: {json.dumps(str(log))}",
        "# On a detached HEAD (a rebase picking commits) there is no branch to build: nothing is started.",
        "cv_branch=$(git symbolic-ref -q --short HEAD 2>/dev/null) || cv_branch=",
        "cv_commit=$(git rev-parse -q --verify HEAD 2>/dev/null) || cv_commit=",
        'if [ -n "$cv_branch" ]; then',
        f'  {run} --branch="$cv_branch" --commit="$cv_commit" -- "$@" </dev/null >>{shlex.quote(str(log))} 2>&1 &',
        "fi",
    ]
    if chained:
        lines += ["# The hook that was here before, run as git ran it (its exit status is this hook's):",
                  f'chained="${{0%/*}}/{name}{CHAINED}"',
                  'if [ -x "$chained" ]; then exec "$chained" "$@"; fi']
    lines.append("exit 0")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Fingerprint:
    """What a hook file was: a link (its target) or a file (its bytes), by SHA-256."""
    kind: str      # "link" or "file"
    sha256: str

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "sha256": self.sha256}


def fingerprint_text(text: str) -> str:
    """The SHA-256 a link's target is fingerprinted by."""
    return hashlib.sha256(os.fsencode(text)).hexdigest()


def fingerprint(path: Path) -> Fingerprint | None:
    """`path`'s fingerprint without following a link; None when it is neither a link nor a
    regular file (or is unreadable)."""
    try:
        if path.is_symlink():
            return Fingerprint("link", fingerprint_text(os.readlink(path)))
        fd = os.open(path, _READ)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        digest = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):     # a hook can be any program: hashed in chunks
            digest.update(chunk)
        return Fingerprint("file", digest.hexdigest())
    except OSError:
        return None
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Entry:
    wrote: str                      # the hook's exact text as install wrote it
    before: Fingerprint | None      # the hook install put aside as NAME.codevouch-chained


@dataclass(frozen=True)
class Record:
    """What install wrote into one hooks directory, for one repository's git directory."""
    for_dir: str
    hooks_dir: str
    hooks: dict[str, Entry]

    def to_json(self) -> dict[str, Any]:
        return {"codevouch_hooks": 1, "for": self.for_dir, "hooks_dir": self.hooks_dir,
                "hooks": {name: {"wrote": e.wrote, "before": e.before.to_json() if e.before else None}
                          for name, e in sorted(self.hooks.items())}}


def load_record(common_dir: Path) -> Record | None:
    """The record install left in the git directory; None when there is none or it does not
    parse (then nothing it would have listed is put back)."""
    data = read_regular(common_dir / RECORD)
    if data is None:
        return None
    try:
        raw = json.loads(data.decode("utf-8"))
        hooks = {}
        for name, entry in raw["hooks"].items():
            before = entry["before"]
            hooks[str(name)] = Entry(str(entry["wrote"]), Fingerprint(str(before["kind"]), str(before["sha256"]))
                                     if before is not None else None)
        return Record(str(raw["for"]), str(raw["hooks_dir"]), hooks)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def write_file(path: Path, text: str, mode: int = 0o755) -> None:
    """Write `path` whole, by a new file renamed over it (never through a link there)."""
    tmp = path.with_name(f".{path.name}.codevouch-tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        os.write(fd, text.encode("utf-8", "surrogateescape"))
        os.fchmod(fd, mode)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def save_record(common_dir: Path, record: Record) -> None:
    write_file(common_dir / RECORD, json.dumps(record.to_json(), indent=1) + "\n", 0o644)


def their_lines(wrote: str, current: str) -> list[str] | None:
    """The lines someone added to a hook codevouch wrote: every line of `wrote` is still there,
    in order, and the rest are theirs. None when a line codevouch wrote was changed or removed:
    then its lines and theirs cannot be told apart."""
    ours, now = wrote.splitlines(keepends=True), current.splitlines(keepends=True)
    added: list[str] = []
    for op, _a0, _a1, b0, b1 in difflib.SequenceMatcher(None, ours, now, autojunk=False).get_opcodes():
        if op == "insert":
            added += now[b0:b1]
        elif op != "equal":
            return None
    return added


def without_ours(wrote: str, added: list[str]) -> str:
    """The hook once codevouch's lines are taken out of it: the user's lines, under the
    `#!/bin/sh` line codevouch wrote first unless theirs begin with one of their own."""
    if added and added[0].startswith("#!"):
        return "".join(added)
    return wrote.splitlines(keepends=True)[0] + "".join(added)
