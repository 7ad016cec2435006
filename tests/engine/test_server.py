"""The engine's door: who may connect, over what, and how it ends; two callers and a build at once."""
from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from tests.engine.conftest import same
from tests.enginehelp import FAKE, Engines, alive, wait_until
from tests.gitrepo import Repo


def _request(sock: socket.socket, obj: dict) -> bytes:
    data = json.dumps(obj).encode()
    sock.sendall(struct.pack(">IB", len(data), ord("J")) + data)
    sock.settimeout(10)
    chunks = []
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def _socket_inodes(pid: int) -> set[str]:
    """The inodes of the sockets among a process's open files. A descriptor closed between the
    listing and its read is skipped: the engine still opens and closes files while it warms up."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except FileNotFoundError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    return inodes


def test_the_socket_is_private_and_there_is_no_network(engine: Engines, indexed: Repo) -> None:
    assert engine.cv("search", "cancel order", cwd=indexed.root).returncode == 0
    pid = engine.only()
    [sock] = engine.sockets()
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600 and sock.stat().st_uid == os.getuid()
    for folder in (sock.parent, sock.parent.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and folder.stat().st_uid == os.getuid()
    # No TCP or UDP socket among the engine's open files.
    inodes = _socket_inodes(pid)
    assert inodes
    for table in ("tcp", "tcp6", "udp", "udp6"):
        try:
            rows = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        assert not inodes & {row.split()[9] for row in rows}, table


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to connect as another user")
def test_another_user_is_refused_even_through_an_open_door(engine: Engines, indexed: Repo) -> None:
    assert engine.cv("search", "cancel order", cwd=indexed.root).returncode == 0
    engine.only()
    [sock] = engine.sockets()
    # As another user the mode bits stop a connection ...
    probe = [sys.executable, "-c", (
        "import json, os, socket, struct, sys\nos.setgid(65534); os.setuid(65534)\n"
        "s = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect(sys.argv[1])\nexcept OSError as e:\n"
        "    print('refused', e.errno); sys.exit(0)\n"
        "d = json.dumps({'op': 'status'}).encode()\n"
        "try:\n    s.sendall(struct.pack('>IB', len(d), 74) + d)\n    s.settimeout(10)\n    print('answer', s.recv(65536))\n"
        "except OSError as e:\n    print('closed', e.errno)\n"), str(sock)]
    blocked = subprocess.run(probe, capture_output=True, text=True, timeout=60)
    assert blocked.stdout.startswith("refused 13"), blocked     # EACCES
    # ... and with every permission opened, the engine's uid check still answers nothing.
    modes = {p: stat.S_IMODE(p.stat().st_mode) for p in (sock, sock.parent, sock.parent.parent, engine.runtime)}
    try:
        for p in modes:
            os.chmod(p, 0o777)
        opened = subprocess.run(probe, capture_output=True, text=True, timeout=60)
    finally:
        for p, mode in modes.items():
            os.chmod(p, mode)
    assert opened.stdout.strip() in ("answer b''", "closed 32", "closed 104"), opened     # hung up on, unanswered
    assert "runs as uid 65534" in engine.log()


def test_status_and_stop(engine: Engines, indexed: Repo) -> None:
    none = engine.cv("serve", "--status", "--json")
    assert none.returncode == 0 and json.loads(none.stdout)["running"] is False
    assert engine.cv("search", "cancel order", cwd=indexed.root).returncode == 0
    pid = engine.only()
    up = json.loads(engine.cv("serve", "--status", "--json").stdout)
    assert up["running"] is True and up["pid"] == pid and up["calls"] == 0      # the first ran in-process
    assert b"engine pid" in engine.cv("serve", "--status").stdout
    down = engine.cv("serve", "--stop")
    assert down.returncode == 0 and b"stopped the engine" in down.stdout
    assert wait_until(lambda: not alive(pid), 30) and engine.sockets() == []
    assert b"no engine runs" in engine.cv("serve", "--stop").stdout


def test_it_exits_when_idle(engine: Engines, indexed: Repo) -> None:
    assert engine.cv("search", "cancel order", cwd=indexed.root, env={"CODEVOUCH_SERVER_IDLE": "1"}).returncode == 0
    pid = engine.only()
    assert wait_until(lambda: not alive(pid), 60)
    assert "idle for 1 s; exiting" in engine.log() and engine.sockets() == []


def test_two_callers_at_once_are_both_answered_and_a_build_beside_is_not_blocked(engine: Engines,
                                                                                 indexed: Repo) -> None:
    expected = engine.cv("search", "cancel order", cwd=indexed.root, server="off")
    assert same(engine.cv("search", "cancel order", cwd=indexed.root), expected)
    engine.only()
    env = {**engine.env, "CODEVOUCH_SERVER": "on"}
    argv = [sys.executable, "-m", "codevouch", "search", "cancel order"]
    calls = [subprocess.Popen(argv, cwd=indexed.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(2)]
    indexed.commit_files({"src/late.py": "def late():\n    return 1\n"})
    build = subprocess.run([sys.executable, "-m", "codevouch", "index", "build", *FAKE, "--wait", "0"],
                           cwd=indexed.root, env=env, capture_output=True, timeout=300)
    answers = [c.communicate(timeout=300) for c in calls]
    assert build.returncode == 0, build.stderr          # no lock of the engine's stood in its way
    assert all(c.returncode == 0 for c in calls)
    assert all(b"cancel_order" in out for out, _ in answers)
    assert engine.log().count(" call ") == 2          # the first call ran in-process


def test_the_engine_warms_up_on_the_repository_of_the_call_that_started_it(engine: Engines, indexed: Repo) -> None:
    """The engine a first call starts searches that call's repository once (store, lexical copy,
    encoder loaded before the second call), writes no usage record for it, and then answers
    exactly as in-process."""
    import sqlite3

    def records() -> int:
        with sqlite3.connect(Path(engine.env["CODEVOUCH_INDEX"]) / "usage.sqlite") as db:
            return int(db.execute("SELECT count(*) FROM usage").fetchone()[0])

    assert engine.cv("search", "cancel order", cwd=indexed.root / "src").returncode == 0
    before = records()
    engine.only()
    assert wait_until(lambda: json.loads(engine.cv("serve", "--status", "--json").stdout).get("warm_up_s")
                      is not None, 120)
    status = json.loads(engine.cv("serve", "--status", "--json").stdout)
    assert status["warming"] is False and status["calls"] == 0
    assert f"warmed up on {os.path.realpath(indexed.root / 'src')} in" in engine.log()
    assert records() == before
    assert same(engine.cv("search", "cancel order", cwd=indexed.root),
                engine.cv("search", "cancel order", cwd=indexed.root, server="off"))


def test_an_engine_started_by_a_search_across_repositories_warms_them_all(engine: Engines, indexed: Repo) -> None:
    """A first `--all-repos` call starts an engine that searches every repository of the index once
    (bounds, looks, lexical copies loaded before the second call), then answers as in-process."""
    assert engine.cv("search", "cancel order", "--all-repos", cwd=indexed.root).returncode == 0
    engine.only()
    assert wait_until(lambda: json.loads(engine.cv("serve", "--status", "--json").stdout).get("warm_up_s")
                      is not None, 120)
    assert "warmed up on every repository of the index in" in engine.log()
    assert same(engine.cv("search", "cancel order", "--all-repos", cwd=indexed.root),
                engine.cv("search", "cancel order", "--all-repos", cwd=indexed.root, server="off"))


def test_a_directory_where_the_socket_goes_is_refused_in_words(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """Something other than a socket at the socket's path: the engine says what and where, and
    exits 1 (the calls run in-process), not 'this is a bug' with a traceback; it removes nothing."""
    from codevouch.engine import paths
    from codevouch.engine.server import Engine

    base = Path(os.path.realpath("/tmp")) / f"cvs-{os.getpid()}"
    base.mkdir(mode=0o700)
    try:
        place = paths.Place(base / "engine")
        place.directory.mkdir(mode=0o700)
        place.socket.mkdir()
        code = Engine(tmp_path / "index", place, idle=1).serve()
        err = capfd.readouterr().err
        assert code == 1 and f"{place.socket} is a directory, not the engine's socket" in err, err
        assert "Traceback" not in err and "bug" not in err and place.socket.is_dir()
    finally:
        import shutil
        shutil.rmtree(base, ignore_errors=True)


# --- a caller of the same uid that sees less: not served, answered in-process ---------------------

SECRET = "def cancel_order(order):\n    return 'vault-secret'\n"


def _vaulted(engine: Engines, tmp_path: Path) -> tuple[Repo, Path]:
    """A repository under `vault/`, indexed, and an engine warmed up on it, then the vault closed
    (mode 000): only a caller that may override file permissions (root's CAP_DAC_OVERRIDE) reads it."""
    vault = tmp_path / "vault"
    repo = Repo(vault / "repo")
    repo.commit_files({"src/orders.py": SECRET})
    assert engine.cv("index", "build", *FAKE, cwd=repo.root).returncode == 0
    engine.start(repo.root)
    os.chmod(vault, 0)
    return repo, vault


def _served_then_refused(engine: Engines, repo: Repo, tmp_path: Path, wrap: tuple[str, ...], words: str) -> bytes:
    """The engine answers root's own call for the closed repository (it may read it); the wrapped
    caller is not served, the engine's log says why, and the answer (run in-process, with the
    caller's view) shows nothing of the repository. Its stderr."""
    served = engine.cv("search", "cancel order", "--repo", str(repo.root), cwd=tmp_path)
    assert served.returncode == 0 and b"cancel_order" in served.stdout, served
    assert engine.log().count("] call ") == 1
    out = engine.cv("search", "cancel order", "--repo", str(repo.root), cwd=tmp_path, wrap=wrap)
    assert b"cancel_order" not in out.stdout and b"vault-secret" not in out.stdout, out.stdout
    assert out.returncode != 0 and b"Traceback" not in out.stderr, out.stderr
    log = engine.log()
    assert log.count("] call ") == 1, log[-2000:]             # the engine ran no call for it
    assert "not serving pid" in log and f"the caller's {words}" in log and "in-process" in log, log[-2000:]
    return out.stderr


@pytest.mark.skipif(os.getuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root, and setpriv to start a caller without CAP_DAC_OVERRIDE")
def test_a_caller_without_the_engines_capabilities_is_answered_in_process(engine: Engines, tmp_path: Path) -> None:
    # Before, root's engine read the closed repository for a caller that could not, and showed it.
    repo, vault = _vaulted(engine, tmp_path)
    try:
        err = _served_then_refused(engine, repo, tmp_path, (
            "setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--inh-caps", "-all"),
            "permitted capabilities, effective capabilities, capability bounding set differ")
    finally:
        os.chmod(vault, 0o700)
    assert b"permission denied" in err, err


def _can_hide_a_directory() -> bool:
    if os.getuid() != 0 or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", "mount -t tmpfs tmpfs /mnt"],
                           capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(not _can_hide_a_directory(), reason="needs root, unshare and mount to hide a directory")
def test_a_caller_in_another_mount_namespace_is_answered_in_process(engine: Engines, tmp_path: Path) -> None:
    # The caller's own mount namespace puts an empty file system over the vault: the repository
    # is not there for it, and the engine must not show it what is there for the engine.
    repo, vault = _vaulted(engine, tmp_path)
    os.chmod(vault, 0o700)
    hide = ("unshare", "-m", "--propagation", "private", "sh", "-c", 'mount -t tmpfs tmpfs "$0" && exec "$@"', str(vault))
    err = _served_then_refused(engine, repo, tmp_path, hide, "mount namespace differs")
    assert b"codevouch:" in err, err
