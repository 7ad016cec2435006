"""Embeddings cached by the hash of the exact text embedded, across methods and runs.

Every method of the quality figure embeds with the same model, and many texts recur (a
40-line window equal to a small file, a chunk shared by two chunkers, reruns): each distinct
text is embedded once, ever, in .bench-cache/embeddings.sqlite. The key is the text itself
(sha256), so a change to what gets embedded (a prefix, another chunk size) misses the cache
as it must.
"""
from __future__ import annotations

import hashlib
import sqlite3
import threading
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from codevouch_bench.lib.common import CACHE


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class CachedEmbedder:
    """Wraps an embedder (name, dim, embed, embed_query) with a persistent cache."""

    def __init__(self, inner: Any, path: Path = CACHE / "embeddings.sqlite") -> None:
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        path.parent.mkdir(parents=True, exist_ok=True)
        # Search embeds its query on a worker thread (codevouch.retriever.search): the connection is
        # shared across threads, one call at a time.
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._lock = threading.RLock()
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS vectors (model TEXT, kind TEXT, key TEXT, vector BLOB, "
                        "PRIMARY KEY (model, kind, key))")
        self.embedded = 0  # texts this process sent to the model (cache misses)

    def _lookup(self, kind: str, keys: list[str]) -> dict[str, list[float]]:
        with self._lock:
            return self._lookup_locked(kind, keys)

    def _lookup_locked(self, kind: str, keys: list[str]) -> dict[str, list[float]]:
        found: dict[str, list[float]] = {}
        for start in range(0, len(keys), 500):
            part = keys[start:start + 500]
            rows = self.db.execute(f"SELECT key, vector FROM vectors WHERE model=? AND kind=? AND key IN "
                                   f"({','.join('?' * len(part))})", (self.name, kind, *part))
            for key, blob in rows:
                vec = array("f")
                vec.frombytes(blob)
                found[key] = vec.tolist()
        return found

    def _store(self, kind: str, items: dict[str, Sequence[float]]) -> None:
        with self._lock:
            self.db.execute("BEGIN")
            self.db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)",
                                [(self.name, kind, k, array("f", v).tobytes()) for k, v in items.items()])
            self.db.execute("COMMIT")

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        keys = [_key(t) for t in texts]
        found = self._lookup("doc", list(dict.fromkeys(keys)))
        missing = {k: t for k, t in zip(keys, texts) if k not in found}
        if missing:
            vectors = self.inner.embed(list(missing.values()))
            self.embedded += len(missing)
            fresh = dict(zip(missing, vectors))
            self._store("doc", fresh)
            found.update(fresh)
        return [found[k] for k in keys]

    def embed_query(self, text: str) -> list[float]:
        key = _key(text)
        found = self._lookup("query", [key])
        if key not in found:
            found[key] = self.inner.embed_query(text)
            self._store("query", found)
        return found[key]
