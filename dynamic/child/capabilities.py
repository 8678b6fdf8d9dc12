"""Drop every capability of a child that runs as root without a user namespace of its own.

Inside its own user namespace a child cannot read another process's
``/proc/<pid>/environ`` (the kernel wants ``CAP_SYS_PTRACE`` over the target's
namespace). Where the namespace is refused and the sweep runs as root, the child
is root in the machine's namespace and could read the sweep process's
environment -- the CI's secrets -- through ``/proc`` (measured: it did, with
Landlock on; dropping ``CAP_SYS_PTRACE`` alone, or with the DAC capabilities, still
let it read). With every capability dropped from its bounding, permitted,
effective and inheritable sets the read is refused (measured), and processes it
starts -- even as root -- cannot regain any. A program under audit has no use
for root's capabilities; its writes are Landlock's to allow anyway.
"""

from __future__ import annotations

import ctypes
import os

_PR_CAPBSET_DROP = 24
_LINUX_CAPABILITY_VERSION_3 = 0x20080522


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_all() -> str | None:
    """Drop every capability for this process and what it starts (a no-op without any). None when done, else why not."""
    libc = ctypes.CDLL(None, use_errno=True)
    header = _Header(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_Data * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        return f"capget: {os.strerror(ctypes.get_errno())}"
    if not any(d.permitted or d.effective or d.inheritable for d in data):
        return None  # not root: nothing to drop
    try:
        with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as fh:
            last = int(fh.read())
    except (OSError, ValueError):
        last = 63
    for cap in range(last + 1):  # the bounding set first: an exec as root must not regain them
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() != 22:  # EINVAL: no such cap
            return f"PR_CAPBSET_DROP({cap}): {os.strerror(ctypes.get_errno())}"
    empty = (_Data * 2)()
    if libc.capset(ctypes.byref(header), empty) != 0:
        return f"capset: {os.strerror(ctypes.get_errno())}"
    return None
