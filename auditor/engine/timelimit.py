"""The per-file time limit: a file whose analysis runs too long is reported and skipped, and the
scan goes on.

A wall-clock alarm (SIGALRM through ``setitimer``), so it also stops a loop stuck inside the
analysis; only where signals can be used (the main thread of a process: the scan's own, or a
pool worker's). Elsewhere -- a scan run from a thread -- files run without a limit.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from types import FrameType
from typing import Any, Callable, Iterator, Union

#: what ``signal.signal`` takes and gives back
_Handler = Union[Callable[[int, Union[FrameType, None]], Any], int, signal.Handlers, None]


class TimeLimit(Exception):
    """Raised inside the analysis when the file's time is up."""


class Alarm:
    """A per-file wall-clock limit (SIGALRM; only where signals can be used: the main thread)."""

    #: after the limit, the alarm fires again this often until the body has stopped: an exception
    #: raised while a gc callback or ``__del__`` runs is printed and dropped by the interpreter
    #: (seen in CI: hypothesis's gc callback ate one), and the file would run on unlimited. Long
    #: enough that the first one's unwinding reaches ``__exit__`` before a repeat, on a loaded machine.
    REPEAT_SECONDS = 0.5

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.active = (
            bool(seconds) and threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
        )
        self.stopping = False
        self.previous: _Handler = None

    def __enter__(self) -> "Alarm":
        if self.active:
            assert self.seconds  # active only with a limit
            self.stopping = False
            self.previous = signal.signal(signal.SIGALRM, self._raise)
            try:
                signal.setitimer(signal.ITIMER_REAL, self.seconds)
            except TimeLimit:
                # a limit shorter than the way back to the caller: the alarm fired (and armed its
                # repeat) before the block began, so no ``__exit__`` will stop it -- stop it here
                self.__exit__()
                raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self.active:
            try:
                # from here the handler neither raises nor re-arms: a repeat that fired while the
                # body's exception was unwinding must not outlive the block (it once crashed pytest
                # 50 ms later, far from any analysis)
                self.stopping = True
            finally:  # even when a repeat raised on the line above
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, self.previous)

    def _raise(self, signum: int, frame: FrameType | None) -> None:
        if self.stopping:
            return
        signal.setitimer(signal.ITIMER_REAL, Alarm.REPEAT_SECONDS)
        raise TimeLimit()

    @staticmethod
    def running() -> bool:
        return (
            hasattr(signal, "getitimer")
            and threading.current_thread() is threading.main_thread()
            and signal.getitimer(signal.ITIMER_REAL)[0] > 0
        )

    @staticmethod
    @contextlib.contextmanager
    def paused(seconds: float | None) -> Iterator[None]:
        """Run the body on a fresh budget of ``seconds``, then give the running alarm back what it had left."""
        remaining = signal.setitimer(signal.ITIMER_REAL, 0)[0]
        try:
            if seconds:
                signal.setitimer(signal.ITIMER_REAL, seconds)
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            if remaining > 0:
                signal.setitimer(signal.ITIMER_REAL, remaining)
