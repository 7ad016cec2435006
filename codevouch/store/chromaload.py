"""chromadb, imported so that no file in the working directory configures it, and the settings
codevouch opens every client with.

chromadb's `Settings` is a pydantic-settings class whose `env_file` is ".env": every one made,
the first while `import chromadb` runs, reads a `.env` in the process's working directory, a
FIFO included (pydantic-settings allows one). A one-shot `codevouch search` runs in the user's
repository, so the repository's `.env` configured chromadb: `CHROMA_PRODUCT_TELEMETRY_IMPL=
this.X` made it import the module `this`, which printed to the terminal, and a `.env` that is a
FIFO hung the call for ever. So before chromadb is imported, pydantic-settings' `BaseSettings`
is made to read no env file unless one is named (its documented `_env_file` argument): chromadb
is the one user of pydantic-settings among codevouch's dependencies. The user's own environment
variables (`CHROMA_*`) apply as before; they are the user's, not the repository's.

`settings()` is made once per process: making one reads every variable and field through
pydantic-settings (~10 ms), and a team reader made two per repository per search, half its time.
"""
from __future__ import annotations

import functools
import threading
from types import ModuleType
from typing import Any

_LOCK = threading.RLock()
_SETTINGS: list[Any] = []


def chromadb() -> ModuleType:
    """The chromadb module, imported after `no_env_file()`."""
    no_env_file()
    import chromadb as module

    return module


def settings() -> Any:
    """chromadb's Settings for a client codevouch opens (no telemetry, no reset): a copy of one
    made once per process (a client writes its path or server into the Settings it is given)."""
    with _LOCK:
        if not _SETTINGS:
            chromadb()
            from chromadb.config import Settings

            _SETTINGS.append(Settings(anonymized_telemetry=False, allow_reset=False))
        return _SETTINGS[0].model_copy()


def no_env_file() -> None:
    """pydantic-settings' BaseSettings reads no env file unless its maker names one (idempotent)."""
    import pydantic_settings

    base = pydantic_settings.BaseSettings
    with _LOCK:
        if getattr(base.__init__, "_codevouch_no_env_file", False):
            return
        made = base.__init__

        @functools.wraps(made)
        def __init__(self: Any, *args: Any, **values: Any) -> None:
            values.setdefault("_env_file", None)
            made(self, *args, **values)

        __init__._codevouch_no_env_file = True  # type: ignore[attr-defined]
        base.__init__ = __init__  # type: ignore[assignment]
