"""Kernel-enforced write confinement for a sweep child (Linux Landlock), through ``ctypes``.

The audit hook in :mod:`resume_audit.dynamic.child.sandbox` sees Python-level ``open``s only: a
subprocess the graph starts (``sh -c 'echo x > ~/f'``) or native code called through
``ctypes`` writes wherever it likes. Landlock closes that gap where the kernel offers it: the
child restricts *itself and every process it starts* so that creating, writing, truncating,
renaming or deleting files is allowed only beneath the directories given. Reads and executing
programs are left alone.

Where the child cannot have a network namespace of its own (:mod:`.netns`), Landlock ABI 4+ also
holds TCP: :func:`confine_tcp_connect` lets the child and its processes connect only to the given
ports (the machine's loopback servers). Landlock matches the port, not the address, so such a port
on another host is reachable too; UDP and raw sockets are the seccomp filter's (:mod:`.seccomp`).

Kernel 5.13+ with Landlock enabled; elsewhere :func:`confine_writes` returns False and the
child runs under the audit hook alone (the sweep report says which).
"""

from __future__ import annotations

import ctypes
import os
import platform

#: syscall numbers (the same on x86_64 and aarch64, allocated after the syscall tables merged)
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_PR_SET_NO_NEW_PRIVS = 38
_RULE_PATH_BENEATH = 1
_RULE_NET_PORT = 2  # ABI 4
_CONNECT_TCP = 1 << 1  # handled_access_net (ABI 4)
_CREATE_RULESET_VERSION = 1

# access rights that change the filesystem (include/uapi/linux/landlock.h)
_WRITE_FILE = 1 << 1
_REMOVE_DIR = 1 << 4
_REMOVE_FILE = 1 << 5
_MAKE_CHAR = 1 << 6
_MAKE_DIR = 1 << 7
_MAKE_REG = 1 << 8
_MAKE_SOCK = 1 << 9
_MAKE_FIFO = 1 << 10
_MAKE_BLOCK = 1 << 11
_MAKE_SYM = 1 << 12
_REFER = 1 << 13  # ABI 2
_TRUNCATE = 1 << 14  # ABI 3
_FILE_RIGHTS = _WRITE_FILE | _TRUNCATE


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _NetRulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64)]


class _NetPortAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def abi_version() -> int:
    """The kernel's Landlock ABI version, 0 when unavailable."""
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "aarch64"):
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    version = libc.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return version if version > 0 else 0


def confine_writes(writable_dirs: list[str], writable_files: list[str]) -> bool:
    """Allow filesystem changes only beneath ``writable_dirs`` and to ``writable_files`` (each
    that exists), for this process and its future children. True when the kernel enforces it.
    The caller skips it under ``RESUME_AUDIT_LANDLOCK=off`` (read by the sweep's parent, see
    :mod:`resume_audit.dynamic.confinement`: the audit hook alone then guards -- how the project's
    tests exercise that layer, and a way out if Landlock breaks a program)."""
    abi = abi_version()
    if abi == 0:
        return False
    handled = (
        _WRITE_FILE
        | _REMOVE_DIR
        | _REMOVE_FILE
        | _MAKE_CHAR
        | _MAKE_DIR
        | _MAKE_REG
        | _MAKE_SOCK
        | _MAKE_FIFO
        | _MAKE_BLOCK
        | _MAKE_SYM
    )
    if abi >= 2:
        handled |= _REFER
    if abi >= 3:
        handled |= _TRUNCATE
    libc = ctypes.CDLL(None, use_errno=True)
    attr = _RulesetAttr(handled)
    ruleset = libc.syscall(
        _CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0)
    )
    if ruleset < 0:
        return False
    try:
        for path, rights in [
            *((d, handled) for d in writable_dirs),
            *((f, handled & _FILE_RIGHTS) for f in writable_files),
        ]:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                rule = _PathBeneathAttr(rights, fd)
                if (
                    libc.syscall(
                        _ADD_RULE,
                        ctypes.c_int(ruleset),
                        ctypes.c_int(_RULE_PATH_BENEATH),
                        ctypes.byref(rule),
                        ctypes.c_uint32(0),
                    )
                    < 0
                ):
                    return False
            finally:
                os.close(fd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0:
            return False
        return bool(libc.syscall(_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) == 0)
    finally:
        os.close(ruleset)


def confine_tcp_connect(ports: list[int]) -> str | None:
    """Allow TCP ``connect`` only to ``ports``, for this process and its future children (Landlock ABI
    4+). None when the kernel enforces it, else why not."""
    abi = abi_version()
    if abi < 4:
        return f"Landlock ABI {abi} has no network rules (needs 4, Linux 6.7+)" if abi else "no Landlock in this kernel"
    libc = ctypes.CDLL(None, use_errno=True)
    attr = _NetRulesetAttr(0, _CONNECT_TCP)
    ruleset = libc.syscall(
        _CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0)
    )
    if ruleset < 0:
        return f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}"
    try:
        for port in sorted(set(ports)):
            rule = _NetPortAttr(_CONNECT_TCP, port)
            if (
                libc.syscall(
                    _ADD_RULE,
                    ctypes.c_int(ruleset),
                    ctypes.c_int(_RULE_NET_PORT),
                    ctypes.byref(rule),
                    ctypes.c_uint32(0),
                )
                < 0
            ):
                return f"landlock_add_rule(port {port}): {os.strerror(ctypes.get_errno())}"
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0:
            return f"PR_SET_NO_NEW_PRIVS: {os.strerror(ctypes.get_errno())}"
        if libc.syscall(_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            return f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}"
        return None
    finally:
        os.close(ruleset)
