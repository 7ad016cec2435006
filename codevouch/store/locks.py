"""The index directory's two locks: one build at a time (write.lock), and a build's write
batches to the embedded Chroma store versus its readers (vectors.lock; see VectorStore)."""
from __future__ import annotations

import os
import shlex
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from codevouch import environment
from codevouch.errors import BadIndex, IndexBusy, IndexLocked
from codevouch.store.indexdir import IndexDir
from codevouch.store.settings import DEFAULT, StoreSettings

# How long a read waits for a build's write to the embedded Chroma store to finish.
BUSY_TIMEOUT_S: float = environment.BUSY_TIMEOUT.default


@contextmanager
def vector_lock(index_dir: Path, write: bool, enabled: bool, exclusive: bool = False,
                settings: StoreSettings = DEFAULT) -> Iterator[None]:
    """Shared for a reader, exclusive for a writer; a reader waits at most `settings.busy_timeout`
    seconds (CODEVOUCH_BUSY_TIMEOUT of the caller's environment, read when it waits).

    `exclusive` makes a reader's turn exclusive (still bounded, still creating nothing): opening
    an embedded Chroma client writes its SQLite file, so a reader opens it alone."""
    lock_path = IndexDir(index_dir).vectors_lock
    if not enabled:
        yield
        return
    import fcntl

    try:
        # Writers create the lock file; readers never create anything: an index that has no
        # lock file has never been written by a build of this release.
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT if write else os.O_RDONLY, 0o644)
    except FileNotFoundError:
        yield
        return
    except OSError as exc:
        raise BadIndex(f"cannot open {lock_path}: {exc.strerror or exc}.") from exc
    try:
        mode = fcntl.LOCK_EX if write or exclusive else fcntl.LOCK_SH
        timeout = None if write else settings.busy_timeout
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, mode | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if deadline is not None and time.monotonic() >= deadline:
                    raise IndexBusy(
                        f"a build is writing the vector store of {index_dir} and did not finish its write "
                        f"within {timeout:g} s (is it paused?); retry when it has finished, or search with "
                        "--mode lexical, which does not need the vector store.") from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)


@contextmanager
def writer_lock(index_dir: Path, wait: float) -> Iterator[None]:
    """One build at a time per index; a second one waits up to `wait` seconds, then exits."""
    from filelock import FileLock, Timeout

    where = IndexDir(index_dir)
    where.ensure()
    lock = FileLock(str(where.write_lock))
    try:
        lock.acquire(timeout=wait)
    except Timeout as exc:
        raise IndexLocked(
            f"another codevouch build is writing {index_dir}; wait for it to finish, or pass "
            "--wait SECONDS to queue behind it.") from exc
    except OSError as exc:
        # Not a file the lock can be taken on (a directory of that name, a permission): it holds
        # nothing, so removing it loses nothing.
        kind = "a directory" if where.write_lock.is_dir() else "not a lock file codevouch can open"
        raise BadIndex(f"the write lock {where.write_lock} is {kind} ({exc.strerror or exc}); remove it "
                       f"(`rm -r {shlex.quote(str(where.write_lock))}`, when no build is running) and build again.") from exc
    try:
        yield
    finally:
        lock.release()
