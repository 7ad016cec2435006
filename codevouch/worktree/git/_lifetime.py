"""Every git process codevouch starts dies with it, however it ends: SIGTERM, SIGKILL, Ctrl-C, a
crash or a plain exit.

A git child outlives its parent by default: `git hash-object` blocked opening a FIFO, or reading
/dev/zero, went on for ever after codevouch was killed. One watchdog per process does the
killing: a forked copy of this process that leads a process group of its own, into which every
git child is started (`group()`, subprocess's `process_group`, set in the child before git
runs). The watchdog waits on a socket whose other end only this process holds; the kernel
closes it at any death, SIGKILL included, and the watchdog then kills its whole group: every git
child still running (and whatever they started), itself last.

Why not PR_SET_PDEATHSIG from a `preexec_fn`: a preexec function makes subprocess `fork()`
instead of `vfork()`, and fork copies the page tables of the whole process: 14 ms per git start
in a 500 MB process and 117 ms in a 2 GB one (a search holding the model starts a dozen), where
vfork costs 2-5 ms at any size, `process_group` included. The death signal also fires when the
*thread* that started the child ends, which the MCP server's worker threads do. Why a group and
not a list of pids: a child is in the group before it runs, so no kill can fall between its
start and its registration, and a group's id names no other process while its leader lives.

Git children are never in the terminal's foreground group, so a Ctrl-C reaches codevouch only;
it exits, and the watchdog ends them. Their stdin, stdout and stderr are never the terminal.
Python 3.10 has no `process_group`: there, and where fork or process groups are missing, there
is no watchdog and children are on their own.
"""
from __future__ import annotations

import os
import select
import signal
import socket
import sys
import threading

from codevouch.proctitle import set_title

_LOCK = threading.Lock()
_SOCKET: socket.socket | None = None   # this process's end; None until the first git child
_WATCHDOG = 0                          # the watchdog's pid, which is its group's id
_OWNER = 0                             # the pid that started it (a fork must start its own)
AVAILABLE = sys.version_info >= (3, 11) and hasattr(os, "fork") and hasattr(os, "killpg")
# What the watchdog is called in `ps` (proctitle): "<its owner>: git watchdog".
_OWNER_NAME = "codevouch"


def name_owner(name: str) -> None:
    """Name the process whose git children the watchdog guards (`codevouch serve`): the watchdog
    started next is `NAME: git watchdog` in `ps`."""
    global _OWNER_NAME
    _OWNER_NAME = name


def group() -> int | None:
    """The process group to start the next git child in (the watchdog's), started with the
    first child; None where there is no watchdog."""
    if not AVAILABLE:
        return None
    with _LOCK:
        if _SOCKET is not None and _OWNER == os.getpid() and _running(_WATCHDOG):
            return _WATCHDOG
        try:
            return _start()
        except OSError:       # no fork, no socket: the child is on its own
            return None


def _running(pid: int) -> bool:
    """Whether the watchdog still runs (someone may have killed it): it is our child, so an
    ended one is reaped here, which also keeps it from staying a zombie."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return False
    return done == 0


def _start() -> int:
    global _SOCKET, _WATCHDOG, _OWNER
    if _SOCKET is not None:
        _SOCKET.close()
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    pid = os.fork()
    if pid == 0:              # the watchdog: never returns
        ours.close()
        _run(theirs)
    theirs.close()
    try:
        os.setpgid(pid, pid)  # as the watchdog does itself: whichever runs first, the group exists
    except OSError:
        pass                  # it got there first
    _SOCKET, _WATCHDOG, _OWNER = ours, pid, os.getpid()
    return pid


def _run(sock: socket.socket) -> None:
    """The watchdog's whole life: wait until the parent's end of `sock` closes, then kill the
    group. Only what was imported before the fork runs here."""
    try:
        os.setpgid(0, 0)
        set_title(f"{_OWNER_NAME}: git watchdog")
        keep = sock.fileno()
        # Hold nothing of the parent's open: not its stdout (an MCP client reads that pipe to
        # its end), not its index files.
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            if fd != keep:
                os.dup2(null, fd)
        os.closerange(3, keep)
        os.closerange(max(keep, 2) + 1, 1 << 16)
        # The parent's signals from a terminal or a group kill must not end the watchdog before
        # it has done its work (blocked, they stay pending; SIGKILL still ends it).
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT})
        poller = select.poll()
        poller.register(keep, select.POLLIN)
        while True:
            poller.poll()
            try:
                if not sock.recv(64):    # end of file: the parent is gone, however it ended
                    break
            except InterruptedError:
                continue
            except OSError:
                break
        os.killpg(0, signal.SIGKILL)     # every git child left, and the watchdog itself
    finally:
        os._exit(0)


def _forget_in_child() -> None:
    """After a fork (multiprocessing, a user's os.fork): this copy's children are its own; the
    copy of the parent's socket is dropped, and the next git child starts a new watchdog."""
    global _SOCKET, _LOCK
    _LOCK = threading.Lock()      # another thread may have held it at the fork
    if _SOCKET is not None:
        try:
            _SOCKET.close()
        except OSError:
            pass
    _SOCKET = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
