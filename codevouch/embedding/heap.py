"""Hand the memory a model's forward pass freed back to the operating system.

glibc's malloc keeps freed memory in its heap, and torch's CPU tensors grow with the texts:
a build embeds its texts shortest first (little padding), so every batch asks for larger blocks
than the freed ones before it, and the heap only grows. On SQLAlchemy (45k chunks) the
embedding loop alone went from 0.5 to 1.47 GiB resident; with `malloc_trim(0)` after each batch
it stays at 0.55 GiB, at the same speed (python -m codevouch_bench.large, docs/BENCHMARKS.md).
`malloc_trim` is glibc's; elsewhere (musl, macOS) this does nothing.
"""
from __future__ import annotations

import ctypes
from functools import lru_cache
from typing import Any

from codevouch.caches import clearable


@clearable
@lru_cache(maxsize=1)
def _trim() -> Any:
    # The symbols this process already has (CDLL(None)), not ctypes.util.find_library("c"):
    # that one runs ldconfig or a compiler to find the library, and codevouch runs no program
    # but git.
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None


def release_freed() -> None:
    trim = _trim()
    if trim is not None:
        trim(0)
