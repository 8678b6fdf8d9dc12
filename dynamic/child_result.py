"""What a sweep child reports to the parent: one typed record per process.

The child fills a :class:`ChildResult` as it plays its role and writes it as
``result.json`` (:func:`resume_audit.codec.encode`); the parent reads
it back with :meth:`ChildResult.load`. Every role shares the one record --
fields a role does not produce keep their defaults -- so a judge reads
``result.parks`` or ``result.durable.exists`` and a type checker sees a
misspelt field, where a string-keyed dict answered ``None``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from resume_audit.codec import decode, encode, omit_default
from resume_audit.dynamic.adapters.base import InvalidState, PlaneDescription, SourceLocation
from resume_audit.dynamic.confinement import ConfinementState
from resume_audit.dynamic.killpoints import Event
from resume_audit.dynamic.values import to_jsonable


@dataclass(frozen=True)
class ChildError:
    """The user's program ended the child: it raised (``kind="raised"``) or called ``sys.exit`` (``"exit"``)."""

    kind: str
    message: str
    where: str | None = None  # "file:line" of the innermost frame in the user's code
    type: str | None = None  # the exception's class name (raised)


@dataclass(frozen=True)
class ParkRecord:
    """One pause point as a run met it (its gate index counts every park of the protocol in order)."""

    index: int
    node: str | None
    value: Any = None
    #: "interrupt" (dynamic), "before"/"after" (static breakpoints)
    kind: str = omit_default("interrupt")
    #: which ``--resume`` value answers it (dynamic interrupts only)
    value_index: int | None = omit_default(None)

    @property
    def breakpoint(self) -> bool:
        return self.kind != "interrupt"


@dataclass(frozen=True)
class StrayDelivery:
    """The stray probe: one more delivery of the documented resume after the run completed."""

    sent: Any
    error: str | None
    parked: bool
    state_changed: bool
    state_before: Any
    state_after: Any
    step_before: int | None
    step_after: int | None
    checkpoints_added: int
    #: how it was delivered when not as ``Command(resume=sent)`` (a breakpoint's ``invoke(None)``)
    delivery: str | None = omit_default(None)


@dataclass(frozen=True)
class DurableFound:
    """What a fresh interpreter found durable on the thread after the crash."""

    exists: bool
    step: int | None
    interrupts: int
    next: list[str]
    #: ids of tasks completed durably (frameworks whose restore re-delivers; empty elsewhere)
    completed: list[str]


@dataclass(frozen=True)
class ForkBranch:
    """One of the fork probe's two resumes at the same park."""

    sent: Any
    error: str | None


@dataclass
class ChildResult:
    """Everything one child learned; a role fills the fields it is about."""

    role: str
    phase: str
    #: the role completed (the user's graph did not raise, exit, or break the protocol)
    ok: bool = False
    framework: str | None = None
    target_error: str | None = None
    protocol_error: str | None = None
    error: ChildError | None = None
    # -- every role that opened a session -------------------------------------------------
    store_used: bool = False
    graph_how: str = ""
    saver_ops: int = 0
    describe: PlaneDescription = field(default_factory=PlaneDescription)
    schedule_escaped: bool = False
    last_node: str | None = None
    reaped: int = 0
    #: the kernel layers the child put itself under (None: it did not get that far)
    confinement: ConfinementState | None = None
    #: the input the run was started with, when it was synthesised from the program's schema
    input_used: Any = None
    # -- dry: the uninterrupted run --------------------------------------------------------
    nodes: dict[str, SourceLocation] = field(default_factory=dict)
    schema: str | None = None
    fork_forms: list[str] = field(default_factory=list)
    stray_after_restore: bool = False
    target_location: SourceLocation | None = None
    parks: list[ParkRecord] = field(default_factory=list)
    final_state: Any = None
    final_step: int | None = None
    checkpoints: int = 0
    events: list[Event] = field(default_factory=list)
    invalid: list[InvalidState] = field(default_factory=list)
    stray: StrayDelivery | None = None
    # -- crash -----------------------------------------------------------------------------
    #: "exception" when the injected exception ended the run (a SIGKILL leaves no result at all)
    crashed: str | None = None
    message: str | None = None
    #: False when the run completed without meeting its kill point
    reached: bool | None = None
    # -- recover ---------------------------------------------------------------------------
    how: str | None = None
    durable: DurableFound | None = None
    #: (node, step) of durably completed units that ran again
    reran_completed: list[tuple[str, int | None]] = field(default_factory=list)
    # -- fork, setup, racer ----------------------------------------------------------------
    applicable: bool = False
    node: str | None = None
    gate: ParkRecord | None = None
    branches: list[ForkBranch] = field(default_factory=list)
    why: str | None = None
    parked: bool = False
    #: the session persists through the sweep's store (separate processes share its parks)
    shared: bool = False
    #: what the racer's resume call raised
    resume_error: str | None = None

    def write(self, path: str) -> None:
        """Atomically, so the parent never reads half a result."""
        tmp = f"{path}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(encode(self), fh, default=to_jsonable, sort_keys=True)
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: str) -> "ChildResult":
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        result: ChildResult = decode(cls, data)
        return result
