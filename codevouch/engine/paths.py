"""Where an engine lives: a private directory per (user, index directory, install), and the
install's identity that a client and an engine must share.

Pure standard library: the client imports this on every forwarded call.

The directory is the first of these that is private (a directory, not a link, owned by this
user, no group or other permission bits) and whose socket path fits AF_UNIX's limit (107 bytes):
`$XDG_RUNTIME_DIR/codevouch/KEY`, then `.codevouch-engine-UID/KEY` beside the index directory,
then `codevouch-engine-UID/KEY` in the temporary directory. None of them fits: no engine, every
call runs in-process.
"""
from __future__ import annotations

import hashlib
import os
import stat
import sys
from pathlib import Path
from typing import NamedTuple

SOCKET_LIMIT = 107      # sun_path is 108 bytes on Linux, one of them the terminating NUL
PACKAGE = Path(__file__).resolve().parent.parent


class Place(NamedTuple):     # not a dataclass: imported by every engine call (environment.Variable says why)
    """One engine's private directory and the files in it."""
    directory: Path

    @property
    def socket(self) -> Path:
        return self.directory / "sock"

    @property
    def log(self) -> Path:
        return self.directory / "engine.log"

    @property
    def lock(self) -> Path:
        return self.directory / "lock"


def identity() -> str:
    """The version, the package's location and the newest modification of its sources: an engine
    whose identity differs from its client's runs other code (an upgrade, an edit) and is
    replaced. About 150 stat calls."""
    from codevouch import __version__

    newest, count = 0, 0
    for folder, _dirs, files in os.walk(PACKAGE):
        for name in files:
            if name.endswith((".py", ".toml")):
                try:
                    newest = max(newest, os.stat(os.path.join(folder, name)).st_mtime_ns)
                except OSError:
                    continue
                count += 1
    return f"{__version__} {PACKAGE} {count} {newest}"


def key(index_dir: Path) -> str:
    """The engine's name: one per user, index directory, package location and interpreter."""
    text = f"{os.getuid()}\0{index_dir}\0{PACKAGE}\0{sys.executable}"
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def private_problem(path: Path) -> str | None:
    """Why `path` is not a private directory of this user (None when it is)."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        return f"{path}: {exc.strerror}"
    if not stat.S_ISDIR(st.st_mode):
        return f"{path} is not a directory"
    if st.st_uid != os.getuid():
        return f"{path} belongs to uid {st.st_uid}, not {os.getuid()}"
    if st.st_mode & 0o077:
        return f"{path} has mode {stat.S_IMODE(st.st_mode):04o}, not 0700"
    return None


def _bases(index_dir: Path, environ: dict[str, str] | os._Environ[str]) -> list[Path]:
    bases = []
    runtime = environ.get("XDG_RUNTIME_DIR") or ""
    if os.path.isabs(runtime):
        try:
            owner = os.stat(runtime)
        except OSError:
            owner = None
        # The spec's directory: the user's own, nobody else's to write.
        if owner is not None and owner.st_uid == os.getuid() and not owner.st_mode & 0o022:
            bases.append(Path(runtime) / "codevouch")
    uid = os.getuid()
    bases.append(index_dir.parent / f".codevouch-engine-{uid}")
    tmp = environ.get("TMPDIR") or ""
    bases.append(Path(tmp if os.path.isabs(tmp) else "/tmp") / f"codevouch-engine-{uid}")
    return bases


def _fits(place: Place) -> bool:
    return len(os.fsencode(str(place.socket))) <= SOCKET_LIMIT


def _make_private(path: Path) -> bool:
    """Create `path` (mode 0700; its parent must exist) unless it is there; whether it is private."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return False
    return private_problem(path) is None


def find(index_dir: Path, environ: dict[str, str] | os._Environ[str], create: bool = False) -> Place | None:
    """The engine's place for `index_dir`: the first candidate that fits and is private, or can
    be made so (its parent exists); with `create`, made (mode 0700). None: no engine."""
    name = key(index_dir)
    for base in _bases(index_dir, environ):
        place = Place(base / name)
        if not _fits(place) or not base.parent.is_dir():
            continue
        if create:
            if _make_private(base) and _make_private(place.directory):
                return place
            continue
        if os.path.lexists(base) and private_problem(base) is not None:
            continue        # there but not private: never used, whatever is inside
        if os.path.lexists(place.directory) and private_problem(place.directory) is not None:
            continue
        return place
    return None


def index_dir_of(argv: list[str], environ: dict[str, str] | os._Environ[str], index_env: str | None) -> Path:
    """The index directory a command line names: `--index DIR`, else $CODEVOUCH_INDEX
    (`index_env`), else $XDG_DATA_HOME/codevouch, else ~/.local/share/codevouch; as the store's
    default_index_dir reads them. A wrong guess costs only warmth: the engine runs the command
    line itself and opens whatever index it names."""
    given: str | None = None
    for n, arg in enumerate(argv):
        if arg == "--":
            break
        if arg == "--index" and n + 1 < len(argv):
            given = argv[n + 1]
        elif arg.startswith("--index="):
            given = arg[len("--index="):]
    if not given:
        given = index_env
    if not given:
        base = os.path.expanduser(environ.get("XDG_DATA_HOME") or "")
        if not os.path.isabs(base):
            base = os.path.join(os.path.expanduser("~"), ".local", "share")
        given = os.path.join(base, "codevouch")
    return Path(os.path.realpath(os.path.expanduser(given)))
