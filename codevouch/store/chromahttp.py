"""Chroma's HTTP client with a timeout on every call (CODEVOUCH_CHROMA_TIMEOUT, default 5 s).

chromadb's own client waits without limit (`httpx.Client(timeout=None)`): with the server paused
(`kill -STOP`), `search` and `index status` waited for more than 150 s. So the server's heartbeat
is asked first, under the timeout (the client's constructor makes a request of its own, which
nothing could bound), and the client's HTTP session then gets the same timeout for every later
call. A call that times out becomes StoreUnavailable (vectors._store_error) that says so.

A process keeps one client per server (`shared_client`): making one cost a team reader about
190 ms of every search's 250 (chromadb's client builds an SSL context and asks the server twice,
even for an http:// address), measured by the bench's across_scale reader rows.
"""
from __future__ import annotations

import threading
import urllib.error
import urllib.request
from typing import Any

from codevouch import caches, environment

DEFAULT_TIMEOUT: float = environment.CHROMA_TIMEOUT.default


def timed_client(host: str, port: int, ssl: bool, settings: Any, timeout: float = DEFAULT_TIMEOUT) -> Any:
    """chromadb.HttpClient(host, port, ssl, settings), every call of it bounded by `timeout`:
    seconds one call to the Chroma server may take (connect, send, wait for the answer; 0: no
    limit), the caller's CODEVOUCH_CHROMA_TIMEOUT (store/settings.py)."""
    import httpx

    from codevouch.store.chromaload import chromadb as load

    chromadb = load()

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


_CLIENTS: dict[tuple[str, int, bool, float], Any] = {}
_CLIENTS_LOCK = threading.Lock()


def shared_client(host: str, port: int, ssl: bool, settings: Any, timeout: float = DEFAULT_TIMEOUT) -> Any:
    """timed_client's client for this server and timeout, made once per process and kept: its
    HTTP session reconnects by itself, and every call on it stays bounded by `timeout`. Never
    closed by a VectorStore (others hold it); clear_caches() lets it go."""
    key = (host, port, ssl, timeout)
    with _CLIENTS_LOCK:
        held = _CLIENTS.get(key)
    if held is not None:
        return held
    client = timed_client(host, port, ssl, settings, timeout)
    with _CLIENTS_LOCK:
        return _CLIENTS.setdefault(key, client)


# Each shared client's collection handles by name, for readers: looking one up is a request of
# its own (get_collection), and a team reader made one per repository for its snapshot's HEAD
# and one for its space, at every search. A handle whose collection was dropped and made again
# since (a forgotten repository built again) answers NotFoundError: VectorStore looks it up anew.
_HANDLES: dict[int, dict[str, Any]] = {}


def handles(client: Any) -> dict[str, Any]:
    """The collection handles kept for `client` (one of shared_client's), by collection name."""
    with _CLIENTS_LOCK:
        return _HANDLES.setdefault(id(client), {})


def _clear() -> None:
    with _CLIENTS_LOCK:
        _CLIENTS.clear()
        _HANDLES.clear()       # keyed by the clients' ids: never kept past them


caches.register("codevouch.store.chromahttp.clients", _clear, _CLIENTS.__len__)
