"""Every process-wide cache of codevouch, registered here so that one call clears them all.

    import codevouch
    codevouch.clear_caches()      # the next call works as a fresh process would

A long-lived process (the MCP server, an agent's `Index`, a benchmark) keeps loaded models,
tokenizers, tree-sitter grammars, parsed definitions, blob texts, open readers and answers
from git. None of them can make an answer wrong (each says why where it is defined), but a
benchmark's first-call figure, a test, or a host that wants its memory back needs them gone.
A module that keeps one registers it at import with `register` (or `clearable` for an
`functools.lru_cache`): a module never imported has nothing to clear.

A leaf: it imports nothing of codevouch, so every layer may register here.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import NamedTuple, Protocol, TypeVar


class Cache(NamedTuple):     # not a dataclass: imported by every engine call (environment.Variable says why)
    name: str                      # "<module>.<what>", for tests and for a reader of `registered()`
    clear: Callable[[], None]
    size: Callable[[], int]        # entries held now (0 once cleared)


_lock = threading.Lock()
_caches: dict[str, Cache] = {}


def register(name: str, clear: Callable[[], None], size: Callable[[], int]) -> None:
    """Make a cache clearable by `clear_caches()`; registering a name again replaces it."""
    with _lock:
        _caches[name] = Cache(name, clear, size)


class _LruCached(Protocol):
    __module__: str
    __qualname__: str

    def cache_clear(self) -> None: ...

    def cache_info(self) -> _CacheInfo: ...


class _CacheInfo(Protocol):
    @property
    def currsize(self) -> int: ...


F = TypeVar("F", bound=_LruCached)


def clearable(fn: F) -> F:
    """Register an `functools.lru_cache` / `functools.cache` function (put this decorator above it)."""
    register(f"{fn.__module__}.{fn.__qualname__}", fn.cache_clear, lambda: fn.cache_info().currsize)
    return fn


def registered() -> dict[str, Cache]:
    """The caches of the modules imported so far, by name."""
    with _lock:
        return dict(_caches)


def clear_caches() -> None:
    """Empty every registered cache: what is loaded is loaded again on next use."""
    for cache in registered().values():
        cache.clear()
