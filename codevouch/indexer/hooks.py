"""Git hooks that keep the index close between nightly builds (`codevouch hooks install`).

This is the one place codevouch writes into a repository, and only when asked: `install`
writes `post-commit`, `post-merge` and `post-checkout` into the repository's hooks directory,
`uninstall` puts back exactly what was there.

- **Where.** `$GIT_COMMON_DIR/hooks`, or `core.hooksPath` when the user set it in their own
  (global or system) git config. A `core.hooksPath` set in the repository's own config is
  refused: a repository someone handed you could point it anywhere, and codevouch writes
  nowhere a repository's files choose. The config is read from each file scope
  (`git config --global/--system/--local --get`), never from the command line's `-c`.
- **Chaining.** A hook already there is renamed to `NAME.codevouch-chained` (its bytes, mode,
  and link-ness untouched) and the new hook ends by exec'ing it with git's arguments, so it
  runs exactly as before and its exit status is the hook's. Uninstall renames it back.
- **Never blocking, never failing git.** The hook starts `codevouch hooks run` in the
  background (input from /dev/null, output appended to `INDEX_DIR/hooks.log`) and returns at
  once; that process builds the current branch incrementally, queued behind the index's writer
  lock (`wait` seconds), and logs one line per outcome. It never raises.
- **Guarded.** The hook names the git directory it was installed for; run from any other
  repository (a shared `core.hooksPath`, a copied directory) it does nothing.
Installing writes hook files; it never runs a hook, nor anything a repository's config names.
"""
from __future__ import annotations

import json
import os
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codevouch.errors import CodevouchError, ConfigError, InputError
from codevouch.worktree import gitio

HOOKS = ("post-commit", "post-merge", "post-checkout")
CHAINED = ".codevouch-chained"
LOG_MAX_BYTES = 1 << 20
DEFAULT_WAIT = 3600.0
_MAGIC = b"#!/bin/sh\n# codevouch-hook v1: "
_FOR = "# installed for: "


class HooksRefused(ConfigError):
    """The hooks cannot be installed or removed as things are; the message says why and what to do."""


@dataclass(frozen=True)
class HookFile:
    name: str
    path: Path
    action: str                 # installed, chained, updated, unchanged | removed, restored, absent
    chained: Path | None = None  # the hook that was there before, run after ours

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "path": str(self.path), "action": self.action,
                "chained": str(self.chained) if self.chained else None}


@dataclass(frozen=True)
class HooksReport:
    repo: Path
    hooks_dir: Path
    source: str                 # where the directory came from
    log: Path | None
    hooks: list[HookFile] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"repo": str(self.repo), "hooks_dir": str(self.hooks_dir), "hooks_dir_source": self.source,
                "log": str(self.log) if self.log else None, "hooks": [h.to_json() for h in self.hooks]}


@dataclass(frozen=True)
class _Place:
    root: Path
    common_dir: Path
    hooks_dir: Path
    source: str


def _config(root: Path, scope: str) -> str | None:
    # A file scope reads that one file: `-c` given on the command line does not count. The user's
    # own files are read with the files they include; the repository's without (not followed).
    includes = "--includes" if scope in ("global", "system") else "--no-includes"
    out = gitio.run(root, "config", f"--{scope}", includes, "--get", "core.hooksPath", ok_codes=(0, 1))
    value = out.decode("utf-8", "surrogateescape").strip()
    return value or None


def _common_dir(root: Path) -> Path:
    out = gitio.run(root, "rev-parse", "--path-format=absolute", "--git-common-dir")
    return Path(out.decode("utf-8", "surrogateescape").rstrip("\n")).resolve()


def locate(repo: Path | str) -> _Place:
    """The repository's top, git directory, and the hooks directory git runs its hooks from."""
    root = gitio.repo_root(repo)
    common = _common_dir(root)
    for scope in ("worktree", "local"):
        own = _config(root, scope)
        if own is not None:
            raise HooksRefused(
                f"core.hooksPath is set in {root}'s own git config (to {own!r}); codevouch does not write "
                "where a repository's config points (a repository you were handed could point it anywhere). "
                "Set core.hooksPath in your global config instead (`git config --global core.hooksPath DIR`), "
                "or unset it here (`git config --unset core.hooksPath`), then run `codevouch hooks install` again.")
    for scope in ("global", "system"):
        value = _config(root, scope)
        if value is not None:
            path = Path(value).expanduser()
            return _Place(root, common, path if path.is_absolute() else root / path,
                          f"core.hooksPath in your {scope} git config (shared by every repository)")
    hooks = common / "hooks"
    if hooks.is_symlink() and not hooks.resolve().is_relative_to(common):
        raise HooksRefused(f"{hooks} is a link to {hooks.resolve()}, outside the repository's git directory; "
                           "codevouch writes hooks only inside it. Replace the link with a directory, or set "
                           "core.hooksPath in your global config.")
    return _Place(root, common, hooks, "the repository's git directory")


