"""Whether a caller sees the engine's files: the pure decision over two /proc views, and the views
read from /proc (this process, a child with fewer capabilities, one that is gone)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import replace

import pytest

from codevouch.engine import peerview

STATUS = """Name:\tpython3
Umask:\t0022
State:\tS (sleeping)
Uid:\t1000\t1000\t1000\t1000
Gid:\t1000\t1000\t1000\t1000
Groups:\t27 1000\x20
CapInh:\t0000000000000000
CapPrm:\t0000000000000000
CapEff:\t0000000000000000
CapBnd:\t000001ffffffffff
CapAmb:\t0000000000000000
NoNewPrivs:\t0
Seccomp:\t0
Seccomp_filters:\t0
"""
NAMESPACES = {"mnt": "mnt:[4026531841]", "user": "user:[4026531837]", "net": "net:[4026531840]"}


def view(status: str = STATUS, label: str | None = "unconfined", root: tuple[int, int] = (2049, 2),
         **namespaces: str) -> peerview.View:
    return peerview.View.parse(status, {**NAMESPACES, **namespaces}, root, label)


def test_the_same_view_is_served() -> None:
    assert peerview.refusal(view(), view()) is None
    # What a view leaves out (the state, the umask, NoNewPrivs) decides nothing.
    other = STATUS.replace("S (sleeping)", "R (running)").replace("0022", "0077").replace("NoNewPrivs:\t0", "NoNewPrivs:\t1")
    assert peerview.refusal(view(), view(other)) is None
    # Spacing is not a difference.
    assert peerview.refusal(view(), view(STATUS.replace("Groups:\t27 1000 ", "Groups:\t27  1000"))) is None


@pytest.mark.parametrize(("caller", "words"), [
    (view(mnt="mnt:[4026532999]"), "mount namespace"),
    (view(user="user:[4026532111]"), "user namespace"),
    (view(net="net:[4026532000]"), "network namespace"),
    (view(root=(2049, 4242)), "root directory"),
    (view(STATUS.replace("CapBnd:\t000001ffffffffff", "CapBnd:\t000001fffffffff9")), "capability bounding set"),
    (view(STATUS.replace("CapEff:\t0000000000000000", "CapEff:\t0000000000000004")), "effective capabilities"),
    (view(STATUS.replace("Groups:\t27 1000 ", "Groups:\t1000")), "supplementary groups"),
    (view(STATUS.replace("Gid:\t1000\t1000\t1000\t1000", "Gid:\t1000\t1000\t1000\t27")), "group ids"),
    (view(STATUS.replace("Seccomp:\t0", "Seccomp:\t2")), "seccomp mode"),
    (view(label="/usr/bin/sandboxed (enforce)"), "security label"),
])
def test_a_caller_that_sees_otherwise_is_not_served(caller: peerview.View, words: str) -> None:
    refused = peerview.refusal(view(), caller)
    assert refused == f"the caller's {words} differs from the engine's"


def test_every_difference_is_named_and_no_view_is_not_served() -> None:
    caller = replace(view(mnt="mnt:[1]"), label=None)
    assert peerview.refusal(view(), caller) == "the caller's mount namespace, security label differ from the engine's"
    assert "cannot be read" in (peerview.refusal(view(), None) or "")
    assert "engine cannot read its own view" in (peerview.refusal(None, view()) or "")


def test_this_process_reads_as_itself_and_a_missing_one_as_none() -> None:
    assert peerview.own_proc_is_ours()
    mine = peerview.read("self")
    assert mine is not None and mine == peerview.read(os.getpid())
    assert dict(mine.namespaces)["mnt"] == os.readlink("/proc/self/ns/mnt")
    assert peerview.refusal(mine, peerview.read(os.getpid())) is None
    assert peerview.read(0) is None                       # SO_PEERCRED's pid for a peer it cannot name
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    assert peerview.read(int(gone.stdout)) is None


def test_a_pidfd_tells_a_process_that_is_gone() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    pidfd = os.pidfd_open(child.pid)
    try:
        assert peerview.still_there(pidfd)
        child.communicate(b"")
        assert not peerview.still_there(pidfd)
        # Without a pidfd /proc is all there is: nothing speaks against the pid.
        assert peerview.still_there(None)
    finally:
        os.close(pidfd)


@pytest.mark.skipif(os.getuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root and setpriv to start a process with fewer capabilities")
def test_a_child_with_a_smaller_bounding_set_reads_as_another_view() -> None:
    child = subprocess.Popen(["setpriv", "--bounding-set", "-dac_override,-dac_read_search", sys.executable, "-c",
                              "import sys; print('up', flush=True); sys.stdin.read()"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None and child.stdout.readline() == b"up\n"    # past setpriv's exec
        refused = peerview.refusal(peerview.read("self"), peerview.read(child.pid))
    finally:
        child.communicate(b"")
    assert refused is not None and "capability bounding set" in refused
