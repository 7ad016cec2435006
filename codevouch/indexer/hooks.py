"""Git hooks that keep the index close between nightly builds (`codevouch hooks install`).

This is the one place codevouch writes into a repository, and only when asked: `install`
writes `post-commit`, `post-merge` and `post-checkout` into the repository's hooks directory,
`uninstall` puts back exactly what was there.

- **Where.** `$GIT_COMMON_DIR/hooks`, or `core.hooksPath` when the user set it in their own
  (global or system) git config. The git directories are the ones git resolves (through a
  `.git` file and `commondir`), and they must belong to the repository named: the common
  directory inside it, or, for a linked worktree, the common directory whose `worktrees/`
  entry links back to this work tree. A `.git/commondir` or `.git` file pointing at another
  repository is refused: hooks are never written into a repository the user did not name.
  `core.hooksPath` is read from the configuration files git reads, includes followed (never
  the command line's `-c`); one set by the repository's own config, directly or through an
  `include.path`, is refused: a repository someone handed you could point it anywhere.
- **Chaining.** A hook already there is renamed to `NAME.codevouch-chained` (its bytes, mode,
  and link-ness untouched) and the new hook ends by exec'ing it with git's arguments, so it
  runs exactly as before and its exit status is the hook's. The record (see hookfiles, in the
  git directory) keeps its fingerprint; uninstall renames it back only when it is still that file.
- **Edits are kept.** Uninstall removes a hook only when it is byte for byte what install
  wrote. Lines someone added to it (every line codevouch wrote still there) are kept and only
  codevouch's are taken out; when they cannot be told apart, or keeping them would mean
  changing the hook put aside, it refuses (HooksRefused, exit 2) and changes nothing.
- **Never blocking, never failing git.** The hook starts `codevouch hooks run` in the
  background (input from /dev/null, output appended to `INDEX_DIR/hooks.log`) and returns at
  once; it passes on the branch and commit git is on when the hook fires, and that process
  builds that branch (not whatever HEAD is by the time it runs), queued behind the index's
  writer lock (`wait` seconds), and logs one line per outcome. It never raises.
- **Guarded.** The hook names the git directory it was installed for; run from any other
  repository (a shared `core.hooksPath`, a copied directory) it does nothing.
Installing writes hook files; it never runs a hook, nor anything a repository's config names.
"""
from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codevouch import environment
from codevouch.errors import CodevouchError, InputError
from codevouch.indexer import hookfiles
from codevouch.indexer.hookfiles import CHAINED, HOOKS, Entry, Fingerprint, Record
from codevouch.printable import plural
from codevouch.worktree import gitio

if TYPE_CHECKING:
    from codevouch.store.settings import StoreSettings

__all__ = ["HOOKS", "CHAINED", "DEFAULT_WAIT", "HookFile", "HooksReport", "HooksRefused", "install", "locate",
           "run_hook", "uninstall", "Fired"]

LOG_MAX_BYTES = 1 << 20
DEFAULT_WAIT = 3600.0
_OWN_SCOPES = ("global", "system")   # config files that are the user's, not the repository's


class HooksRefused(InputError):
    """The hooks cannot be installed or removed as things are (exit 2); the message says why
    and what to do, and nothing was changed."""


@dataclass(frozen=True)
class HookFile:
    name: str
    path: Path
    action: str     # installed, chained, updated, unchanged | removed, restored, kept-yours (your lines or
                    # your hook, kept), absent (no hook of codevouch's here)
    chained: Path | None = None  # the hook that was there before, run after ours
    note: str | None = None      # what a person should know about it (a file left as it was, and why)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "path": str(self.path), "action": self.action,
                "chained": str(self.chained) if self.chained else None, "note": self.note}


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


def _common_dir(root: Path) -> Path:
    return gitio.git_dirs(root).common_dir