def _is_ours(path: Path) -> bool:
    if path.is_symlink() or not path.is_file():
        return False
    with path.open("rb") as handle:
        return handle.read(len(_MAGIC)) == _MAGIC


def _installed_for(path: Path) -> str | None:
    for line in path.read_text(encoding="utf-8", errors="surrogateescape").splitlines():
        if line.startswith(_FOR):
            try:
                value = json.loads(line[len(_FOR):])
            except ValueError:
                return None
            return value if isinstance(value, str) else None
    return None


def script(name: str, common_dir: Path, index_dir: Path, embedder: str, wait: float, chained: bool,
           python: str | None = None) -> str:
    """The hook's text: start `codevouch hooks run` in the background, then run the chained hook."""
    from codevouch.store.indexdir import IndexDir

    log = IndexDir(index_dir).hooks_log
    run = " ".join(shlex.quote(part) for part in (
        python or sys.executable, "-m", "codevouch", "hooks", "run", name, "--for", str(common_dir),
        "--index", str(index_dir), "--embedder", embedder, "--wait", f"{wait:g}", "--"))
    lines = [
        f"#!/bin/sh\n# codevouch-hook v1: {name}",
        f"{_FOR}{json.dumps(str(common_dir))}",
        "# Written by `codevouch hooks install`; `codevouch hooks uninstall` puts back what was here.",
        "# Starts an incremental build of the current branch in the background; never delays or fails git.",
        f"# Log: {log}",
        "# On a detached HEAD (a rebase picking commits) there is no branch to build: nothing is started.",
        "if git symbolic-ref -q HEAD >/dev/null 2>&1; then",
        f'  {run} "$@" </dev/null >>{shlex.quote(str(log))} 2>&1 &',
        "fi",
    ]
    if chained:
        lines += ["# The hook that was here before, run as git ran it (its exit status is this hook's):",
                  f'chained="${{0%/*}}/{name}{CHAINED}"',
                  'if [ -x "$chained" ]; then exec "$chained" "$@"; fi']
    lines.append("exit 0")
    return "\n".join(lines) + "\n"


def _write_hook(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.codevouch-tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o755)
    try:
        os.write(fd, text.encode("utf-8", "surrogateescape"))
        os.fchmod(fd, 0o755)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def install(repo: Path | str, index_dir: Path, embedder: str, wait: float = DEFAULT_WAIT,
            python: str | None = None) -> HooksReport:
    """Install the three hooks (chaining any that are there); HooksRefused, with nothing written,
    when one of them cannot be installed safely."""
    from codevouch.store.indexdir import IndexDir

    place = locate(repo)
    if place.hooks_dir.exists() and not place.hooks_dir.is_dir():
        raise HooksRefused(f"{place.hooks_dir} (from {place.source}) is not a directory; git cannot run hooks "
                           "from it. Fix it, then run `codevouch hooks install` again.")
    plan: list[tuple[str, Path, Path, str]] = []
    for name in HOOKS:
        path, chained = place.hooks_dir / name, place.hooks_dir / f"{name}{CHAINED}"
        if _is_ours(path):
            owner = _installed_for(path)
            if owner != str(place.common_dir):
                raise HooksRefused(
                    f"{path} is codevouch's hook for another repository ({owner}); {place.hooks_dir} ({place.source}) "
                    "runs the same hooks for every repository. Uninstall it there first, or give this repository "
                    "its own hooks directory.")
            plan.append((name, path, chained, "update"))
        elif os.path.lexists(chained):
            raise HooksRefused(
                f"{chained} is a hook codevouch kept aside, but {path} is no longer codevouch's hook; "
                f"nothing is changed. Put back the one you want as {path} and remove the other, then run again.")
        elif path.is_dir() and not path.is_symlink():
            raise HooksRefused(f"{path} is a directory, not a hook; nothing is changed.")
        else:
            plan.append((name, path, chained, "chain" if os.path.lexists(path) else "new"))
    IndexDir(index_dir).ensure()
    log = IndexDir(index_dir).hooks_log
    log.touch(exist_ok=True)
    place.hooks_dir.mkdir(parents=True, exist_ok=True)
    done = []
    for name, path, chained, how in plan:
        keeps = how == "chain" or (how == "update" and os.path.lexists(chained))
        text = script(name, place.common_dir, index_dir, embedder, wait, keeps, python)
        if how == "update":
            action = "unchanged" if path.read_text(encoding="utf-8", errors="surrogateescape") == text else "updated"
            if action == "updated":
                _write_hook(path, text)
        else:
            if how == "chain":
                os.rename(path, chained)       # the same file: bytes, mode and times as they were
            _write_hook(path, text)
            action = "chained" if how == "chain" else "installed"
        done.append(HookFile(name, path, action, chained if keeps else None))
    return HooksReport(place.root, place.hooks_dir, place.source, log, done)


