"""Nothing a sweep child starts outlives its cell, or the sweep.

The process group the child leads catches ordinary subprocesses. A process the
graph puts in a new session (``start_new_session=True``, the double-fork +
``setsid`` daemon) leaves that group, so two more layers:

- every child puts a tag in its environment (``RESUME_AUDIT_CELL=<workdir>``)
  that its descendants inherit; once the child has ended, the parent reads
  ``/proc/<pid>/environ`` of every process and kills the tagged ones -- what
  left the group is found anyway, and reported;
- every child asks the kernel for ``SIGKILL`` when its parent (the fork
  server) dies (``PR_SET_PDEATHSIG``), and the fork server exits when the sweep
  process does, so a sweep killed outright (a CI cancel ending in SIGKILL)
  takes its running children with it. Each child is also a child subreaper
  (``PR_SET_CHILD_SUBREAPER``): a daemon's orphaned grandchild is re-parented
  to the child, not to init, while the child lives.

- before a child ends -- normally, or SIGKILLing itself at a kill point -- it
  kills its own descendants (everything still running is its descendant,
  being a subreaper), reporting those outside its group; a child that times out
  has its descendants killed by the parent the same way before its group.

The environment tag reaches only processes that ``exec``: ``/proc/<pid>/environ``
shows the environment a process was started with, not later changes.

Temporary directories of a sweep killed outright are removed by the next
sweep (:func:`remove_stale_roots`), recognised by the dead pid in their name.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import tempfile
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from resume_audit.processes import pid_alive

CELL_ENV = "RESUME_AUDIT_CELL"
#: the note (kind, detail) a sweep reports when the graph started processes outside the child's group
ESCAPED_NOTE = (
    "escaped",
    "the graph started processes outside its process group (a new session or a daemon); "
    "the sweep found them and killed them",
)
ROOT_PREFIX = "resume-audit-sweep-"
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def _prctl(option: int, value: int) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(option, value, 0, 0, 0) == 0)
    except (OSError, AttributeError):  # not Linux
        return False


def bind_to_parent(tag: str) -> None:
    """In a sweep child: tag the environment, die with the parent, adopt orphaned descendants."""
    os.environ[CELL_ENV] = tag
    _drop_forkserver_alive_fd()
    parent = os.getppid()
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


@dataclass(frozen=True)
class ProcessEntry:
    """One row of the process table (``/proc/<pid>/stat``)."""

    pid: int
    state: str  # "Z" for a zombie
    ppid: int
    pgid: int
    cmdline: str  # "" unless asked for


def process_table(*, cmdlines: bool = False) -> list[ProcessEntry]:
    """Every process ``/proc`` shows, zombies included; command lines read only when asked
    (the sweep's group checks need stat alone). Processes that vanish mid-read are skipped."""
    table: list[ProcessEntry] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return table
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                tail = fh.read().decode("ascii", "replace").rsplit(")", 1)[-1].split()
            cmd = ""
            if cmdlines:
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    cmd = fh.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if len(tail) >= 3:
            table.append(ProcessEntry(int(entry), tail[0], int(tail[1]), int(tail[2]), cmd))
    return table


def descendants(pid: int) -> list[tuple[int, int]]:
    """Live descendants of ``pid`` as (pid, pgid). A child subreaper's orphaned grandchildren are its
    children, so for a sweep child this is everything it started that is still running."""
    table = {entry.pid: entry for entry in process_table()}
    children: dict[int, list[int]] = {}
    for entry in table.values():
        children.setdefault(entry.ppid, []).append(entry.pid)
    found, todo = [], list(children.get(pid, []))
    while todo:
        entry = table[todo.pop()]
        if entry.state != "Z":
            found.append((entry.pid, entry.pgid))
        todo.extend(children.get(entry.pid, []))
    return found


def reap_descendants(note: Callable[[str, str], None] | None = None) -> int:
    """In a sweep child about to end (or to kill itself at a kill point): SIGKILL everything it started.

    Processes in another process group than the child's left it (a new session, a daemon): the
    parent's group kill would miss them, so they are reported through ``note``. Returns how many
    processes were killed.
    """
    own_group = os.getpgrp()
    found = descendants(os.getpid())
    _sigkill(pid for pid, _pgid in found)
    if note is not None and any(pgid != own_group for _pid, pgid in found):
        note(*ESCAPED_NOTE)
    return len(found)


def _drop_forkserver_alive_fd() -> None:
    """Close this child's copy of the write end of the fork server's "alive" pipe.

    The fork server exits when every write end is closed -- when the sweep
    process is gone -- but multiprocessing hands each child a copy, so a hung
    child would keep the server alive and the server would keep the child's
    parent-death signal from ever firing. Sweep children start no fork-server
    processes of their own, so they do not need it (if user code does,
    multiprocessing starts a new server).
    """
    try:
        from multiprocessing import forkserver

        server: Any = forkserver._forkserver
        fd = getattr(server, "_forkserver_alive_fd", None)
        if fd is not None:
            server._forkserver_alive_fd = None
            os.close(fd)
    except (ImportError, AttributeError, OSError):
        pass


def tagged(tag: str, exclude: int | None = None) -> list[int]:
    """Pids of live processes whose environment carries ``tag`` (zombies and unreadable ones skipped)."""
    needle = f"{CELL_ENV}={tag}".encode() + b"\0"
    found: list[int] = []
    for entry in process_table():
        if entry.state == "Z" or entry.pid in (exclude, os.getpid()):
            continue
        try:
            with open(f"/proc/{entry.pid}/environ", "rb") as fh:
                if needle in fh.read() + b"\0":
                    found.append(entry.pid)
        except OSError:
            continue
    return found


def kill_descendants(pid: int) -> int:
    """From the parent: SIGKILL every live descendant of ``pid`` (a child that timed out)."""
    found = descendants(pid)
    _sigkill(child for child, _pgid in found)
    return len(found)


def kill_tagged(tag: str) -> int:
    """SIGKILL every live process carrying ``tag``; how many there were."""
    pids = tagged(tag)
    _sigkill(pids)
    return len(pids)


def _sigkill(pids: Iterable[int]) -> None:
    """SIGKILL each pid; one that is already gone (or not ours to kill) is skipped."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def new_root() -> str:
    """A sweep's temporary root, named with this process's pid so a later sweep can tell it is stale."""
    remove_stale_roots()
    return tempfile.mkdtemp(prefix=f"{ROOT_PREFIX}{os.getpid()}-")


def remove_stale_roots(base: str | None = None) -> list[str]:
    """Remove the temporary roots of sweeps whose process is gone (killed before it could clean up)."""
    base = base or tempfile.gettempdir()
    removed: list[str] = []
    try:
        names = os.listdir(base)
    except OSError:
        return removed
    for name in names:
        if not name.startswith(ROOT_PREFIX):
            continue
        pid_text = name[len(ROOT_PREFIX) :].split("-", 1)[0]
        if pid_text.isdigit() and not pid_alive(int(pid_text)):
            shutil.rmtree(os.path.join(base, name), ignore_errors=True)
            removed.append(name)
    return removed
