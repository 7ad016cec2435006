"""The process's threads for searches across repositories (codevouch/searchpool.py): results in
order, the same threads from one call to the next, and a forked child that starts its own."""
from __future__ import annotations

import os
import select
import threading

from codevouch import searchpool


def _names() -> set[str]:
    return {t.name for t in threading.enumerate() if t.name.startswith("codevouch-across")}


def test_results_come_in_order_from_the_kept_threads() -> None:
    where: list[str] = []

    def task(n: int) -> int:
        where.append(threading.current_thread().name)
        return n * n
    assert searchpool.in_parallel([lambda n=n: task(n) for n in range(20)]) == [n * n for n in range(20)]
    assert where and all(name.startswith("codevouch-across") for name in where)
    first = _names()
    assert searchpool.in_parallel([lambda: 1, lambda: 2]) == [1, 2]
    assert _names() == first and len(first) <= searchpool.WORKERS
    # One task runs on the caller's thread; a started one on the pool.
    assert searchpool.in_parallel([threading.current_thread]) == [threading.current_thread()]
    assert searchpool.start(lambda: threading.current_thread().name).result().startswith("codevouch-across")


def test_a_forked_child_starts_threads_of_its_own() -> None:
    assert searchpool.in_parallel([lambda: 1, lambda: 2]) == [1, 2]     # the parent's threads exist
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:       # pragma: no cover (the child reports through the pipe)
        try:
            os.write(write, repr(searchpool.in_parallel([lambda: 3, lambda: 4])).encode())
        finally:
            os._exit(0)
    os.close(write)
    done = select.select([read], [], [], 60)[0]     # a child waiting on threads that are not there hangs
    if not done:
        os.kill(pid, 9)
    os.waitpid(pid, 0)
    with os.fdopen(read, "rb") as answer:
        assert done and answer.read() == b"[3, 4]"
