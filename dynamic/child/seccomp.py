"""The seccomp filter that holds UDP and raw sockets where the child has no network namespace.

Landlock's network rules (ABI 4) cover TCP only; a datagram needs no
``connect``. Where the namespace is refused, the child installs a seccomp
filter (through libseccomp, the ``pyseccomp`` binding) so that neither it nor
any process it starts can *create* an IPv4/IPv6 socket other than TCP -- UDP,
raw, SCTP, MPTCP -- nor a packet socket, nor an io_uring (whose operations
seccomp does not see). The call fails with ``EACCES``. This also refuses UDP on
loopback (a local DNS stub, statsd): the price of the fallback, named in
docs/sandbox.md.
"""

from __future__ import annotations

import errno
import socket
from typing import Any

_SOCK_TYPE_MASK = 0xF  # the type without SOCK_NONBLOCK / SOCK_CLOEXEC


def _binding() -> tuple[Any, str]:
    """pyseccomp, loaded when this module is (before Landlock: loading it writes a temporary file), or why not."""
    try:
        import pyseccomp

        return pyseccomp, ""
    except (ImportError, OSError) as exc:  # the binding, or libseccomp.so.2 under it, is missing
        return None, f"libseccomp is not available ({exc}); install resume-audit[dynamic] and the libseccomp2 package"


_SECCOMP, _MISSING = _binding()


def deny_datagrams() -> str | None:
    """Install the filter on this process and its future children; None when it holds, else why not."""
    seccomp = _SECCOMP
    if seccomp is None:
        return _MISSING
    refuse = seccomp.ERRNO(errno.EACCES)
    try:
        rules = seccomp.SyscallFilter(seccomp.ALLOW)
        for family in (socket.AF_INET, socket.AF_INET6):
            for kind in (socket.SOCK_DGRAM, socket.SOCK_RAW, socket.SOCK_RDM, socket.SOCK_SEQPACKET):
                rules.add_rule(
                    refuse,
                    "socket",
                    seccomp.Arg(0, seccomp.EQ, family),
                    seccomp.Arg(1, seccomp.MASKED_EQ, _SOCK_TYPE_MASK, kind),
                )
            # a stream socket of another protocol than TCP (SCTP 132, MPTCP 262): Landlock holds TCP only
            rules.add_rule(
                refuse,
                "socket",
                seccomp.Arg(0, seccomp.EQ, family),
                seccomp.Arg(1, seccomp.MASKED_EQ, _SOCK_TYPE_MASK, socket.SOCK_STREAM),
                seccomp.Arg(2, seccomp.GT, socket.IPPROTO_TCP),
            )
        rules.add_rule(refuse, "socket", seccomp.Arg(0, seccomp.EQ, socket.AF_PACKET))
        rules.add_rule(refuse, "io_uring_setup")
        rules.load()
    except (OSError, RuntimeError, ValueError) as exc:
        return f"the seccomp filter could not be loaded: {exc}"
    return None
