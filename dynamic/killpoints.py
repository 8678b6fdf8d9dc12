"""Named events and timing-free kill points.

Every event the sweep can crash after -- a checkpointer operation returning,
an effect recorded in the ledger, a run parking at an interrupt -- is given a
name that says what happened ("resume 1: after put_writes of node charge,
step 3"), not a counter: the framework's executor reorders operations between
runs, so "the 7th operation" is not the same point twice, while "after
put_writes of node charge" is. A name that occurs more than once in one run
gets an occurrence suffix ("(#2)").

A crash is synchronous with its event: the thread that completed the event
SIGKILLs its own process before doing anything else. No sleeps, no timing
windows, no signal from outside.

A crash can also be an exception (``mode="exception"``): the event raises
:class:`InjectedCrash` -- an ordinary error, like a bug raising in the next
line -- and the process lives on, so the framework's own failure handling
(failure events, error writes, snapshot statuses) runs as it would for a
raising unit. Where the event happens on a background thread whose errors the
framework swallows (a checkpoint listener), the adapter defers the exception to
the next unit start on the main path (:meth:`EventLog.defer`).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable

#: event kinds, in the order used to sort points of one step
KIND_ORDER = {"effect": 0, "put_writes": 1, "put": 2, "persist": 2, "park": 3}
#: event kinds that make progress durable (a crash after one leaves something to restore)
DURABLE_KINDS = ("put", "persist")

CRASH_MODES = ("sigkill", "exception")


class InjectedCrash(RuntimeError):
    """The crash of ``mode="exception"``: raised at the kill point."""


@dataclass(frozen=True)
class Event:
    """One named event of one run."""

    name: str
    kind: str  # "effect" | "put_writes" | "put" | "park"
    leg: int
    step: int | None
    node: str | None

    def sort_key(self) -> tuple[int, int, int, str]:
        return (self.leg, self.step if self.step is not None else -99, KIND_ORDER.get(self.kind, 9), self.name)

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "leg": self.leg, "step": self.step, "node": self.node}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Event":
        return cls(d["name"], d["kind"], d["leg"], d.get("step"), d.get("node"))


def leg_label(leg: int) -> str:
    """Leg 0 is the first invocation with the input; leg k answers the k-th interrupt."""
    return "run" if leg == 0 else f"resume {leg}"


class EventLog:
    """Names the events of one process and crashes it at the chosen one."""

    def __init__(
        self, kill_at: str | None = None, on_kill: Callable[[], object] | None = None, mode: str = "sigkill"
    ) -> None:
        self.kill_at = kill_at
        self.on_kill = on_kill
        self.mode = mode
        #: an InjectedCrash raised where the framework would swallow it, to re-raise on the main path
        self.deferred: InjectedCrash | None = None
        self.leg = 0
        self.events: list[Event] = []
        self._seen: Counter[str] = Counter()
        self._lock = threading.Lock()
        self.killed = False

    def emit(self, kind: str, what: str, step: int | None = None, node: str | None = None) -> Event:
        """Record that ``what`` just happened; SIGKILL this process if it is the kill point."""
        with self._lock:
            base = f"{leg_label(self.leg)}: after {what}"
            self._seen[base] += 1
            n = self._seen[base]
            name = base if n == 1 else f"{base} (#{n})"
            event = Event(name, kind, self.leg, step, node)
            self.events.append(event)
            crash = self.kill_at is not None and name == self.kill_at and not self.killed
            if crash:
                self.killed = True
                if self.mode == "sigkill":
                    self._die()
        if crash:
            raise InjectedCrash(f"resume-audit injected crash {name}")
        return event

    def defer(self, exc: InjectedCrash) -> None:
        """Keep a crash raised on a background thread, for :meth:`raise_deferred` on the main path."""
        self.deferred = exc

    def raise_deferred(self) -> None:
        """Raise a deferred crash (called by adapters at unit starts and when an invocation returns)."""
        exc, self.deferred = self.deferred, None
        if exc is not None:
            raise exc

    def _die(self) -> None:
        if self.on_kill is not None:
            try:
                self.on_kill()
            except Exception:
                pass
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os.kill(os.getpid(), signal.SIGKILL)
