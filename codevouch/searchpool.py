"""The threads a search across repositories runs its repositories' searches, checks and team
bounds on: the process's own, started at the first such search and kept (codevouch/across.py).

A pool made for each search started ~14 threads a query, ~5% of a warm search across 100
repositories in the engine. A forked child makes its own: its parent's threads do not exist
there, and a pool that counts them would never start one.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

# Repositories searched at once: a search mostly waits on git and SQLite.
WORKERS = 8

T = TypeVar("T")

_POOL: list[tuple[int, ThreadPoolExecutor]] = []    # this process's (by pid)
_LOCK = threading.Lock()


def in_parallel(tasks: Sequence[Callable[[], T]]) -> list[T]:
    """Each task's result, in order; run on up to WORKERS threads (one task: on this one). A task
    must never wait on another task of the pool (a repository's own search runs none): calls that
    share it then queue, and never deadlock."""
    if len(tasks) <= 1:
        return [t() for t in tasks]
    return list(_pool().map(lambda t: t(), tasks))


def start(task: Callable[[], T]) -> Future[T]:
    """`task` started on the pool, its result for whoever asks later (never a task of the pool)."""
    return _pool().submit(task)


def _pool() -> ThreadPoolExecutor:
    with _LOCK:
        if not _POOL or _POOL[0][0] != os.getpid():
            _POOL[:] = [(os.getpid(), ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="codevouch-across"))]
        return _POOL[0][1]
