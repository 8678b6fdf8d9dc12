"""Confinement of untrusted user code inside a sweep child process.

The sweep runs the user's graph, and the graph is arbitrary Python. Each child
therefore, before importing anything of the user's:

- becomes the leader of a new session and process group (``os.setsid``), so the
  parent can kill it *and everything it spawned* with one ``killpg``;
- moves into its own temporary directory (cwd and ``TMPDIR``), so relative
  writes and ``tempfile`` land there;
- installs a ``sys.addaudithook`` hook that refuses outbound network
  connections except to loopback (unless allowed), refuses file writes,
  deletions and renames outside the cell directory, and records every process
  the graph spawns so the report can say so.

Audit hooks see Python-level operations only. Before installing the hook the
child puts itself under the kernel's layers (:mod:`resume_audit.dynamic.child.confine`):
a network namespace with loopback only, Landlock for file changes outside the
cell (and ``/dev/shm``, ``/dev/null``), and where the namespace is refused
Landlock's TCP rules with a seccomp filter for UDP -- for the graph, the
processes it starts and native code alike. docs/sandbox.md says what each holds.
"""

from __future__ import annotations

import ipaddress
import os
import sys
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from resume_audit.dynamic.child import confine
from resume_audit.dynamic.confinement import ConfinementPolicy, ConfinementState

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_PATH_EVENTS_ARG0 = {
    "os.remove",
    "os.rmdir",
    "os.mkdir",
    "os.truncate",
    "os.chmod",
    "os.chown",
    "os.utime",
    "os.setxattr",
    "os.removexattr",
    "shutil.rmtree",
    "shutil.chown",
}
_PATH_EVENTS_BOTH = {
    "os.rename",
    "os.link",
    "shutil.move",
    "shutil.copyfile",
    "shutil.copytree",
    "shutil.copymode",
    "shutil.copystat",
}
_SPAWN_EVENTS = {"subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.system", "os.exec"}
_ALWAYS_WRITABLE = ("/dev/null", "/dev/tty", "/dev/stdout", "/dev/stderr")


class SandboxRefusal(PermissionError):
    """Raised into user code when it tries something the sweep does not allow."""


def _sqlite_target(text: str) -> str | None:
    """The file a ``sqlite3.connect`` argument writes, or None when it writes none (memory, read-only URI)."""
    if not text.startswith("file:"):
        return text
    from urllib.parse import parse_qs, unquote, urlsplit

    parts = urlsplit(text)
    query = parse_qs(parts.query)
    if query.get("mode", [""])[-1] == "ro" or query.get("mode", [""])[-1] == "memory" or parts.path in ("", ":memory:"):
        return None
    return unquote(parts.path)


def _writable_under(root: str) -> Callable[[Any], bool]:
    """The write rule for a cell rooted at ``root`` (already real)."""

    def writable(path: Any) -> bool:
        if isinstance(path, int):  # an already-open descriptor
            return True
        try:
            text = os.fsdecode(os.fspath(path))
        except TypeError:
            return True
        if text in ("", ":memory:") or text.startswith("file::memory:"):
            return True
        if text in _ALWAYS_WRITABLE or text.startswith("/proc/self/fd/"):
            return True
        real = os.path.realpath(text)
        return real == root or real.startswith(root + os.sep)

    return writable


def _loopback(host: Any) -> bool:
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    host = str(host)
    if host in ("localhost", "localhost.localdomain", ""):
        return True
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:127.0.0.1 is IPv4 loopback
    return address.is_loopback or (mapped is not None and mapped.is_loopback)


def _make_hook(
    writable: Callable[[Any], bool],
    allow_network: bool,
    tell: Callable[[str, str], None],
    refuse: Callable[[str, str], None],
    guard: threading.local,
) -> Callable[[str, tuple[Any, ...]], None]:
    """The audit hook: refuses writes outside the cell and non-loopback traffic, reports spawns."""

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if getattr(guard, "busy", False):
            return
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            wants_write = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and bool(flags & _WRITE_FLAGS)
            )
            if wants_write and not writable(path):
                refuse("write", f"open({path!r}, {mode or flags!r}) outside the sandbox")
        elif event in _PATH_EVENTS_ARG0:
            if args and not writable(args[0]):
                refuse("write", f"{event}({args[0]!r}) outside the sandbox")
        elif event in _PATH_EVENTS_BOTH:
            for p in args[:2]:
                if not writable(p):
                    refuse("write", f"{event}({p!r}) outside the sandbox")
        elif event == "os.symlink":
            if len(args) > 1 and not writable(args[1]):
                refuse("write", f"os.symlink to {args[1]!r} outside the sandbox")
        elif event == "sqlite3.connect":
            target = (
                _sqlite_target(os.fsdecode(args[0]))
                if args and isinstance(args[0], (str, bytes, os.PathLike))
                else None
            )
            if target is not None and not writable(target):
                refuse("write", f"sqlite3.connect({args[0]!r}) outside the sandbox")
        elif event in ("socket.connect", "socket.sendto", "socket.sendmsg") and not allow_network:
            address = args[1] if len(args) > 1 else None
            if isinstance(address, tuple) and address and not _loopback(address[0]):
                refuse(
                    "network", f"{event.split('.')[1]} to {address!r} (only loopback is allowed; pass --allow-network)"
                )
        elif event == "socket.getaddrinfo" and not allow_network:
            host = args[0] if args else None
            if not _loopback(host):
                refuse("network", f"name lookup of {host!r} (only loopback is allowed; pass --allow-network)")
        elif event in _SPAWN_EVENTS:
            detail = event if not args else f"{event}: {str(args[0])[:120]}"
            tell("spawn", detail)

    return hook