def uninstall(repo: Path | str) -> HooksReport:
    """Remove codevouch's hooks and put back the ones they chained, exactly; HooksRefused, with
    nothing changed, when a hook is no longer what codevouch wrote."""
    place = locate(repo)
    plan: list[tuple[str, Path, Path, str]] = []
    for name in HOOKS:
        path, chained = place.hooks_dir / name, place.hooks_dir / f"{name}{CHAINED}"
        if _is_ours(path):
            owner = _installed_for(path)
            if owner != str(place.common_dir):
                raise HooksRefused(f"{path} is codevouch's hook for another repository ({owner}); "
                                   "run `codevouch hooks uninstall` there; nothing is changed.")
            plan.append((name, path, chained, "restore" if os.path.lexists(chained) else "remove"))
        elif os.path.lexists(chained):
            if os.path.lexists(path):
                raise HooksRefused(
                    f"{path} is no longer codevouch's hook, and {chained} is the hook it kept aside; "
                    "nothing is changed. Keep the one you want as the hook and remove the other.")
            plan.append((name, path, chained, "restore"))
        else:
            plan.append((name, path, chained, "absent"))
    done = []
    for name, path, chained, how in plan:
        if how == "restore":
            os.replace(chained, path)
            done.append(HookFile(name, path, "restored"))
        elif how == "remove":
            path.unlink()
            done.append(HookFile(name, path, "removed"))
        else:
            done.append(HookFile(name, path, "absent"))
    return HooksReport(place.root, place.hooks_dir, place.source, None, done)


def run_hook(hook: str, args: list[str], installed_for: Path, index_dir: Path, embedder: str,
             wait: float = DEFAULT_WAIT, repo: Path | str = ".") -> str:
    """What a hook's background process does: build the current branch of the repository here,
    queued behind the writer lock; append one line per step to INDEX_DIR/hooks.log. Never
    raises (a bug is logged with its traceback); returns the outcome's line."""
    from codevouch.store.indexdir import IndexDir

    log = IndexDir(index_dir).hooks_log

    def note(line: str) -> str:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        text = f"{stamp} {hook} pid {os.getpid()}: {line}"
        try:
            if log.is_file() and log.stat().st_size > LOG_MAX_BYTES:
                os.replace(log, log.with_name(log.name + ".1"))
            with log.open("a", encoding="utf-8", errors="backslashreplace") as out:
                out.write(text + "\n")
        except OSError:
            pass
        return text

    try:
        return note(_run(hook, args, installed_for, index_dir, embedder, wait, repo, note))
    except Exception as exc:  # the hook must never fail git, nor die without a word
        import traceback

        return note(f"failed: unexpected {type(exc).__name__}: {exc}; this is a bug:\n"
                    + "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))


def _run(hook: str, args: list[str], installed_for: Path, index_dir: Path, embedder: str, wait: float,
         repo: Path | str, note: Any) -> str:
    from codevouch.embedding import embedder_by_name
    from codevouch.errors import DetachedHead, IndexLocked
    from codevouch.indexer.build import build_index

    if hook not in HOOKS:
        raise InputError(f"unknown hook {hook!r}; codevouch installs {', '.join(HOOKS)}.")
    if hook == "post-checkout" and args[2:3] == ["0"]:
        return "skipped: a checkout of files, not of a branch"
    try:
        root = gitio.repo_root(repo)
        if _common_dir(root) != installed_for.resolve():
            return (f"skipped: {root} is not the repository these hooks were installed for "
                    f"({installed_for}); run `codevouch hooks install` in it")
        try:
            branch = gitio.current_branch(root)
        except DetachedHead:
            return f"skipped: HEAD is detached in {root} (a rebase or a checkout of a commit); no branch to build"
        model = embedder_by_name(embedder)
        try:
            summaries = build_index(root, index_dir, model, branches=[branch], wait=0)
        except IndexLocked:
            note(f"{root} {branch}: another build holds the index; queued (up to {wait:g}s)")
            summaries = build_index(root, index_dir, model, branches=[branch], wait=wait)
    except CodevouchError as exc:
        return f"failed: {type(exc).__name__}: {exc}"
    s = summaries[0]
    state = "up to date" if s.noop else f"{s.indexed_files} files read, {s.embedded} embedded"
    return f"built {s.repo} {s.branch}@{s.commit[:12]}: {state}, {s.chunks} chunks, {s.seconds:.1f}s"
