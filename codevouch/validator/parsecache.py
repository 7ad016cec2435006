"""Definitions found in a text, kept across validate() calls and keyed by the text itself.

A tree-sitter parse is most of what validating a changed file costs (a few milliseconds per
top-level block), and a long-lived process (the MCP server, an `Index` an agent keeps) checks
the same changed files again and again. What a text defines depends on nothing but the text
and its language, so a cache keyed by both can never be stale: an edited file is a new key.
Bounded by the characters it holds (least recently used out first); `clear()` empties it.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TypeVar

from codevouch import caches

T = TypeVar("T")

_MAX_CHARS = 16_000_000      # texts held, all entries together (~16 MB of ASCII source)
_MAX_ENTRY_CHARS = 2_000_000  # a larger text is parsed each time, never held


class ParseCache:
    def __init__(self, max_chars: int = _MAX_CHARS, max_entry_chars: int = _MAX_ENTRY_CHARS) -> None:
        self._max_chars = max_chars
        self._max_entry = max_entry_chars
        self._entries: OrderedDict[tuple[str, str, str], object] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()   # the MCP server may validate from several threads

    def get(self, kind: str, language: str, text: str, compute: Callable[[], T]) -> T:
        """compute()'s result for this text, computed once while the entry stays. The result
        is shared between callers: never modify it."""
        key = (kind, language, text)
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]  # type: ignore[return-value]  # the key's kind fixes the type
        value = compute()          # outside the lock: a parse takes milliseconds
        if len(text) > self._max_entry:
            return value
        with self._lock:
            if key not in self._entries:
                self._entries[key] = value
                self._chars += len(text)
                while self._chars > self._max_chars and self._entries:
                    (_, _, old), _ = self._entries.popitem(last=False)
                    self._chars -= len(old)
        return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._chars = 0

    def __len__(self) -> int:
        return len(self._entries)


CACHE = ParseCache()
caches.register("codevouch.validator.parsecache.CACHE", CACHE.clear, CACHE.__len__)
