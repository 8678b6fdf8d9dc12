"""What a probe module declares, and what the sweep hands it.

A probe owns one question of the resume contract and everything about it, so
that adding one is writing one module (``docs/developing-probes.md``):

- ``kinds``: the cell kinds it answers (its ``--cells`` names, declared with
  :meth:`~resume_audit.dynamic.cells.CellKind.declare`), in the report's order;
- ``rules``: the dynamic rules its cells can raise, and ``catalog``: the
  :class:`DynamicRule` metadata of the ones it owns (SARIF, ``explain``, docs,
  the pytest assertions' headlines);
- ``columns``: the conformance matrix columns read off its cells;
- ``plan``: its slots -- cells already judged from the uninterrupted run, jobs
  that start children, cells derived from other slots' outcomes -- and a judge
  that turns children's reports and the ledger into a
  :class:`~resume_audit.dynamic.cells.Cell` with typed hits and witness.

The sweep (:func:`resume_audit.dynamic.parent.sweep.crash_sweep`) only plans,
runs the jobs, and resolves the slots in order; every other table of the
dynamic stage is derived from the registered probes
(:mod:`resume_audit.dynamic.probes`).

The parent's workbench and child runs appear here as types only: the probe
modules are imported by the rule catalog, which a warm ``scan`` reads for rule
names and which must not import the process machinery (``multiprocessing``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, ClassVar, Mapping, Protocol

from resume_audit.dynamic.cells import Cell, CellKind, Gate, Reference
from resume_audit.dynamic.child_result import ChildResult
from resume_audit.dynamic.killpoints import Event
from resume_audit.dynamic.ledger import Ledger
from resume_audit.findings import Severity

if TYPE_CHECKING:
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


@dataclass(frozen=True)
class DynamicRule:
    """One dynamic finding id, declared by the probe module that owns it.

    Attribute names match :class:`resume_audit.rules.Rule`, so the SARIF reporter, ``resume-audit explain``
    and the docs read static and dynamic rules alike. Dynamic findings are observations, not patterns,
    so the descriptors carry no code examples.
    """

    id: str
    name: str
    properties: tuple[str, ...]
    severity: Severity
    summary: str
    description: str
    runtime: str
    fix: str
    #: the line a failing pytest assertion opens a finding's witness block with
    headline: str
    frameworks: tuple[str, ...] = ("langgraph",)
    not_flagged: str = ""
    #: dynamic rules have no static examples; present so doc renderers can treat both kinds alike
    VALID: ClassVar[tuple[object, ...]] = ()
    INVALID: ClassVar[tuple[object, ...]] = ()
    origin: ClassVar[str] = "dynamic"


@dataclass(frozen=True)
class Column:
    """One column of the conformance matrix: a property, read off the cells of a probe's kinds (never decided
    by the conformance suite itself). Columns are ordered by contract property, then by probe."""

    id: str
    title: str
    #: the contract property (:data:`resume_audit.findings.PROPERTIES`) the column shows
    property: str
    #: a cell carrying a hit of this rule makes the column ✗
    rule: str
    #: the cell kinds it is read from; None: every kind whose cells exercise the program (liveness is
    #: whether the documented resume path completed, wherever the program ran)
    kinds: tuple[str, ...] | None
    #: a ✗'s witness is the finding's sentence (not the effect counts of the failing cell)
    witness_from_message: bool = False


class Probe(Protocol):
    """One probe module (see the module docstring for what each attribute means)."""

    kinds: tuple[CellKind, ...]
    rules: tuple[str, ...]
    catalog: tuple[DynamicRule, ...]
    columns: tuple[Column, ...]

    def plan(self, planning: Planning) -> list[Slot]: ...
