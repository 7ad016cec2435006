"""Builds through the running engine: on a thread of their own beside the reads, the same command,
writer lock, summary and exit code as in-process; a killed engine leaves the index readable and
its caller builds in-process."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from codevouch.store.locks import writer_lock
from tests.enginehelp import FAKE, Engines, alive, wait_until
from tests.gitrepo import Repo


def _status(engine: Engines) -> dict:
    return json.loads(engine.cv("serve", "--status", "--json").stdout)


def _start_build(engine: Engines, repo: Repo, *extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "codevouch", "index", "build", *FAKE, *extra], cwd=repo.root,
                            env={**engine.env, "CODEVOUCH_SERVER": "on"}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def _without_seconds(out: bytes) -> dict:
    data = json.loads(out)
    for branch in data["branches"]:
        branch.pop("seconds")
    return data


def test_a_build_runs_in_the_engine_and_a_search_meanwhile_answers(engine: Engines, indexed: Repo) -> None:
    pid = engine.start(indexed.root)
    indexed.commit_files({"src/late.py": "def late_order():\n    return 1\n"})
    index_dir = Path(engine.env["CODEVOUCH_INDEX"])
    with writer_lock(index_dir, 0):     # the build waits for it inside the engine, as a queued build would
        build = _start_build(engine, indexed, "--wait", "300")
        assert wait_until(lambda: _status(engine)["builds"] == 1, 60), engine.log()[-2000:]
        search = engine.cv("search", "cancel order", cwd=indexed.root)
        assert search.returncode == 0 and b"cancel_order" in search.stdout, search.stderr
        assert " call 1 from pid" in engine.log()           # answered by the engine, beside the build
        assert build.poll() is None
    out, err = build.communicate(timeout=300)
    assert build.returncode == 0, err
    assert b"(2 files read): 3 files, 3 chunks" in out      # the edit committed with it
    assert "build 1 from pid" in engine.log() and "build 1: exit 0" in engine.log()
    assert engine.only() == pid and _status(engine)["builds"] == 0


def test_the_summary_and_exit_codes_are_the_in_process_ones(engine: Engines, indexed: Repo) -> None:
    engine.start(indexed.root)
    here = engine.cv("index", "build", *FAKE, "--json", cwd=indexed.root, server="off")
    there = engine.cv("index", "build", *FAKE, "--json", cwd=indexed.root)
    assert there.returncode == here.returncode == 0 and there.stderr == here.stderr
    assert _without_seconds(there.stdout) == _without_seconds(here.stdout)
    assert "build 1: exit 0" in engine.log()
    with writer_lock(Path(engine.env["CODEVOUCH_INDEX"]), 0):   # the same writer lock: exit 4 at once
        locked_here = engine.cv("index", "build", *FAKE, cwd=indexed.root, server="off")
        locked_there = engine.cv("index", "build", *FAKE, cwd=indexed.root)
    assert (locked_there.returncode, locked_there.stdout, locked_there.stderr) == \
        (locked_here.returncode, locked_here.stdout, locked_here.stderr)
    assert locked_there.returncode == 4 and "build 2: exit 4" in engine.log()    # IndexLocked


def test_a_build_with_no_engine_running_runs_in_process_and_starts_none(engine: Engines, indexed: Repo) -> None:
    indexed.commit_files({"src/late.py": "def late_order():\n    return 1\n"})
    done = engine.cv("index", "build", *FAKE, cwd=indexed.root)
    assert done.returncode == 0 and b"(2 files read)" in done.stdout, done.stderr
    assert engine.running() == {}


def test_the_setting_keeps_builds_in_process(engine: Engines, indexed: Repo) -> None:
    engine.start(indexed.root)
    done = engine.cv("index", "build", *FAKE, cwd=indexed.root, env={"CODEVOUCH_SERVER_BUILDS": "off"})
    assert done.returncode == 0, done.stderr
    assert "build 1" not in engine.log()
    bad = engine.cv("index", "build", *FAKE, cwd=indexed.root, env={"CODEVOUCH_SERVER_BUILDS": "maybe"})
    assert bad.returncode != 0 and b"CODEVOUCH_SERVER_BUILDS='maybe' is not on or off" in bad.stderr


def test_a_hooks_build_runs_in_the_engine(engine: Engines, indexed: Repo) -> None:
    engine.start(indexed.root)
    indexed.commit_files({"src/late.py": "def late_order():\n    return 1\n"})
    head = indexed.git("rev-parse", "HEAD").strip()
    git_dir = indexed.git("rev-parse", "--path-format=absolute", "--git-common-dir").strip()
    index_dir = engine.env["CODEVOUCH_INDEX"]
    done = engine.cv("hooks", "run", "post-commit", "--for", git_dir, "--index", index_dir, "--embedder", "fake-bow-64",
                     "--wait", "60", "--branch", "main", "--commit", head, cwd=indexed.root)
    assert done.returncode == 0, done.stderr
    log = (Path(index_dir) / "hooks.log").read_text()
    assert f"built {os.path.realpath(indexed.root)} main@{head[:12]}: 2 files read" in log, log
    assert "build 1 from pid" in engine.log() and "hooks run" in engine.log()


def test_an_engine_killed_mid_build_leaves_the_index_readable_and_the_build_runs_in_process(
        engine: Engines, indexed: Repo) -> None:
    pid = engine.start(indexed.root)
    indexed.commit_files({"src/late.py": "def late_order():\n    return 1\n"})
    with writer_lock(Path(engine.env["CODEVOUCH_INDEX"]), 0):
        build = _start_build(engine, indexed, "--wait", "300")
        assert wait_until(lambda: _status(engine)["builds"] == 1, 60), engine.log()[-2000:]
        os.kill(pid, signal.SIGKILL)
        assert wait_until(lambda: not alive(pid), 30)
        after = engine.cv("search", "cancel order", cwd=indexed.root, server="off")
        assert after.returncode == 0 and b"cancel_order" in after.stdout, after.stderr    # the last build's state
        assert build.poll() is None                                          # its caller now builds here
    out, err = build.communicate(timeout=300)
    assert build.returncode == 0 and b"(2 files read): 3 files" in out, err


def test_a_build_asked_for_once_the_engine_stops_is_sent_back_to_build_in_process(tmp_path: Path) -> None:
    from codevouch.engine import protocol
    from codevouch.engine.building import Builds
    from codevouch.engine.execute import Request

    builds = Builds(lambda line: None)
    builds.stop()                      # the engine stopping: the builds it saw were stopped and waited for
    ours, theirs = socket.socketpair()
    request = Request(("index", "build"), str(tmp_path), {}, (False, False, False), ("utf-8",) * 3, os.getpid())
    try:
        builds.start(None, theirs, request)    # a build asked for meanwhile must not start (nor wait for the app)
        ours.settimeout(30)
        kind, frame = protocol.recv(ours)
        assert (kind, frame) == ("J", {"op": "inprocess", "reason": "stopping"})
        assert builds.started == 0 and builds.running() == 0
    finally:
        ours.close()
        theirs.close()


def test_a_sharded_build_from_the_repository_builds_it_with_an_engine_running(engine: Engines, indexed: Repo) -> None:
    engine.start(indexed.root)
    indexed.commit_files({"src/late.py": "def late_order():\n    return 1\n"})
    # The batch path resolves `.` and the model from its own process: never the engine's directory.
    done = engine.cv("index", "build", "--shard", "1/1", "--json", *FAKE, cwd=indexed.root)
    assert done.returncode == 0, done.stderr
    assert [r["repo"] for r in json.loads(done.stdout)["repos"]] == [os.path.normpath(indexed.root)]
    assert "build 1" not in engine.log()