def _links_back(git_dir: Path, root: Path) -> bool:
    """Whether a linked worktree's git directory names `root` as its work tree (`gitdir`, the
    file git writes there at `git worktree add`)."""
    data = hookfiles.read_regular(git_dir / "gitdir", 1 << 16)
    if data is None:
        return False
    named = Path(os.fsdecode(data.rstrip(b"\r\n")))
    return (git_dir / named if not named.is_absolute() else named).resolve() == (root / ".git").resolve()


def _own_git_dir(root: Path) -> Path:
    """The common git directory of the repository at `root`, refused when it is not this
    repository's: a `.git` file or `commondir` can point anywhere."""
    dirs = gitio.git_dirs(root)
    if dirs.common_dir.is_relative_to(root):
        return dirs.common_dir
    if dirs.git_dir.parent == dirs.common_dir / "worktrees" and _links_back(dirs.git_dir, root):
        return dirs.common_dir      # a linked worktree that its repository lists as its own
    raise HooksRefused(
        f"{root}'s git directory resolves to {dirs.git_dir}, sharing {dirs.common_dir}, which is outside "
        f"{root} and does not list it as one of its worktrees (a `.git` file or `.git/commondir` points "
        "there); codevouch writes hooks only into the git directory of the repository you name, so nothing "
        "is written. Run `codevouch hooks install` in the repository that owns that directory, or repair "
        f"{root / '.git'}.")


def locate(repo: Path | str) -> _Place:
    """The repository's top, git directory, and the hooks directory git runs its hooks from."""
    root = gitio.repo_root(repo)
    common = _own_git_dir(root)
    values = gitio.config_values(root, "core.hooksPath")
    if values and values[-1].scope not in _OWN_SCOPES:
        raise HooksRefused(
            f"core.hooksPath is set in {root}'s own git config ({values[-1].scope} scope, directly or through an "
            f"include.path, to {values[-1].value!r}); codevouch does not write where a repository's config points "
            "(a repository you were handed could point it anywhere). Set core.hooksPath in your global config "
            "instead (`git config --global core.hooksPath DIR`), or remove it from the repository's config "
            "(`git config --show-origin --get-all core.hooksPath` says which file), then run again.")
    if values:
        path = Path(values[-1].value).expanduser()
        return _Place(root, common, path if path.is_absolute() else root / path,
                      f"core.hooksPath in your {values[-1].scope} git config (shared by every repository)")
    hooks = common / "hooks"
    if hooks.is_symlink() and not hooks.resolve().is_relative_to(common):
        raise HooksRefused(f"{hooks} is a link to {hooks.resolve()}, outside the repository's git directory; "
                           "codevouch writes hooks only inside it. Replace the link with a directory, or set "
                           "core.hooksPath in your global config.")
    return _Place(root, common, hooks, "the repository's git directory")


def _record(place: _Place) -> Record | None:
    """The install record for this repository in its hooks directory (one for another
    repository, or none: nothing is known to have been put aside)."""
    record = hookfiles.load_record(place.common_dir)
    ok = record is not None and record.for_dir == str(place.common_dir) and record.hooks_dir == str(place.hooks_dir)
    return record if ok else None


def _check_owner(path: Path, place: _Place, then: str) -> None:
    owner = hookfiles.installed_for(path)
    if owner != str(place.common_dir):
        raise HooksRefused(
            f"{path} is codevouch's hook for another repository ({owner}); {place.hooks_dir} ({place.source}) "
            f"runs the same hooks for every repository. {then}")


