"""Every git process codevouch starts dies with it, however it ends: SIGTERM, SIGKILL, Ctrl-C, a
crash or a plain exit.

A git child outlives its parent by default: `git hash-object` blocked opening a FIFO, or reading
/dev/zero, went on for ever after codevouch was killed. One watchdog per process does the
killing: a forked copy of this process that holds a pidfd of every live git child (sent to it
over a socket the moment the child starts) and sends each SIGKILL when this process's end of
the socket closes, which the kernel does at any death, SIGKILL included.

Why not PR_SET_PDEATHSIG from a `preexec_fn`: a preexec function makes subprocess `fork()`
instead of `vfork()`, and fork copies the page tables of the whole process: 14 ms per git start
in a 500 MB process and 117 ms in a 2 GB one (a search holding the model starts a dozen), where
vfork costs 2-5 ms at any size. The death signal also fires when the *thread* that started the
child ends, which the MCP server's worker threads do. The watchdog costs one fork per process
and a pidfd_open plus one sendmsg per git start.

A pidfd names one process, never a later one that got its number: the watchdog cannot kill an
unrelated process after git ended and its pid was reused. Where pidfds or descriptor passing are
missing (not Linux, a kernel before 5.3), there is no watchdog and children are on their own.
"""
from __future__ import annotations

import os
import select
import signal
import socket
import threading

_LOCK = threading.Lock()
_SOCKET: socket.socket | None = None   # this process's end; None until the first git child
_OWNER = 0                             # the pid that started the watchdog (a fork must start its own)
_AVAILABLE = hasattr(os, "pidfd_open") and hasattr(socket, "send_fds") and hasattr(signal, "pidfd_send_signal")


def watch(pid: int) -> None:
    """Have the watchdog kill child `pid` if this process dies first. Call it right after the
    child started, before it is waited for (until then its pid cannot name another process)."""
    if not _AVAILABLE:
        return
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:           # already gone and reaped elsewhere, or pidfds are not allowed here
        return
    try:
        with _LOCK:
            sock = _watchdog()
            if sock is not None:
                socket.send_fds(sock, [b"p"], [pidfd])
    except OSError:
        pass                  # the watchdog is gone (killed by hand): the child is on its own
    finally:
        os.close(pidfd)


def _watchdog() -> socket.socket | None:
    global _SOCKET, _OWNER
    if _SOCKET is not None and _OWNER == os.getpid():
        return _SOCKET
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:              # the watchdog: never returns
        ours.close()
        _run(theirs)
    theirs.close()
    _SOCKET, _OWNER = ours, os.getpid()
    return ours


def _run(sock: socket.socket) -> None:
    """The watchdog's whole life: gather pidfds until the parent's end closes, then kill every
    child still running and exit. Only what was imported before the fork runs here."""
    try:
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
        # it has done its work (blocked, they stay pending until it exits; SIGKILL still ends it).
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT})
        _serve(sock)
    finally:
        os._exit(0)


def _serve(sock: socket.socket) -> None:
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLIN)
    children: set[int] = set()
    while True:
        for fd, _ in poller.poll():
            if fd != sock.fileno():          # a child ended: nothing to kill any more
                poller.unregister(fd)
                children.discard(fd)
                os.close(fd)
                continue
            try:
                data, fds, _, _ = socket.recv_fds(sock, 16, 16)
            except OSError:
                data, fds = b"", []
            if not data and not fds:         # the parent is gone, however it ended
                for child in children:
                    try:
                        signal.pidfd_send_signal(child, signal.SIGKILL)
                    except OSError:
                        pass
                return
            for child in fds:
                children.add(child)
                poller.register(child, select.POLLIN)


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


os.register_at_fork(after_in_child=_forget_in_child)
