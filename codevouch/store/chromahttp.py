"""Chroma's HTTP client with a timeout on every call (CODEVOUCH_CHROMA_TIMEOUT, default 5 s).

chromadb's own client waits without limit (`httpx.Client(timeout=None)`): with the server paused
(`kill -STOP`), `search` and `index status` waited for more than 150 s. So the server's heartbeat
is asked first, under the timeout (the client's constructor makes a request of its own, which
nothing could bound), and the client's HTTP session then gets the same timeout for every later
call. A call that times out becomes StoreUnavailable (vectors._store_error) that says so.
"""
from __future__ import annotations

import urllib.error
import urllib.request
from typing import Any

from codevouch import environment

DEFAULT_TIMEOUT: float = environment.CHROMA_TIMEOUT.default


def timed_client(host: str, port: int, ssl: bool, settings: Any, timeout: float = DEFAULT_TIMEOUT) -> Any:
    """chromadb.HttpClient(host, port, ssl, settings), every call of it bounded by `timeout`:
    seconds one call to the Chroma server may take (connect, send, wait for the answer; 0: no
    limit), the caller's CODEVOUCH_CHROMA_TIMEOUT (store/settings.py)."""
    import chromadb
    import httpx

    limit = timeout or None
    try:
        with urllib.request.urlopen(f"{'https' if ssl else 'http'}://{host}:{port}/api/v2/heartbeat",
                                    timeout=limit) as answer:
            answer.read(4096)
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError):
            raise TimeoutError(f"no heartbeat within {limit} s") from exc
        raise
    client = chromadb.HttpClient(host=host, port=port, ssl=ssl, settings=settings)
    session = getattr(getattr(client, "_server", None), "_session", None)
    if session is not None:
        session.timeout = httpx.Timeout(limit)
    return client