def _plan_install(name: str, place: _Place, record: Record | None) -> tuple[str, Fingerprint | None]:
    """How one hook is installed (new, chain or update) and the hook it keeps aside."""
    path, chained = place.hooks_dir / name, place.hooks_dir / f"{name}{CHAINED}"
    if hookfiles.is_ours(path):
        _check_owner(path, place, "Uninstall it there first, or give this repository its own hooks directory.")
        entry = record.hooks.get(name) if record else None
        text = (hookfiles.read_regular(path) or b"").decode("utf-8", "surrogateescape")
        if entry is not None and text != entry.wrote:
            raise HooksRefused(
                f"{path} has changed since codevouch wrote it; installing again would overwrite the change, so "
                "nothing is changed. Run `codevouch hooks uninstall` (it keeps lines you added), then install again.")
        if entry is not None:
            return "update", entry.before
        # Written by a codevouch that kept no record: the hook it chained keeps being run.
        return "update", hookfiles.fingerprint(chained) if os.path.lexists(chained) else None
    if os.path.lexists(chained):
        raise HooksRefused(
            f"{chained} is a hook codevouch kept aside, but {path} is no longer codevouch's hook; "
            f"nothing is changed. Put back the one you want as {path} and remove the other, then run again.")
    if path.is_dir() and not path.is_symlink():
        raise HooksRefused(f"{path} is a directory, not a hook; nothing is changed.")
    if os.path.lexists(path):
        before = hookfiles.fingerprint(path)
        if before is None:
            raise HooksRefused(f"{path} is neither a file nor a link (a FIFO or a device?); nothing is changed.")
        return "chain", before
    return "new", None


def install(repo: Path | str, index_dir: Path, embedder: str, wait: float = DEFAULT_WAIT,
            python: str | None = None) -> HooksReport:
    """Install the three hooks (chaining any that are there); HooksRefused, with nothing written,
    when one of them cannot be installed safely."""
    from codevouch.store.indexdir import IndexDir

    place = locate(repo)
    if place.hooks_dir.exists() and not place.hooks_dir.is_dir():
        raise HooksRefused(f"{place.hooks_dir} (from {place.source}) is not a directory; git cannot run hooks "
                           "from it. Fix it, then run `codevouch hooks install` again.")
    kept = place.common_dir / hookfiles.RECORD
    if os.path.lexists(kept) and hookfiles.read_regular(kept) is None:
        raise HooksRefused(f"{kept}, where codevouch records what it installs, is not a regular file (or is over "
                           f"{hookfiles.MAX_HOOK_BYTES} bytes); nothing is written. Move it aside, then run again.")
    record = _record(place)
    plan = [(name, *_plan_install(name, place, record)) for name in HOOKS]
    IndexDir(index_dir).ensure()
    log = IndexDir(index_dir).hooks_log
    log.touch(exist_ok=True)
    place.hooks_dir.mkdir(parents=True, exist_ok=True)
    done, entries = [], {}
    for name, how, before in plan:
        path, chained = place.hooks_dir / name, place.hooks_dir / f"{name}{CHAINED}"
        text = hookfiles.script(name, place.common_dir, index_dir, log, embedder, wait, before is not None,
                                python or sys.executable)
        if how == "update":
            old = (hookfiles.read_regular(path) or b"").decode("utf-8", "surrogateescape")
            action = "unchanged" if old == text else "updated"
            if action == "updated":
                hookfiles.write_file(path, text)
        else:
            if how == "chain":
                os.rename(path, chained)       # the same file: bytes, mode and times as they were
            hookfiles.write_file(path, text)
            action = "chained" if how == "chain" else "installed"
        entries[name] = Entry(text, before)
        hookfiles.save_record(place.common_dir, Record(str(place.common_dir), str(place.hooks_dir), dict(entries)))
        done.append(HookFile(name, path, action, chained if before is not None else None))
    return HooksReport(place.root, place.hooks_dir, place.source, log, done)


def _restorable(name: str, place: _Place, before: Fingerprint) -> bool:
    """Whether the hook kept aside is still there as install left it; HooksRefused when it changed."""
    chained = place.hooks_dir / f"{name}{CHAINED}"
    if not os.path.lexists(chained):
        return False
    if hookfiles.fingerprint(chained) != before:
        raise HooksRefused(
            f"{chained} is not the hook codevouch put aside at install (its bytes differ from the fingerprint "
            f"install recorded); nothing is changed. If the change is yours, move it back yourself "
            f"(`mv {chained} {place.hooks_dir / name}`), then run `codevouch hooks uninstall` again.")
    return True


