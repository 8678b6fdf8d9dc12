"""The analysis thread: scans run one at a time on the process's main thread, the protocol on
another.

The per-file time limit is a ``SIGALRM`` (:mod:`resume_audit.engine.timelimit`), which only the
main thread can take: analysing there keeps the limit, so a file whose analysis never ends is
reported and skipped exactly as in ``resume-audit scan`` -- and the protocol thread keeps
answering (hover, shutdown) while a long indexing runs. The engine's state is not shared between
threads: only this thread touches it.
"""

from __future__ import annotations

import logging
import queue
import threading
from concurrent.futures import Future
from typing import Callable, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")


class _Stop:
    """The queue's end marker."""


class AnalysisThread:
    """A queue of jobs run in order by whichever thread calls :meth:`run` (the main thread)."""

    def __init__(self) -> None:
        self._jobs: queue.Queue[tuple[Callable[[], object], Future[object]] | _Stop] = queue.Queue()
        self.stopped = threading.Event()

    def submit(self, job: Callable[[], T]) -> Future[T]:
        """Run ``job`` after the jobs before it; its result (or exception) comes in the future."""
        done: Future[T] = Future()
        if self.stopped.is_set():
            done.cancel()
            return done
        self._jobs.put((job, done))  # type: ignore[arg-type]  # (a Future[T] is read back as one)
        return done

    def stop(self) -> None:
        """End :meth:`run` after the job running now; jobs not started are cancelled."""
        self.stopped.set()
        self._jobs.put(_Stop())

    def run(self) -> None:
        """Run jobs until :meth:`stop`. A job's exception goes to its future, never out of here:
        one bad file, or a bug, must not end the server."""
        while True:
            item = self._jobs.get()
            if isinstance(item, _Stop) or self.stopped.is_set():
                if not isinstance(item, _Stop):
                    item[1].cancel()
                break
            job, done = item
            if not done.set_running_or_notify_cancel():
                continue
            try:
                done.set_result(job())
            except Exception as exc:  # handed to whoever waits for it
                log.exception("analysis job failed")
                done.set_exception(exc)
        while not self._jobs.empty():  # what was queued behind the stop
            item = self._jobs.get_nowait()
            if not isinstance(item, _Stop):
                item[1].cancel()
