"""Network confinement in the kernel: a network namespace of the child's own, loopback only.

The audit hook refuses Python's non-loopback sockets, but a process the graph
starts (``python -c``, ``curl``) or native code opens its own. In a new network
namespace there is nothing but a loopback interface: every process of the cell
-- the graph, what it starts, native code -- finds every other address
unreachable (``ENETUNREACH``), UDP and raw sockets included.

An unprivileged process may create one inside a new user namespace
(``CLONE_NEWUSER | CLONE_NEWNET``, what ``unshare -rn`` does); its uid and gid are
mapped to themselves, so files it creates are owned as before and Landlock
applies as before. A root process without user namespaces falls back to
``CLONE_NEWNET`` alone.

The namespace's loopback is not the machine's: a PostgreSQL on 127.0.0.1 (the
``--dsn`` of a sweep) or a test's local server would vanish. So before leaving,
the child notes every TCP port the machine listens on at a loopback or wildcard
address, and forks a *bridge* that stays in the machine's namespace. Inside,
the child listens on each such port at the same address and hands the listening
sockets to the bridge (``SCM_RIGHTS``); the bridge accepts there and relays each
connection to the same address and port outside. Loopback looks as it did when
the child started; nothing else is reachable. The bridge is killed before the
child ends (:func:`stop_bridge`) and dies with it regardless (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import functools
import ipaddress
import json
import os
import signal
import socket
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio

_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000
_SIOCGIFFLAGS, _SIOCSIFFLAGS = 0x8913, 0x8914
_IFF_UP, _IFF_RUNNING = 0x1, 0x40
_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_TCP_LISTEN = "0A"
#: at most this many descriptors travel in one SCM_RIGHTS message (the kernel's SCM_MAX_FD is 253)
_FDS_PER_MESSAGE = 200

_BRIDGE: int | None = None


@dataclass(frozen=True)
class LoopbackPort:
    """A TCP port the machine listens on that loopback reaches: where to listen inside, where to relay to."""

    family: int  # socket.AF_INET or socket.AF_INET6
    host: str
    port: int


def _ipv4(hex_address: str) -> ipaddress.IPv4Address:
    return ipaddress.IPv4Address(struct.unpack("<I", bytes.fromhex(hex_address))[0])


def _ipv6(hex_address: str) -> ipaddress.IPv6Address:
    words = struct.unpack("<4I", bytes.fromhex(hex_address))
    return ipaddress.IPv6Address(struct.pack(">4I", *words))


def listening_loopback_ports() -> list[LoopbackPort]:
    """The TCP ports listening in this namespace that a loopback client reaches (``/proc/net/tcp{,6}``)."""
    found: dict[tuple[int, str, int], LoopbackPort] = {}

    def add(family: int, host: str, port: int) -> None:
        found.setdefault((family, host, port), LoopbackPort(family, host, port))

    for table, v6 in (("/proc/net/tcp", False), ("/proc/net/tcp6", True)):
        try:
            with open(table, encoding="ascii") as fh:
                rows = fh.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if len(fields) < 4 or fields[3] != _TCP_LISTEN:
                continue
            address, port_hex = fields[1].split(":")
            port = int(port_hex, 16)
            if not v6:
                ip4 = _ipv4(address)
                if ip4.is_loopback:
                    add(socket.AF_INET, str(ip4), port)
                elif ip4.is_unspecified:
                    add(socket.AF_INET, "127.0.0.1", port)
                continue
            ip6 = _ipv6(address)
            mapped = ip6.ipv4_mapped
            if mapped is not None and mapped.is_loopback:
                add(socket.AF_INET, str(mapped), port)
            elif ip6.is_loopback:
                add(socket.AF_INET6, "::1", port)
            elif ip6.is_unspecified:  # [::]:port takes IPv4 loopback too unless the socket is v6-only
                add(socket.AF_INET6, "::1", port)
                add(socket.AF_INET, "127.0.0.1", port)
    return sorted(found.values(), key=lambda p: (p.port, p.family, p.host))


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="ascii") as fh:
        fh.write(text)


def in_user_namespace() -> bool:
    """Whether this process is in a user namespace other than the machine's (whose map is the identity on every id)."""
    try:
        with open("/proc/self/uid_map", encoding="ascii") as fh:
            return fh.read().split() != ["0", "0", "4294967295"]
    except OSError:
        return False


def enter_user_namespace() -> str | None:
    """Move this (single-threaded) process into a new user namespace, its ids mapped to themselves: the
    same owner on disk, the same uid for the program. None on success, else why not."""
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(_CLONE_NEWUSER) != 0:
        error = ctypes.get_errno()
        return (
            f"unshare(CLONE_NEWUSER) refused: {os.strerror(error)} ({errno.errorcode.get(error, error)}; "
            "unprivileged user namespaces disabled or restricted here, or the process has threads)"
        )
    try:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1\n")
        _write("/proc/self/gid_map", f"{gid} {gid} 1\n")
    except OSError as exc:
        return f"cannot map ids in the new user namespace: {exc.strerror or exc}"
    return None