def _plan_uninstall(name: str, place: _Place, record: Record | None) -> tuple[str, str | None]:
    """What uninstall does to one hook: (action, the text to leave or a note)."""
    path, chained = place.hooks_dir / name, place.hooks_dir / f"{name}{CHAINED}"
    entry = record.hooks.get(name) if record else None
    if entry is None:
        if hookfiles.is_ours(path):
            _check_owner(path, place, "Run `codevouch hooks uninstall` there; nothing is changed.")
            raise HooksRefused(
                f"{path} is a codevouch hook, but {place.common_dir} holds no record of installing it (an older "
                "codevouch wrote it, or it was copied there), so what it replaced is unknown; nothing is changed. "
                "Run `codevouch hooks install` (it records what it writes), then `codevouch hooks uninstall`.")
        if os.path.lexists(chained):
            return "absent", (f"{chained.name} left as it is: codevouch's install record does not list it, so it "
                              "was not put aside by codevouch")
        return "absent", None
    restore = entry.before is not None and _restorable(name, place, entry.before)
    if not os.path.lexists(path):
        return ("restore", None) if restore else ("absent", None)
    data = hookfiles.read_regular(path)
    text = None if data is None else data.decode("utf-8", "surrogateescape")
    if text == entry.wrote:
        return ("restore", None) if restore else ("remove", None)
    added = None if text is None else hookfiles.their_lines(entry.wrote, text)
    if added is None and (text is None or not hookfiles.is_ours(path)):   # replaced, not edited
        if not restore:     # the hook is yours now: kept, and said so (not "absent": it is there)
            return "left", f"{name} is no longer codevouch's hook (replaced since install): left as it is"
        raise HooksRefused(
            f"{path} is no longer codevouch's hook, and {chained} is the hook it kept aside; "
            "nothing is changed. Keep the one you want as the hook and remove the other.")
    if added is None:
        raise HooksRefused(
            f"{path} is no longer what codevouch wrote, and its lines cannot be told apart from yours (a line "
            "codevouch wrote was changed or removed); nothing is changed. Put codevouch's lines back as they were, "
            f"or remove the file yourself{f' and rename {chained.name} back to {name}' if restore else ''}.")
    if entry.before is not None:
        raise HooksRefused(
            f"{path} holds {plural(len(added), 'line')} you added, and the hook that was there before install is kept aside "
            f"as {chained.name}: uninstall puts that one back byte for byte and would lose your lines, so nothing "
            f"is changed. Copy your lines out of {name} and remove them there, run `codevouch hooks uninstall` "
            f"again (it puts {chained.name} back as {name}), then add your lines to {name}.")
    return "kept-yours", hookfiles.without_ours(entry.wrote, added)


def uninstall(repo: Path | str) -> HooksReport:
    """Remove codevouch's hooks and put back the ones they chained, exactly; keep lines a
    person added to them; HooksRefused, with nothing changed, when that cannot be done."""
    place = locate(repo)
    record = _record(place)
    plan = [(name, *_plan_uninstall(name, place, record)) for name in HOOKS]
    done = []
    for name, how, extra in plan:
        path, chained = place.hooks_dir / name, place.hooks_dir / f"{name}{CHAINED}"
        if how == "restore":
            os.replace(chained, path)
            done.append(HookFile(name, path, "restored"))
        elif how == "remove":
            path.unlink()
            done.append(HookFile(name, path, "removed"))
        elif how == "left":
            done.append(HookFile(name, path, "kept-yours", note=extra))
        elif how == "kept-yours":
            hookfiles.write_file(path, extra or "", os.lstat(path).st_mode & 0o7777)
            done.append(HookFile(name, path, "kept-yours", note="codevouch's lines removed; the lines you added kept"))
        else:
            done.append(HookFile(name, path, "absent", note=extra))
    if record is not None:
        (place.common_dir / hookfiles.RECORD).unlink(missing_ok=True)
    return HooksReport(place.root, place.hooks_dir, place.source, None, done)


