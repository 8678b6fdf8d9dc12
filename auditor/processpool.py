"""The standard process pool as the scan uses it: which start method, and stopping it at once.

Imported only when a scan starts a pool: a warm scan never needs ``multiprocessing``.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import sys
from multiprocessing.context import BaseContext


def pool_context() -> BaseContext:
    """Forked workers where that is safe to ask for (Linux): they inherit the scan's state (its
    read text, word index, pre-filter) instead of being sent it. Elsewhere the platform's default
    (spawn on macOS and Windows)."""
    return multiprocessing.get_context("fork" if sys.platform.startswith("linux") else None)


def stop_pool(pool: concurrent.futures.ProcessPoolExecutor) -> None:
    """Kill a process pool's workers and drop its queue (``kill_workers`` from Python 3.14; the
    executor's worker table before that): Ctrl-C, SIGTERM or a failure must not wait for every
    queued task."""
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
