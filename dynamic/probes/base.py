"""What a probe module declares, and what the sweep hands it.

A probe owns one question of the resume contract (one ``--cells`` kind):
:meth:`Probe.plan` lays out its slots -- cells already judged from the
uninterrupted run, jobs that start children, cells derived from other slots'
outcomes -- and the module's judge turns children's reports and the ledger
into a :class:`~resume_audit.dynamic.cells.Cell` with typed hits and witness. The
sweep (:func:`resume_audit.dynamic.parent.sweep.crash_sweep`) only plans, runs the jobs,
and resolves the slots in order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Protocol

from resume_audit.dynamic.cells import Cell, CellKind, Gate, Reference
from resume_audit.dynamic.child_result import ChildResult
from resume_audit.dynamic.killpoints import Event
from resume_audit.dynamic.ledger import Ledger
from resume_audit.dynamic.parent.runner import ChildRun
from resume_audit.dynamic.parent.workbench import Workbench


@dataclass
class CellOutcome:
    """A job's result: its judged cell, the children it ran, and its directory."""

    cell: Cell
    runs: list[ChildRun]
    cell_dir: str


Outcomes = Mapping[str, CellOutcome]


@dataclass
class Slot:
    """One place in the sweep's stable cell order, and how it is filled.

    ``cell`` is judged at planning; ``job`` runs in the pool and its outcome's
    cell fills the slot; ``derive`` judges the slot from the outcomes of every
    job once all ran (with or without a job of its own). A slot with
    ``shown=False`` is a job another slot reads, not a cell of the report.
    """

    label: str
    cell: Cell | None = None
    job: Callable[[], CellOutcome] | None = None
    derive: Callable[[Outcomes], Cell | None] | None = None
    shown: bool = True
    #: run after the pool, with nothing beside it (racers overlap only on idle cores)
    alone: bool = False
    #: slots of one group go to the same shard (a write-order cell needs its natural-order crash)
    group: str = ""

    def __post_init__(self) -> None:
        self.group = self.group or self.label

    def resolve(self, outcomes: Outcomes) -> Cell | None:
        if self.cell is not None:
            return self.cell
        if self.derive is not None:
            return self.derive(outcomes)
        outcome = outcomes.get(self.label)
        return outcome.cell if outcome is not None else None


@dataclass
class Planning:
    """What every probe plans from: the reference run and the sweep's options."""

    bench: Workbench
    ref: Reference
    dry: ChildResult
    #: the uninterrupted run's ledger, open while probes plan
    dry_ledger: Ledger
    wanted: frozenset[CellKind]
    crash_modes: tuple[str, ...]
    racers: tuple[int, ...]
    backend: str
    #: kill points (every named event but parks), in the sweep's order
    points: list[Event] = field(default_factory=list)
    #: the parks of the uninterrupted run, as kill points
    parks: list[Event] = field(default_factory=list)
    #: every pause point the probes run at (one placeholder gate when the run never parks)
    gates: list[Gate] = field(default_factory=list)


class Probe(Protocol):
    """One probe module: the cell kinds it answers, the rules it can raise, its plan."""

    kinds: frozenset[CellKind]
    rules: tuple[str, ...]

    def plan(self, planning: Planning) -> list[Slot]: ...