@dataclass(frozen=True)
class Fired:
    """The branch and commit git was on when the hook fired (the hook passes them on): the
    build is of that branch, whatever HEAD is by the time it runs."""
    branch: str | None = None    # None: a hook from a codevouch that did not pass it (HEAD's branch now)
    commit: str | None = None


@dataclass(frozen=True)
class Installed:
    """What `hooks install` wrote into the hook's command line (`--for`, `--index`,
    `--embedder`, `--wait`): the git directory the hooks guard, and the index, model and queueing
    time its build uses. Fixed at install, the same for every firing: one record through the run."""
    installed_for: Path
    index_dir: Path
    embedder: str
    wait: float


def run_hook(hook: str, args: list[str], installed: Installed, repo: Path | str = ".", fired: Fired = Fired(),
             store: StoreSettings | None = None, numpy_texts: int | None = None) -> str:
    """What a hook's background process does: build the branch the hook fired on, of the
    repository here, queued behind the writer lock; append one line per step to
    INDEX_DIR/hooks.log. Never raises (a bug is logged with its traceback); returns the
    outcome's line. `store`: the hook process's store settings (its Call's environment; None:
    none set); `numpy_texts`: its CODEVOUCH_BUILD_NUMPY_TEXTS (None: the default)."""
    from codevouch.store.indexdir import IndexDir

    log = IndexDir(installed.index_dir).hooks_log

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
        return note(_run(hook, args, installed, repo, fired, note, store, numpy_texts))
    except Exception as exc:  # the hook must never fail git, nor die without a word
        import traceback

        return note(f"failed: unexpected {type(exc).__name__}: {exc}; this is a bug:\n"
                    + "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))


def _run(hook: str, args: list[str], installed: Installed, repo: Path | str, fired: Fired, note: Any,
         given: StoreSettings | None, numpy_texts: int | None) -> str:
    from codevouch.embedding import embedder_by_name
    from codevouch.errors import DetachedHead, IndexLocked
    from codevouch.indexer.build import build_index
    from codevouch.store.settings import DEFAULT

    store = given if given is not None else DEFAULT
    light = numpy_texts if numpy_texts is not None else environment.BUILD_NUMPY_TEXTS.default

    if hook not in HOOKS:
        raise InputError(f"unknown hook {hook!r}; codevouch installs {', '.join(HOOKS)}.")
    if hook == "post-checkout" and args[2:3] == ["0"]:
        return "skipped: a checkout of files, not of a branch"
    try:
        root = gitio.repo_root(repo)
        if _common_dir(root) != installed.installed_for.resolve():
            return (f"skipped: {root} is not the repository these hooks were installed for "
                    f"({installed.installed_for}); run `codevouch hooks install` in it")
        try:
            branch = fired.branch or gitio.current_branch(root)
        except DetachedHead:
            return f"skipped: HEAD is detached in {root} (a rebase or a checkout of a commit); no branch to build"
        model = embedder_by_name(installed.embedder)
        try:
            summaries = build_index(root, installed.index_dir, model, branches=[branch], wait=0, store=store,
                                    numpy_texts=light)
        except IndexLocked:
            note(f"{root} {branch}: another build holds the index; queued (up to {installed.wait:g}s)")
            summaries = build_index(root, installed.index_dir, model, branches=[branch], wait=installed.wait,
                                    store=store, numpy_texts=light)
    except CodevouchError as exc:
        return f"failed: {type(exc).__name__}: {exc}"
    s = summaries[0]
    state = "up to date" if s.noop else f"{s.indexed_files} files read, {s.embedded} embedded"
    moved = (f" (the hook fired at {fired.commit[:12]}; the branch has moved since)"
             if fired.commit and fired.commit != s.commit else "")
    return f"built {s.repo} {s.branch}@{s.commit[:12]}: {state}, {s.chunks} chunks, {s.seconds:.1f}s{moved}"
