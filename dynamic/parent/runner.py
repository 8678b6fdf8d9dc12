"""Starting sweep children and making sure none of them outlives its cell.

Children are forked from a ``multiprocessing`` fork server that has imported
LangGraph (and this package) once, so a cell pays neither interpreter start-up
nor framework import time -- only the import of the user's own module. Each
child makes itself a process-group leader; when it finishes, times out, or
kills itself at a kill point, the parent SIGKILLs its whole process group, so
anything the graph spawned dies with it, and reports whether anything had to
be killed.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import threading
import time
import types
from dataclasses import dataclass
from multiprocessing import connection
from typing import Any, Iterator

from resume_audit.dynamic import lifetime
from resume_audit.dynamic.child_result import ChildResult
from resume_audit.dynamic.lifetime import process_table
from resume_audit.dynamic.parent import forkserver
from resume_audit.dynamic.spec import ChildSpec

_CTX_LOCK = threading.Lock()
_CTX: Any = None


def context(preload: list[str]) -> Any:
    """The fork-server context, with ``preload`` imported once in the server."""
    global _CTX
    with _CTX_LOCK:
        if _CTX is None:
            ctx = multiprocessing.get_context("forkserver")
            # the probes too: a probe's own child role reaches the child by reference to its module
            # the user namespace first, while the server has one thread (resume_audit.dynamic.child.userns)
            ctx.set_forkserver_preload(
                [
                    "resume_audit.dynamic.child.userns",
                    "resume_audit.dynamic.child.env",
                    "resume_audit.dynamic.child.main",
                    "resume_audit.dynamic.probes",
                    *preload,
                ]
            )
            _CTX = ctx
        return _CTX


@dataclass
class ChildRun:
    """How one child ended, and what it reported."""

    spec: ChildSpec
    exitcode: int | None
    timed_out: bool
    result: ChildResult | None
    leftovers: int  # processes of its group still alive after it ended (all killed)
    seconds: float
    #: processes it started outside its group (new session, daemon), found by the environment tag and killed
    escaped: int = 0

    @property
    def crashed(self) -> bool:
        """The kill point fired: SIGKILLed itself, or (exception mode) reported the injected crash."""
        return self.killed_itself or bool(self.result is not None and self.result.crashed)

    @property
    def killed_itself(self) -> bool:
        """SIGKILL with no result: the kill point fired (or something else SIGKILLed it)."""
        return self.result is None and not self.timed_out and self.exitcode == -signal.SIGKILL

    def failure(self) -> str | None:
        """A one-line description of an abnormal end, or None when the child reported normally."""
        if self.timed_out:
            return "timed out"
        if self.result is None:
            if self.exitcode is not None and self.exitcode < 0:
                return f"killed by signal {signal.Signals(-self.exitcode).name}"
            return f"exited with code {self.exitcode} without reporting (os._exit or interpreter crash)"
        return None

    @property
    def completed(self) -> bool:
        """The child played its role to the end (the user's graph did not raise, exit, or break the protocol)."""
        return self.result is not None and self.result.ok

    def failure_text(self) -> str:
        """Why the child did not complete its role, in one line."""
        return " ".join(self._failure_text().split())

    def _failure_text(self) -> str:
        if self.result is None:
            return self.failure() or "no result"
        r = self.result
        if r.target_error:
            return f"target did not load: {r.target_error}"
        if r.protocol_error:
            return r.protocol_error
        err = r.error
        if err is not None:
            where = f" at {err.where}" if err.where else ""
            hint = self.spec.run.environment.hint(err.message)  # it failed on a variable the allow-list withheld
            if hint:
                where += f" ({hint})"
            if err.kind == "exit":
                return f"the graph called {err.message}{where}"
            limit = self.spec.run.memory_limit_mb
            if err.type == "MemoryError" and limit:
                return (
                    f"the graph ran out of memory under the sweep's limit of {limit} MB per process{where} "
                    "(--memory-limit; 0 lifts it)"
                )
            return f"the graph raised {err.type}: {err.message}{where}"
        return "incomplete"


def _group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes in process group ``pgid``."""
    return [p.pid for p in process_table() if p.state != "Z" and p.pgid == pgid]


def kill_group(pgid: int) -> int:
    """SIGKILL every live member of ``pgid``; returns how many there were."""
    members = _group_members(pgid)
    if members:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return len(members)


_START_LOCK = threading.Lock()


@contextlib.contextmanager
def _without_main_module() -> Iterator[None]:
    """Hide ``__main__`` while a child is launched.

    multiprocessing re-runs the parent's main script in every fork-server child
    (``init_main_from_path``); for the sweep that would mean re-importing the
    CLI or pytest -- or re-running an unguarded user script -- in each cell.
    The child needs nothing from ``__main__``: its entry point is a function of
    this package.
    """
    with _START_LOCK:
        real = sys.modules.get("__main__")
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            yield
        finally:
            if real is not None:
                sys.modules["__main__"] = real


_LIVE: dict[int, Any] = {}
_LIVE_LOCK = threading.Lock()


def start(spec: ChildSpec, preload: list[str], barrier: Any = None) -> Any:
    os.makedirs(spec.workdir, exist_ok=True)
    from resume_audit.dynamic.child import main as child

    ctx = context(preload)
    proc = ctx.Process(target=child.main, args=(spec, barrier), daemon=False)
    with _without_main_module():
        forkserver.ensure_running()  # the allow-listed environment only, before it can start with the whole one
        proc.start()
    with _LIVE_LOCK:
        _LIVE[proc.pid] = (proc, spec.cell_dir)
    return proc


def kill_all(root: str | None = None) -> int:
    """SIGKILL the process groups of every child still running (Ctrl-C, an error in the parent).

    With ``root``, only children of cells under that directory: several sweeps
    may run at once in one process (the conformance suite), and one sweep's
    cleanup must not kill another's children.
    """
    with _LIVE_LOCK:
        procs = [p for p, cell in _LIVE.values() if root is None or cell.startswith(root.rstrip(os.sep) + os.sep)]
    killed = 0
    for proc in procs:
        if proc.pid is not None:
            killed += lifetime.kill_descendants(proc.pid)  # what left the group first: the child is their subreaper
            killed += kill_group(proc.pid)
    return killed


def _poll(proc: Any) -> int | None:
    """The child's exit code if it has ended -- read under ``_START_LOCK``.

    A fork-server child's exit status is one message on its sentinel pipe, and
    ``Process.start()`` polls every other live child (``_cleanup``). Cells run
    on several threads, so an unlocked ``join`` here and a ``start`` there
    could both read the pipe: one gets the status, the other EOF and a bogus
    exit code 255. Every read goes through this lock, as does every start.
    """
    with _START_LOCK:
        code: int | None = proc.exitcode
        return code


def _wait(proc: Any, timeout: float) -> int | None:
    connection.wait([proc.sentinel], max(0.0, timeout))  # waits without reading
    return _poll(proc)


def finish(proc: Any, spec: ChildSpec, deadline: float, started: float) -> ChildRun:
    """Wait for ``proc`` until ``deadline`` (monotonic), then clean up its group."""
    timed_out = False
    code = _wait(proc, deadline - time.monotonic())
    if code is None:
        timed_out = True
        lifetime.kill_descendants(proc.pid)  # first what left the group: the child is their subreaper
        kill_group(proc.pid)
        try:
            proc.kill()
        except Exception:
            pass
        code = _wait(proc, 10)
    leftovers = kill_group(proc.pid)
    # what left the group (a new session, a daemon) and exec'd still carries the child's environment tag
    escaped = lifetime.kill_tagged(spec.workdir)
    result = None
    if os.path.exists(spec.result_path):
        try:
            result = ChildResult.load(spec.result_path)
        except (OSError, ValueError, TypeError):  # torn or foreign: as if the child had reported nothing
            result = None
    leftovers += result.reaped if result is not None else 0  # what the child killed of its own before it ended
    with _LIVE_LOCK:
        _LIVE.pop(proc.pid, None)
    run = ChildRun(spec, code, timed_out, result, leftovers, time.monotonic() - started, escaped)
    with _START_LOCK:
        try:
            proc.close()
        except Exception:
            pass
    return run


def run_child(spec: ChildSpec, preload: list[str], timeout: float) -> ChildRun:
    """Run one child with ``timeout`` seconds from the moment it exists. The first start also
    launches the fork server, which imports the framework modules (every installed framework
    when the target's own source names none): that one-off cost is the resume_audit's, not the
    user's graph's, so it is not charged to the child's budget."""
    proc = start(spec, preload)
    started = time.monotonic()
    return finish(proc, spec, started + timeout, started)


def run_racers(specs: list[ChildSpec], preload: list[str], timeout: float) -> list[ChildRun]:
    """Start k racers released together by one barrier; wait for all of them."""
    ctx = context(preload)
    barrier = ctx.Barrier(len(specs))
    procs = [start(spec, preload, barrier) for spec in specs]
    started = time.monotonic()
    deadline = started + timeout
    return [finish(p, s, deadline, started) for p, s in zip(procs, specs)]
