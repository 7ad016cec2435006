"""The resident engine in tests: a private runtime directory, CLIs that use the engine, and every
engine they started stopped at the end (tests/conftest.py turns the engine off for all others).

    from tests.enginehelp import engine, engines_on    # a fixture (import it into the module), or
    with engines_on(env) as engines: engines.cv(...)    # a context of one's own (module scope)
    def test_x(engine, repo):
        done = engine.cv("search", "x", cwd=repo.root)       # through the engine
        here = engine.cv("search", "x", cwd=repo.root, server="off")   # in-process
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

FAKE = ["--embedder", "fake-bow-64"]


def _peer_pid(path: Path) -> int | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(2)
    try:
        sock.connect(str(path))
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        data = b'{"op": "status"}'
        sock.sendall(struct.pack(">IB", len(data), ord("J")) + data)     # a polite probe: the engine answers
        sock.recv(1 << 16)
        return struct.unpack("3i", raw)[0]
    except OSError:
        return None
    finally:
        sock.close()


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def wait_until(cond, timeout: float = 60, step: float = 0.02) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(step)
    return cond()


@dataclass
class Engines:
    """CLIs run against engines whose sockets live under `runtime`."""
    runtime: Path
    env: dict[str, str]
    pids: set[int] = field(default_factory=set)

    def cv(self, *args: str, cwd: Path | None = None, stdin: bytes | str | None = None, server: str = "on",
           env: dict[str, str] | None = None, timeout: float = 300,
           wrap: tuple[str, ...] = ()) -> subprocess.CompletedProcess[bytes]:
        """`python -m codevouch ARGS` with the engine `server` (on: through the engine); `wrap`: a
        command that runs it (`setpriv ...`, `unshare ...`)."""
        full = {**self.env, "CODEVOUCH_SERVER": server, **(env or {})}
        data = stdin.encode() if isinstance(stdin, str) else stdin
        done = subprocess.run([*wrap, sys.executable, "-m", "codevouch", *args], cwd=cwd, env=full, input=data,
                              capture_output=True, timeout=timeout)
        self.pids.update(self.running().values())
        return done

    def sockets(self) -> list[Path]:
        return sorted(p for p in self.runtime.rglob("sock") if p.is_socket())

    def running(self) -> dict[Path, int]:
        """socket -> pid of each engine that answers under the runtime directory."""
        found = {}
        for path in self.sockets():
            pid = _peer_pid(path)
            if pid is not None:
                found[path] = pid
        return found

    def start(self, cwd: Path, env: dict[str, str] | None = None) -> int:
        """Start an engine as a user's first call does (one read call, answered in-process: the
        engine starts after its answer) and return its pid once it listens and has warmed up on
        `cwd` (server.Engine.warm_up), so that no test's edit races the warm-up's search. Not
        `index status`, which starts none (client.STARTS_NONE): `check-refs` of an empty answer."""
        done = self.cv("check-refs", "-", cwd=cwd, env=env, stdin="")
        assert done.returncode == 0, done.stderr
        pid = self.only()
        assert wait_until(lambda: b'"warm_up_s": null' not in self.cv("serve", "--status", "--json", env=env).stdout,
                          120), self.log()[-2000:]
        return pid

    def only(self) -> int:
        """The pid of the one running engine (fails when there is not exactly one)."""
        assert wait_until(lambda: len(self.running()) == 1, 30), self.running()
        pid = next(iter(self.running().values()))
        self.pids.add(pid)
        return pid

    def log(self) -> str:
        return "".join(p.read_text(errors="replace") for p in sorted(self.runtime.rglob("engine.log")))

    def stop_all(self) -> None:
        self.pids.update(self.running().values())
        for pid in self.pids:
            try:
                os.kill(pid, signal.SIGTERM)
            except OSError:
                pass
        for pid in self.pids:
            if not wait_until(lambda pid=pid: not alive(pid), 20):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass


@contextmanager
def engines_on(base_env: dict[str, str]) -> Iterator[Engines]:
    """`base_env` with the engine on (CODEVOUCH_SERVER=on, CI unset) and a short private
    XDG_RUNTIME_DIR; every engine started under it is stopped at the end. For a test (or a
    module-scoped fixture) that runs its own CLIs with `engines.env`."""
    runtime = Path(tempfile.mkdtemp(prefix="cve-", dir="/tmp"))
    os.chmod(runtime, 0o700)
    env = {k: v for k, v in base_env.items() if k != "CI"}
    env.update({"XDG_RUNTIME_DIR": str(runtime), "CODEVOUCH_SERVER": "on"})
    engines = Engines(runtime, env)
    try:
        yield engines
    finally:
        engines.stop_all()
        shutil.rmtree(runtime, ignore_errors=True)


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engines]:
    """engines_on(os.environ) with the index at tmp_path/index."""
    with engines_on({**os.environ, "CODEVOUCH_INDEX": str(tmp_path / "index")}) as engines:
        yield engines
