"""release_freed hands freed heap memory back: measured on this process's own resident set."""
from __future__ import annotations

import os
import platform

import pytest

from codevouch.embedding import heap

glibc = platform.libc_ver()[0] == "glibc"


def _rss_mib() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.skipif(not glibc, reason="malloc_trim is glibc's; elsewhere release_freed does nothing")
def test_memory_freed_in_the_middle_of_the_heap_goes_back_to_the_system() -> None:
    # 64 KiB blocks come from the heap, not from mmap (below glibc's threshold), as a model's
    # smaller tensors do; the last one stays alive, so the heap's top cannot shrink on its own.
    blocks = [bytearray(os.urandom(64)) * 1024 for _ in range(3000)]     # ~190 MiB, touched
    keep = blocks[-1]
    del blocks
    before = _rss_mib()
    heap.release_freed()
    after = _rss_mib()
    assert before - after > 100, (before, after)
    assert len(keep) == 64 * 1024


def test_release_freed_is_harmless_when_nothing_was_freed() -> None:
    heap.release_freed()
    heap.release_freed()
    assert (heap._trim() is not None) == glibc
