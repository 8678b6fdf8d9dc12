"""The standard process pool as the scan uses it: which start method, and stopping it at once.

Imported only when a scan starts a pool: a warm scan never needs ``multiprocessing``.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import sys
import threading
from multiprocessing.context import BaseContext

# how long stopping a pool waits for its manager thread, which ends as soon as it sees the
# workers gone (milliseconds); a bound, so a CPython change there cannot hang a cancelled scan
MANAGER_JOIN_SECONDS = 5.0


def pool_context() -> BaseContext:
    """Forked workers where that is safe to ask for (Linux): they inherit the scan's state (its
    read text, word index, pre-filter) instead of being sent it. Elsewhere the platform's default
    (spawn on macOS and Windows)."""
    return multiprocessing.get_context("fork" if sys.platform.startswith("linux") else None)


#: the result pipe's capacity asked for when a pool's workers send much back (bytes): Linux's
#: default is 64 KiB, and 1 MiB is what any user may ask for (``/proc/sys/fs/pipe-max-size``)
WIDE_PIPE_BYTES = 1 << 20


def widen_result_pipe(pool: concurrent.futures.ProcessPoolExecutor) -> bool:
    """Ask for a wider pipe for the results of ``pool`` (before its first task): readers send the
    bytes of every file they read, and through a 64 KiB pipe each chunk of ~2 MB is handed over
    in 30-odd hops, each one waiting for the scan's process to take the last (the reading phase
    of a 5,000-file tree: ~0.06 s less). Best effort: False where the platform has no such
    setting or refuses it (the pipe then stays as it was)."""
    try:
        import fcntl
    except ImportError:  # Windows
        return False
    reader = getattr(getattr(pool, "_result_queue", None), "_reader", None)
    setting = getattr(fcntl, "F_SETPIPE_SZ", None)
    if reader is None or setting is None:
        return False
    try:
        fcntl.fcntl(reader.fileno(), setting, WIDE_PIPE_BYTES)
    except OSError:  # over the user's pipe quota, or a kernel that refuses
        return False
    return True


def stop_pool(pool: concurrent.futures.ProcessPoolExecutor) -> None:
    """Kill a process pool's workers and drop its queue (``kill_workers`` from Python 3.14; the
    executor's worker table before that): Ctrl-C, SIGTERM or a failure must not wait for every
    queued task. Returns once the pool's manager thread has ended (or ``MANAGER_JOIN_SECONDS``
    passed): left running, it raced the interpreter's exit hook for the pool's wake-up pipe
    ("Exception ignored ... Bad file descriptor" after a SIGTERM, 1 run in 50)."""
    # shutdown() drops the executor's references to both
    results = getattr(pool, "_result_queue", None)
    manager = getattr(pool, "_executor_manager_thread", None)
    kill = getattr(pool, "kill_workers", None)
    if callable(kill):
        kill()
    else:
        for proc in list((getattr(pool, "_processes", None) or {}).values()):
            try:
                proc.kill()
            except Exception:
                pass
    pool.shutdown(wait=False, cancel_futures=True)
    _unblock_result_reader(results)
    if isinstance(manager, threading.Thread):
        manager.join(MANAGER_JOIN_SECONDS)


def _unblock_result_reader(results: object) -> None:
    """Close this process's copy of the pool's result pipe's write end.

    A worker killed while it was writing a result leaves half a message in the pipe; the pool's
    manager thread, already inside ``recv`` for it, waits for the rest for ever, since the write
    end is still open here -- and the interpreter joins that thread at exit, so the command hung
    after printing that it was terminated (measured: 2 runs in 5 of a SIGTERM during reading).
    Only the workers write results; with them killed and this copy closed, the reader gets EOF,
    the manager thread marks the pool broken and ends."""
    writer = getattr(results, "_writer", None)
    if writer is not None:
        try:
            writer.close()
        except OSError:
            pass
