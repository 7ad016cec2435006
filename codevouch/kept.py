"""Answers kept while what they were read from is unchanged: a look at stat data (`Seen`) and the
answers kept under it (`Kept`).

One mechanism for every layer that keeps an answer by a file's stat data: git's answers under a
look at the work tree and git directory (worktree/git/unchanged.py), a search's placements
(retriever/bound.py), a reader's ledger answers (store/ledgerlook.py) and a lexical copy's stamp
and reload (store/lexindex.py). A leaf: the store may not import git, and both need it.

A look is racy when something it saw was written within RACY_NS of it: a second write in the same
clock tick could leave the stat data as they were (git's racy-git problem), so nothing read after
such a look is kept.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Generic, TypeVar

from codevouch import caches

RACY_NS = 2_000_000_000

K = TypeVar("K")
V = TypeVar("V")


@dataclass(frozen=True)
class Seen:
    """What one look saw (`state`: equal states, equal answers) and whether any of it was written
    too recently to trust (`racy`: an answer made after this look must not be kept)."""
    state: tuple[object, ...]
    racy: bool


class Kept(Generic[K, V]):
    """Last answers (`V`) by question (`K`), each returned while a new look sees what the look
    taken before the answer was read saw: bounded, oldest out first, safe across the threads of a
    search over several repositories, and emptied by clear_caches()."""

    def __init__(self, name: str, most: int = 1024) -> None:
        self._held: dict[K, tuple[tuple[object, ...], V]] = {}
        self._lock = threading.Lock()
        self._most = most
        caches.register(name, self._held.clear, self._held.__len__)

    def get(self, key: K, seen: Seen | None) -> V | None:
        """The kept answer when `seen` (this call's look) is the look it was kept under."""
        held = self._held.get(key) if seen is not None else None
        return held[1] if held is not None and seen is not None and held[0] == seen.state else None

    def put(self, key: K, seen: Seen | None, answer: V) -> None:
        """Keep `answer`, unless the look before it could not tell (None) or saw a racy write."""
        if seen is None or seen.racy:
            return
        with self._lock:
            if len(self._held) >= self._most:
                self._held.pop(next(iter(self._held)))
            self._held[key] = (seen.state, answer)

    def drop(self, key: K) -> None:
        """Forget `key`'s answer (what it was read from went away)."""
        with self._lock:
            self._held.pop(key, None)
