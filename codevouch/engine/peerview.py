"""Whether a caller sees the files the engine sees: same uid is not the same view.

The engine reads a repository with its own credentials, from its own mount namespace and root
directory. A caller of the same uid can see less: one whose capabilities were dropped
(`setpriv --bounding-set -dac_override`) cannot enter a mode-000 directory that root's engine
enters; one in another mount namespace (`unshare -m`, a container, a sandbox) may have the
repository hidden, or a different file at its path; one chrooted resolves its paths from another
root. Served by the engine, such a caller would read what it cannot read itself. So the engine
serves a caller only when its view, read from /proc, is the engine's own, and otherwise answers
"not served": the client then runs the call in-process, with the caller's own view.

A view is what decides which files a process reaches by path: its mount, user and network
namespaces (network: a team index's Chroma server), the directory it sees as `/`, its
credentials (the Uid, Gid and Groups lines of /proc/PID/status: real, effective, saved and
filesystem ids), its capability sets (CapInh, CapPrm, CapEff, CapBnd, CapAmb), its seccomp mode
and its security label (/proc/PID/attr/current: AppArmor, SELinux). What cannot be read (another
pid namespace's process, a peer the engine may not inspect) is no view: not served.

`read(pid)` gathers (I/O, /proc); `refusal(engine, caller)` decides (pure). Standard library only.
"""
from __future__ import annotations

import os
import signal
import socket
from dataclasses import dataclass

# The lines of /proc/PID/status that make up a view, in the order a refusal names them.
STATUS_LINES = ("Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "Seccomp",
                "Seccomp_filters")
NAMESPACES = ("mnt", "user", "net")

_WORDS = {
    "mnt": "mount namespace", "user": "user namespace", "net": "network namespace", "root": "root directory",
    "Uid": "user ids", "Gid": "group ids", "Groups": "supplementary groups", "CapInh": "inheritable capabilities",
    "CapPrm": "permitted capabilities", "CapEff": "effective capabilities", "CapBnd": "capability bounding set",
    "CapAmb": "ambient capabilities", "Seccomp": "seccomp mode", "Seccomp_filters": "seccomp filters",
    "label": "security label",
}
_SO_PEERPIDFD = getattr(socket, "SO_PEERPIDFD", 77)     # Linux 6.5: a pidfd of the connecting process


@dataclass(frozen=True)
class View:
    """What decides which files a process reaches: each part as /proc shows it."""
    namespaces: tuple[tuple[str, str], ...]     # (name, "mnt:[4026531841]") per NAMESPACES
    root: tuple[int, int]                       # (st_dev, st_ino) of the directory it sees as /
    status: tuple[tuple[str, str], ...]         # (line, value) per STATUS_LINES present
    label: str | None                           # /proc/PID/attr/current; None where there is none

    @classmethod
    def parse(cls, status_text: str, namespaces: dict[str, str], root: tuple[int, int],
              label: str | None) -> View:
        """The view of /proc/PID/status's text, its namespace links, its root's (dev, inode) and
        its security label."""
        lines = {}
        for line in status_text.splitlines():
            name, sep, value = line.partition(":")
            if sep and name in STATUS_LINES:
                lines[name] = " ".join(value.split())
        return cls(tuple((n, namespaces.get(n, "")) for n in NAMESPACES), root,
                   tuple((n, lines[n]) for n in STATUS_LINES if n in lines), label)


def refusal(engine: View | None, caller: View | None) -> str | None:
    """None when the engine may serve the caller (the same view); else why not, in words."""
    if engine is None:
        return "the engine cannot read its own view in /proc"
    if caller is None:
        return "the caller's view cannot be read in /proc (another pid namespace, or not inspectable)"
    differs = [name for (name, a), (_, b) in zip(engine.namespaces, caller.namespaces) if a != b]
    if engine.root != caller.root:
        differs.append("root")
    mine, theirs = dict(engine.status), dict(caller.status)
    differs += [name for name in STATUS_LINES if mine.get(name) != theirs.get(name)]
    if engine.label != caller.label:
        differs.append("label")
    if not differs:
        return None
    return f"the caller's {', '.join(_WORDS[d] for d in differs)} differ{'s' if len(differs) == 1 else ''} from the engine's"


def read(pid: int | str) -> View | None:
    """The view of process `pid` ("self": this one) from /proc; None when any part of it cannot be
    read (gone, another pid namespace's, or one this process may not inspect)."""
    if isinstance(pid, int) and pid <= 0:
        return None             # SO_PEERCRED's answer for a peer outside this pid namespace
    base = f"/proc/{pid}"
    try:
        with open(f"{base}/status", encoding="utf-8", errors="replace") as handle:
            status = handle.read()
        namespaces = {name: os.readlink(f"{base}/ns/{name}") for name in NAMESPACES}
        st = os.stat(f"{base}/root")
    except OSError:
        return None
    try:
        with open(f"{base}/attr/current", encoding="utf-8", errors="replace") as handle:
            label: str | None = handle.read().strip("\0\n ")
    except OSError:
        label = None            # no LSM, or none that keeps a label here
    return View.parse(status, namespaces, (st.st_dev, st.st_ino), label)


def own_proc_is_ours() -> bool:
    """Whether /proc is this process's pid namespace's (its `self` is this pid): else the pids the
    kernel gives for peers name other processes there, and no view read from it can be trusted."""
    try:
        return os.readlink("/proc/self") == str(os.getpid())
    except OSError:
        return False


def peer_pidfd(sock: socket.socket, pid: int) -> int | None:
    """A pidfd of the process at the other end of `sock`: the kernel's own (SO_PEERPIDFD, Linux
    6.5), else one opened for `pid` (pidfd_open, Linux 5.3); None where neither is possible. While
    it stays live, `pid` names that process, not a later one given the same number."""
    try:
        fd = sock.getsockopt(socket.SOL_SOCKET, _SO_PEERPIDFD)
        if fd >= 0:
            return fd
    except OSError:
        pass
    try:
        return os.pidfd_open(pid)
    except (OSError, AttributeError):
        return None


def still_there(pidfd: int | None) -> bool:
    """Whether the process of `pidfd` is still running (so its pid was not reused while its view
    was read); without a pidfd, whether /proc can say nothing against it: True."""
    if pidfd is None:
        return True
    try:
        signal.pidfd_send_signal(pidfd, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True             # EPERM: it runs (as someone this process may not signal)
    return True


def check(engine: View | None, pid: int, pidfd: int | None) -> str | None:
    """Why the engine must not serve the peer `pid` (None: it may). `pidfd`: the peer's, taken when
    it connected (peer_pidfd). Its view is read now, after its request, and then the process is
    checked to still be the one that connected: a pid reused meanwhile by another process must
    not lend that process's view."""
    caller = read(pid)
    if caller is not None and not still_there(pidfd):
        return "the caller is gone (its pid may now name another process)"
    return refusal(engine, caller)
