"""What a child's role works with: the session, the ledger, the events, and the protocol's driver.

A role (:mod:`resume_audit.dynamic.child.roles`, or a probe's own, see
:attr:`resume_audit.dynamic.spec.ChildSpec.role_entry`) gets one :class:`Context`:
it drives the protocol -- the input, then one ``--resume`` value per
interrupt, a static breakpoint continued without one -- and fills the
:class:`~resume_audit.dynamic.child_result.ChildResult` the parent reads.
"""

from __future__ import annotations

from typing import Any

from resume_audit.dynamic.adapters.base import Instruments, Outcome, PendingInterrupt, Session
from resume_audit.dynamic.child_result import ChildResult, ParkRecord
from resume_audit.dynamic.killpoints import EventLog
from resume_audit.dynamic.ledger import Ledger
from resume_audit.dynamic.spec import AUTO_INPUT, ChildSpec

__all__ = ["Context", "ProtocolError"]


class ProtocolError(RuntimeError):
    """The graph parked more often than there are ``--resume`` values."""


class Context:
    """What a role function works with."""

    def __init__(
        self,
        spec: ChildSpec,
        session: Session,
        ledger: Ledger,
        events: EventLog,
        instruments: Instruments,
        result: ChildResult,
    ) -> None:
        self.spec = spec
        self.session = session
        self.ledger = ledger
        self.events = events
        self.instruments = instruments
        self.resume = list(spec.run.resume)
        #: what the role reports; what it learned before a failure is kept
        self.result = result
        self.module: Any = None
        self.target: Any = None
        #: where ``drive(until_gate=...)`` stopped: the pending outcome and its park record
        self.stopped_at: tuple[Outcome, ParkRecord] | None = None
        #: the kind of the last park answered ("interrupt", or a static breakpoint's "before"/"after")
        self.last_park_kind = "interrupt"
        #: racers: the barrier that releases them together (set by :func:`~resume_audit.dynamic.child.main.main`)
        self.barrier: Any = None

    @property
    def input(self) -> Any:
        """The protocol's input: as given, or synthesised from the program's input schema."""
        if self.spec.run.input is not AUTO_INPUT:
            return self.spec.run.input
        if self.result.input_used is None:
            example = self.session.example_input()
            self.result.input_used = example if example is not None else {}
        return self.result.input_used

    def set_leg(self, leg: int) -> None:
        self.events.leg = leg
        self.ledger.leg = leg

    def answers_for(self, outcome: Outcome) -> tuple[list[tuple[PendingInterrupt, Any]], list[int]]:
        """Each pending park's answer, and its gate index (its place among every park of the protocol).

        A dynamic interrupt takes the next ``--resume`` value; a static
        breakpoint takes none (it is continued with ``invoke(None)``).
        """
        idxs = [self.ledger.interrupt_index(i.id) for i in outcome.interrupts]
        answers: list[tuple[PendingInterrupt, Any]] = []
        for intr in outcome.interrupts:
            if not intr.takes_value:
                answers.append((intr, None))
                continue
            vi = self.ledger.value_index(intr.id)
            if vi >= len(self.resume):
                raise ProtocolError(
                    f"the graph parked at interrupt #{vi + 1} ({intr.describe()}, value {intr.value!r}) "
                    f"but only {len(self.resume)} --resume value(s) were given"
                )
            answers.append((intr, self.resume[vi]))
        return answers, idxs

    def park_record(self, outcome: Outcome, idxs: list[int]) -> ParkRecord:
        first = outcome.interrupts[0]
        if first.kind != "interrupt":
            return ParkRecord(min(idxs), first.node, first.value, kind=first.kind)
        return ParkRecord(min(idxs), first.node, first.value, value_index=self.ledger.value_index(first.id))

    def drive(self, outcome: Outcome, *, until_gate: int | None = None) -> list[ParkRecord]:
        """Answer every park with its ``--resume`` value until the run completes.

        With ``until_gate`` stop (parked) at the park whose gate index is that
        number; the caller probes it.
        """
        parks: list[ParkRecord] = []
        while outcome.parked:
            answers, idxs = self.answers_for(outcome)
            record = self.park_record(outcome, idxs)
            if until_gate is not None and record.index >= until_gate:
                self.stopped_at = (outcome, record)
                return parks
            parks.append(record)
            self.last_park_kind = record.kind
            first = outcome.interrupts[0]
            where = (
                f"interrupt {record.index} in node {first.node}"
                if first.takes_value
                else f"static breakpoint {record.index} ({first.kind} node {first.node})"
            )
            self.events.emit("park", f"parking at {where}", node=first.node)
            self.set_leg(max(idxs) + 1)
            outcome = self.session.answer(answers)
        return parks

    def finish(self) -> None:
        self.result.final_state, self.result.final_step = self.session.final_state()
        self.result.checkpoints = self.session.checkpoint_count()

    def audit(self) -> None:
        self.result.invalid = list(self.session.audit_checkpoints())

    def park_at_gate(self) -> tuple[PendingInterrupt, ParkRecord] | None:
        """Run from the input to the park the spec's ``gate`` names, answering the parks before it."""
        gate = self.spec.gate
        self.set_leg(0)
        self.drive(self.session.start(self.input), until_gate=gate)
        if self.stopped_at is None or self.stopped_at[1].index != gate:
            return None
        outcome, record = self.stopped_at
        self.set_leg(gate + 1)
        return outcome.interrupts[0], record