def _guard_device_nodes(writable: Callable[[Any], bool], refuse: Callable[[str, str], None]) -> None:
    """``os.mkfifo`` / ``os.mknod`` raise no audit event: guard them by wrapping (a fallback only --
    code can undo a wrapper; Landlock, where present, refuses them in the kernel)."""
    for name in ("mkfifo", "mknod"):
        original = getattr(os, name, None)
        if original is None:
            continue

        def guarded(path: Any, *args: Any, _original: Any = original, _name: str = name, **kwargs: Any) -> Any:
            target = path
            if kwargs.get("dir_fd") is not None and not os.path.isabs(os.fsdecode(path)):
                target = os.path.join(os.readlink(f"/proc/self/fd/{kwargs['dir_fd']}"), os.fsdecode(path))
            if not writable(target):
                refuse("write", f"os.{_name}({path!r}) outside the sandbox")
            return _original(path, *args, **kwargs)

        setattr(os, name, guarded)


@dataclass
class Sandbox:
    """The policy of one child; ``install`` applies it to the current process."""

    root: str
    #: this process's own directory (its temporary files, its output)
    workdir: str
    allow_network: bool = False
    #: the program's working directory (default ``workdir``); the cell's processes share it
    cwd: str | None = None
    #: called with (kind, detail) for every refusal and spawn; must not itself write outside ``root``
    report: Callable[[str, str], None] | None = None
    #: the kernel layers to try (default: every layer, the network as ``allow_network`` says)
    policy: ConfinementPolicy | None = None
    #: whether Landlock enforces the write rule on this process and its children (see install)
    kernel_confined: bool = False
    #: the kernel layers that took (see install)
    confinement: ConfinementState = field(default_factory=ConfinementState)
    _guard: threading.local = field(default_factory=threading.local, repr=False)

    def install(self) -> None:
        try:
            os.setsid()
        except OSError:  # already a session leader (e.g. run in-process by a test)
            pass
        os.makedirs(self.workdir, exist_ok=True)
        os.makedirs(self.cwd or self.workdir, exist_ok=True)
        os.chdir(self.cwd or self.workdir)
        os.environ["TMPDIR"] = self.workdir
        os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
        # Libraries that keep data in the user's data/cache dirs (CrewAI's default flow database and
        # memory, appdirs users) write inside the cell instead -- shared by the cell's processes, so a
        # fresh interpreter finds what the crashed one stored there.
        for var, sub in (
            ("XDG_DATA_HOME", "xdg-data"),
            ("XDG_CACHE_HOME", "xdg-cache"),
            ("XDG_STATE_HOME", "xdg-state"),
            ("XDG_CONFIG_HOME", "xdg-config"),
        ):
            os.environ[var] = os.path.join(self.root, sub)
        os.environ["HOME"] = os.path.join(self.root, "home")
        os.makedirs(os.environ["HOME"], exist_ok=True)
        import tempfile

        tempfile.tempdir = self.workdir
        # importing the user's modules must not drop __pycache__ next to their sources
        sys.dont_write_bytecode = True
        self.root = os.path.realpath(self.root)
        # the kernel's own guards first, where there are any: subprocesses and native code included (the
        # namespace's loopback bridge is forked here, before the hook that reports the graph's spawns)
        policy = self.policy or ConfinementPolicy(allow_network=self.allow_network)
        self.confinement = confine.apply(policy, [self.root, "/dev/shm"], list(_ALWAYS_WRITABLE))
        self.kernel_confined = self.confinement.writes_confined
        # The hook is a closure over values fixed now: reassigning Sandbox.writable, a method, or
        # sandbox.root from the graph's code changes nothing about what the installed hook allows.
        writable = _writable_under(self.root)
        sys.addaudithook(_make_hook(writable, self.allow_network, self._tell, self._refuse, self._guard))
        _guard_device_nodes(writable, self._refuse)

    # -- policy (what install() captured; kept as methods for callers and tests) ---------
    def writable(self, path: Any) -> bool:
        return _writable_under(os.path.realpath(self.root))(path)

    @staticmethod
    def _loopback(host: Any) -> bool:
        return _loopback(host)

    def _tell(self, kind: str, detail: str) -> None:
        if self.report is None:
            return
        self._guard.busy = True
        try:
            self.report(kind, detail)
        except Exception:  # reporting must never break the user's code path
            pass
        finally:
            self._guard.busy = False

    def _refuse(self, kind: str, detail: str) -> None:
        self._tell(f"refused-{kind}", detail)
        raise SandboxRefusal(f"resume-audit sandbox refused {detail}")
