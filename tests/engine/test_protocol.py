"""The engine's frames and its peer check."""
from __future__ import annotations

import os
import socket
import struct

import pytest

from codevouch.engine import protocol


def test_a_request_carries_the_callers_whole_environment() -> None:
    # The engine applies none of it to itself (a Call is a snapshot): a call sees every variable
    # it would see in-process, git's children are started with them, and nothing else is.
    env = {"CODEVOUCH_INDEX": "/i", "HOME": "/h", "LC_ALL": "C", "GIT_CONFIG_GLOBAL": "/g", "PATH": "/bin",
           "LD_PRELOAD": "/evil.so", "PYTHONPATH": "/x", "HTTPS_PROXY": "http://p:3128"}
    assert protocol.request_env({**env, "NOT_TEXT": b"x"}) == env   # type: ignore[dict-item]


def test_frames_round_trip_and_the_peer_is_this_user() -> None:
    a, b = socket.socketpair(socket.AF_UNIX)
    with a, b:
        protocol.send_json(a, {"op": "status", "text": "é\u2028"})
        protocol.send_bytes(a, b"\x00\xff")
        assert protocol.recv(b) == ("J", {"op": "status", "text": "é\u2028"})
        assert protocol.recv(b) == ("B", b"\x00\xff")
        assert protocol.check_peer(b) == os.getpid()


@pytest.mark.parametrize("frame", [
    struct.pack(">IB", 3, ord("X")) + b"abc",           # an unknown kind
    struct.pack(">IB", 5, ord("J")) + b"[1,2]",         # JSON, but not an object
    struct.pack(">IB", 3, ord("J")) + b"{{{",           # not JSON
    struct.pack(">IB", protocol.MAX_FRAME + 1, ord("B")),   # longer than any answer
])
def test_a_broken_frame_is_a_peer_error(frame: bytes) -> None:
    a, b = socket.socketpair(socket.AF_UNIX)
    with a, b:
        a.sendall(frame)
        with pytest.raises(protocol.PeerError):
            protocol.recv(b)


def test_a_closed_peer_is_a_connection_error() -> None:
    a, b = socket.socketpair(socket.AF_UNIX)
    with b:
        a.sendall(struct.pack(">IB", 10, ord("B")) + b"abc")
        a.close()
        with pytest.raises(ConnectionError):
            protocol.recv(b)