def _unshare() -> str | None:
    """Leave the machine's network namespace; None on success, else why not.

    A new user namespace needs a single-threaded process, and a child forked from a fork server that
    preloaded CrewAI is not (LanceDB starts a thread after every fork). So the fork server enters a
    user namespace of its own when it starts (:mod:`.userns`), and its children need only
    ``CLONE_NEWNET``, which its capabilities there allow. Otherwise: both at once, else (root)
    ``CLONE_NEWNET`` alone.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    if not in_user_namespace():
        why = enter_user_namespace()
        if why is not None and os.geteuid() != 0:
            return why
    if libc.unshare(_CLONE_NEWNET) == 0:
        return None
    error = ctypes.get_errno()
    return f"unshare(CLONE_NEWNET) refused: {os.strerror(error)} ({errno.errorcode.get(error, error)})"


def _loopback_up() -> str | None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            request = struct.pack("16sH14x", b"lo", 0)
            flags = struct.unpack("16sH14x", fcntl.ioctl(sock.fileno(), _SIOCGIFFLAGS, request))[1]
            fcntl.ioctl(sock.fileno(), _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | _IFF_UP | _IFF_RUNNING))
        except OSError as exc:
            return f"cannot bring loopback up: {exc.strerror or exc}"
    return None


def _listen(port: LoopbackPort) -> socket.socket | None:
    sock = socket.socket(port.family, socket.SOCK_STREAM)
    try:
        if port.family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind((port.host, port.port))
        sock.listen(128)
    except OSError:  # ::1 without IPv6, a duplicate: that address stays unreachable, nothing worse
        sock.close()
        return None
    return sock


def enter() -> str | None:
    """Move this process (and all it starts) into a network namespace of its own, with loopback up and
    the machine's loopback servers bridged in. None when it holds; else why not (nothing changed then)."""
    global _BRIDGE
    ports = listening_loopback_ports()
    ours, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:  # the bridge: stays outside, relays what the child's listeners accept
        try:
            ours.close()
            _bridge(theirs)
        finally:
            os._exit(0)
    theirs.close()
    why = _unshare() or _loopback_up()
    if why is not None:
        ours.close()
        _BRIDGE = pid
        stop_bridge()
        return why
    _BRIDGE = pid
    listeners = [(p, s) for p in ports for s in [_listen(p)] if s is not None]
    with ours:
        for start in range(0, len(listeners), _FDS_PER_MESSAGE):
            batch = listeners[start : start + _FDS_PER_MESSAGE]
            payload = json.dumps([[p.family, p.host, p.port] for p, _s in batch]).encode()
            socket.send_fds(ours, [payload], [s.fileno() for _p, s in batch])
        socket.send_fds(ours, [b"[]"], [])  # the end
        for _p, sock in listeners:  # in flight, the messages keep them open until the bridge takes them
            sock.close()
    return None


def stop_bridge() -> None:
    """Kill and reap the bridge (before the child ends, so no process of the cell is left to count)."""
    global _BRIDGE
    pid, _BRIDGE = _BRIDGE, None
    if pid is None:
        return
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


def _bridge(channel: socket.socket) -> None:
    """The bridge process: take the child's listening sockets, relay every connection out."""
    import asyncio

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)  # the program, in the same user namespace, cannot trace it
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    taken: list[tuple[socket.socket, LoopbackPort]] = []
    while True:
        payload, fds, _flags, _addr = socket.recv_fds(channel, 1 << 20, _FDS_PER_MESSAGE)
        described = json.loads(payload or b"[]")
        if not described:
            break
        for (family, host, port), fd in zip(described, fds):
            taken.append((socket.socket(fileno=fd), LoopbackPort(family, host, port)))
    channel.close()
    if taken:
        asyncio.run(_serve(taken))


async def _serve(taken: list[tuple[socket.socket, LoopbackPort]]) -> None:
    import asyncio

    servers = [await asyncio.start_server(functools.partial(_relay, port), sock=sock) for sock, port in taken]
    try:
        await asyncio.Event().wait()  # until the child kills it
    finally:
        for server in servers:
            server.close()


async def _relay(port: LoopbackPort, reader: "asyncio.StreamReader", writer: "asyncio.StreamWriter") -> None:
    import asyncio

    try:
        upstream_reader, upstream_writer = await asyncio.open_connection(port.host, port.port)
    except OSError:
        writer.close()
        return
    await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))
    for w in (writer, upstream_writer):
        w.close()


async def _pipe(source: "asyncio.StreamReader", sink: "asyncio.StreamWriter") -> None:
    try:
        while True:
            data = await source.read(1 << 16)
            if not data:
                break
            sink.write(data)
            await sink.drain()
        if sink.can_write_eof():
            sink.write_eof()
    except (ConnectionError, OSError):
        sink.close()
