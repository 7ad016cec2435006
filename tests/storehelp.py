"""Reading the vector store from tests, each time through a fresh, closed client (a client
left open keeps serving what it saw when it opened)."""
from __future__ import annotations

import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import pytest

from codevouch.store import (
    BranchState,
    BuildChange,
    ChunkRecord,
    FileRow,
    Ledger,
    NewChunk,
    VectorStore,
    chunk_id,
    collection_base,
    lex_key,
    lexical,
)


def vector_count(index_dir: Path, name: str) -> int:
    with VectorStore(index_dir) as store:
        return store.count(name)


def collection_names(index_dir: Path) -> set[str]:
    with VectorStore(index_dir) as store:
        return set(store.collections())


# -- hand-made ledger data: what a build would commit, without git or a model ------------------
SPACE = "cv-0123456789abcdef0123-txt"
MODEL = "fake-bow-64"


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def new_chunks(path: str, blob: str, texts: list[str], kind: str = "source") -> list[NewChunk]:
    """The chunks of one file version, one per text, each on its own line."""
    return [NewChunk(n, ChunkRecord(chunk_id(path, blob, n), "/repo", path, "?", "c0ffee", "2026-01-01T00:00:00Z",
                                    f"sym{n}", n + 1, n + 1, "2026-01-01T00:00:00Z", blob, text_hash(t), kind,
                                    "python", "live"))
            for n, t in enumerate(texts)]


def branch_state(branch: str, commit: str = "c0ffee", space: str = SPACE) -> BranchState:
    return BranchState(collection_base("repo-id", branch), "/repo", branch, commit, "2026-01-01T00:00:00Z",
                       "2026-01-01T00:00:00Z", MODEL, "{}", "repo-id", None, space)


def file_change(state: BranchState, files: dict[tuple[str, str], list[str]], held: Ledger | None = None,
                **extra: Any) -> BuildChange:
    """A BuildChange that makes `files` ({(path, blob): texts}) the branch's live files, with the
    chunks and lexical rows the space lacks (`held`: the ledger to ask; none: it lacks all)."""
    chunks, lexical_docs, rows = [], [], []
    for (path, blob), texts in files.items():
        made = new_chunks(path, blob, texts)
        known = held.blob_chunks(SPACE, [(path, blob)]) if held is not None else {}
        if not known:
            chunks += made
            for c, t in zip(made, texts):
                key = lex_key(path, c.record.symbol, c.record.text_hash)
                if held is None or not held.space_lex_keys(SPACE, [key]):
                    lexical_docs.append((key, lexical.document(t, path, c.record.symbol)))
        rows.append(FileRow(path, blob, "source", None, "python", "live", None, len(texts)))
    return BuildChange(state=state, chunks=chunks, lexical=list(dict(lexical_docs).items()), files=rows, **extra)


@contextmanager
def chroma_server(data: Path, not_started: Callable[[str], NoReturn] = pytest.fail
                  ) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A real `chroma run` on a free loopback port, storing under `data`: (its URL, its process).
    Skips when the chroma CLI is not installed; `not_started` (fail, or skip) when it does not
    answer its heartbeat within ~60 s (a loaded 2-core machine is slow to start it). Stopped on
    exit, resumed first in case a test paused it (SIGSTOP)."""
    exe = shutil.which("chroma") or str(Path(sys.executable).parent / "chroma")
    if not Path(exe).exists():
        pytest.skip("the chroma CLI is not installed")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([exe, "run", "--path", str(data), "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        else:
            not_started("the chroma server did not start")
        yield url, proc
    finally:
        os.kill(proc.pid, signal.SIGCONT)
        proc.terminate()
        proc.wait(timeout=10)
