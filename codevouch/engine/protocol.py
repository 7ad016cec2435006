"""What travels on an engine's socket, and who may send it.

A frame is a 4-byte big-endian length, one kind byte and the payload: `J` a JSON object, `B`
raw bytes (stdin, stdout, stderr). One call is one connection:

    client -> {"op": "run", "protocol", "identity", "argv", "cwd", "env", "tty", "encoding"}
    engine -> {"op": "mismatch", "identity"}            another install's or version's engine
           |  {"op": "inprocess", "reason"}             not for the engine: run it in-process (also
                                                          "not served: ...", a caller whose view differs)
           |  {"op": "started"}, then:                  the call left the queue and runs
              {"op": "stdin", "n"}  <- B                the command reads stdin: n bytes at most
           |  ({"op": "write", "fd"} B)* {"op": "exit", "code"}    the answer, in write order
    client -> {"op": "status"} | {"op": "stop"};  engine -> {"op": "status", ...}

Both ends check the other's uid with SO_PEERCRED: an engine serves its own user only, and a
client talks only to an engine of its own user; the engine serves a caller of its user only when
it sees the same files (peerview.py). Pure standard library (the client imports it).
"""
from __future__ import annotations

import json
import os
import socket
import struct
from collections.abc import Mapping
from typing import Any

PROTOCOL = 2                 # 2: the `started` frame (a client times a call from it)
MAX_FRAME = 1 << 30          # a frame longer than this is a broken peer, not an answer
_HEADER = struct.Struct(">IB")

# The request's environment is the caller's whole environment: the command sees it as its Call's
# (a snapshot; codevouch/call.py), git's children are started with it, and the engine's process
# is never changed by it. So a call reads what it would read in-process, whatever the variable.

class PeerError(Exception):
    """The other end is not this user's, or broke the protocol."""


def request_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment a request carries: every variable whose name and value are text."""
    return {k: v for k, v in environ.items() if isinstance(k, str) and isinstance(v, str)}


def peer(sock: socket.socket) -> tuple[int, int]:
    """(pid, uid) of the process at the other end of a Unix socket (SO_PEERCRED)."""
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, _gid = struct.unpack("3i", raw)
    return pid, uid


def check_peer(sock: socket.socket) -> int:
    """The peer's pid; PeerError when it runs as another user."""
    pid, uid = peer(sock)
    if uid != os.getuid():
        raise PeerError(f"peer pid {pid} runs as uid {uid}, not {os.getuid()}")
    return pid


def send_json(sock: socket.socket, obj: Mapping[str, Any]) -> None:
    data = json.dumps(obj, ensure_ascii=True).encode("ascii")
    sock.sendall(_HEADER.pack(len(data), ord("J")) + data)


def send_bytes(sock: socket.socket, data: bytes) -> None:
    sock.sendall(_HEADER.pack(len(data), ord("B")) + data)


def _exactly(sock: socket.socket, n: int) -> bytes:
    parts, got = [], 0
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            raise ConnectionError("the peer closed the connection")
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def recv(sock: socket.socket) -> tuple[str, Any]:
    """("J", dict) or ("B", bytes); ConnectionError when the peer is gone, PeerError when it
    sends what no end of this protocol sends."""
    length, kind = _HEADER.unpack(_exactly(sock, _HEADER.size))
    if length > MAX_FRAME or kind not in (ord("J"), ord("B")):
        raise PeerError(f"a frame of kind {kind} and {length} bytes")
    payload = _exactly(sock, length)
    if kind == ord("B"):
        return "B", payload
    try:
        obj = json.loads(payload)
    except ValueError as exc:
        raise PeerError(f"a frame that is not JSON: {exc}") from exc
    if not isinstance(obj, dict):
        raise PeerError("a JSON frame that is not an object")
    return "J", obj
