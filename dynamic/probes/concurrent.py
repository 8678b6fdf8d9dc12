"""RA705 (CO, concurrent): k processes resuming one park together must fire its gated effects once.

At every gate a setup child runs to the park on the sweep's durable store;
then k racer processes, released together from a barrier, each resume it (the
gate's ``--resume`` value, or ``invoke(None)`` past a static breakpoint). The
ledger counts the gated effects: more than one resume fires is a finding. A
race that did not happen -- the racers never overlapped -- is run again, and
said so when it never did.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from resume_audit.codec import omit_default
from resume_audit.dynamic.cells import (
    ERROR,
    FAIL,
    NOT_APPLICABLE,
    PASS,
    Cell,
    CellKind,
    Gate,
    GateRef,
    Hit,
    Reference,
    Witness,
    pairs,
)
from resume_audit.dynamic.ledger import Ledger, cell_ledger
from resume_audit.dynamic.probes.base import CellOutcome, Column, DynamicRule, Planning, Slot
from resume_audit.findings import Severity

if TYPE_CHECKING:
    from resume_audit.dynamic.child.context import Context
    from resume_audit.dynamic.parent.runner import ChildRun
    from resume_audit.dynamic.parent.workbench import Workbench


kind = CellKind.declare("concurrent")
kinds: tuple[CellKind, ...] = (kind,)
rules: tuple[str, ...] = ("RA705",)

RA705 = DynamicRule(
    id="RA705",
    name="concurrent-double-consume",
    properties=("CO", "EO"),
    severity=Severity.ERROR,
    summary="k concurrent resumes of one parked interrupt fired the gated effect more than once (CO-c/CO-e).",
    description="""
k processes resumed the same parked interrupt on one durable store, released
together from a barrier. The effect ledger recorded the gated effect more often
than the single resume of the uninterrupted run fires it.
""",
    runtime="""
Consuming an interrupt is a read-decide-write with no compare-and-swap: every
resume that loads the parked checkpoint before another's consumption is
durable runs the gated node, each served its own value, with no error on any
side (measured on langgraph 1.2.24 with `SqliteSaver` and `PostgresSaver`).
The durable state afterwards records one branch: the duplicate is visible only
in an external effect record.
""",
    fix="""
Serialise resume delivery per thread (a lock or a unique claim on
`(thread_id, checkpoint_id)` in the shared store taken before invoking), e.g.
`remit.wrap(saver, conn, cross_process_gate=True)`, and make the gated effect
idempotent.
""",
    headline="concurrent resumes of one parked interrupt fired the gated effect more than once",
)

catalog: tuple[DynamicRule, ...] = (RA705,)
columns: tuple[Column, ...] = (Column("CO-conc", "CO concurrent", "CO", "RA705", (kind,)),)
#: how often the probe is run when its racers did not overlap (each found the park consumed)
RACE_ATTEMPTS = 3
#: how long a racer waits for the others at the barrier
BARRIER_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class RaceWitness(Witness):
    racers: int
    consumed: int
    served: list[Any]
    racer_errors: list[str]
    racer_failures: list[str]
    gate: GateRef | None = omit_default(None)


@dataclass(frozen=True)
class Counts:
    expected: int
    observed: int


@dataclass(frozen=True)
class DoubleConsumeWitness(Witness):
    """RA705: how often the park was consumed, and the effects that fired more than once."""

    racers: int
    consumed: int
    effects: dict[str, Counts]

    def lines(self) -> list[str]:
        out = [
            f"  {'probe:':<12} {self.racers} processes resumed one parked interrupt together (one durable store)",
            f"  {'consumed:':<12} the interrupt {self.consumed} times",
        ]
        for effect, c in sorted(self.effects.items()):
            want = f"{c.expected} call{'s' if c.expected != 1 else ''}"
            got = f"{c.observed} call{'s' if c.observed != 1 else ''}"
            width = max(len(want), len(got))
            out += [
                f"  {'effect:':<12} {effect}  {c.expected} -> {c.observed}",
                f"  - {want:<{width}}  (one resume)",
                f"  + {got:<{width}}  ({self.racers} concurrent resumes)",
            ]
        return out


def name(k: int, gate: Gate) -> str:
    return f"{k} concurrent resumes of one parked interrupt{gate.suffix}"


def plan(planning: Planning) -> list[Slot]:
    ks = planning.racers
    if planning.backend == "memory":
        return [
            Slot(
                f"na:{name(k, gate)}",
                cell=Cell(
                    kind,
                    name(k, gate),
                    NOT_APPLICABLE,
                    detail="an in-memory checkpointer is private to each process: there is no shared store to race on",
                ),
            )
            for gate in planning.gates
            for k in ks
        ]
    # Racers run alone, after every other cell: k processes released together overlap only when no
    # other cell competes for the cores (on two cores, 4 racers beside the pool's cells resumed one
    # after another often enough to undercount the duplicates).
    return [
        Slot(f"concurrent:{k}:{gate.index}", job=partial(run_cell, planning.bench, k, planning.ref, gate), alone=True)
        for gate in planning.gates
        for k in ks
    ]


def run_cell(bench: Workbench, k: int, ref: Reference, gate: Gate) -> CellOutcome:
    """k racers on one park; a race whose racers never overlapped says nothing, so it is run again."""
    runs: list[ChildRun] = []
    outcome = None
    for attempt in range(1, RACE_ATTEMPTS + 1):
        outcome = _attempt(bench, k, ref, gate, attempt)
        runs += outcome.runs
        w = outcome.cell.witness
        overlapped = isinstance(w, RaceWitness) and (w.consumed > 1 or bool(w.racer_errors))
        if outcome.cell.verdict != PASS or overlapped:
            return CellOutcome(outcome.cell, runs, outcome.cell_dir)
    assert outcome is not None
    outcome.cell.detail += (
        f"; in {RACE_ATTEMPTS} attempts the racers never overlapped (each later racer found the park "
        "already consumed), so concurrent consumption was not observed either way"
    )
    return CellOutcome(outcome.cell, runs, outcome.cell_dir)


def _attempt(bench: Workbench, k: int, ref: Reference, gate: Gate, attempt: int) -> CellOutcome:
    cell_dir = bench.cell_dir(f"concurrent-{k}-gate{gate.index}" + (f"-try{attempt}" if attempt > 1 else ""))
    store = bench.store(cell_dir)
    at = dict(gate=gate.index, value_index=gate.value_index, breakpoint=gate.breakpoint)
    setup = bench.child(bench.spec("setup", cell_dir, store, "setup", 0, role_entry=child_setup, **at))
    racers: list[ChildRun] = []
    if setup.completed and setup.result is not None and setup.result.parked:
        racers = bench.racers(
            [bench.spec("racer", cell_dir, store, "race", i + 1, role_entry=child_racer, **at) for i in range(k)]
        )
    with cell_ledger(cell_dir) as ledger:
        return CellOutcome(judge(k, setup, racers, ledger, ref, gate), [setup, *racers], cell_dir)


def child_setup(ctx: Context) -> None:
    """In the child: run to the gate's park on the cell's durable store, and leave it parked."""
    r = ctx.result
    r.shared = ctx.session.uses_sweep_store()
    found = ctx.park_at_gate()
    if found is not None:
        intr, r.gate = found
        r.parked, r.node = True, intr.node


def child_racer(ctx: Context) -> None:
    """In the child: resume the park the setup process left, released together with the other racers -- its value
    for an interrupt, ``invoke(None)`` for a breakpoint."""
    r = ctx.result
    ctx.set_leg(ctx.spec.gate + 1)
    ctx.barrier.wait(BARRIER_TIMEOUT_S)
    try:
        if ctx.spec.breakpoint:
            r.parked = ctx.session.proceed().parked
        else:
            r.parked = ctx.session.resume_raw(ctx.resume[ctx.spec.value_index]).parked
    except Exception as exc:
        r.resume_error = f"{type(exc).__name__}: {exc}"
    ctx.audit()


def judge(k: int, setup: ChildRun, racers: list[ChildRun], ledger: Ledger, ref: Reference, gate: Gate) -> Cell:
    cell = Cell(
        kind=kind,
        name=name(k, gate),
        verdict=PASS,
        seconds=setup.seconds + max((r.seconds for r in racers), default=0.0),
    )
    if not setup.completed or setup.result is None:
        cell.verdict = ERROR
        cell.detail = f"could not park the run: {setup.failure_text()}"
        return cell
    if not setup.result.parked:
        cell.verdict = NOT_APPLICABLE
        cell.detail = "the graph never parks at an interrupt"
        return cell
    if not setup.result.shared:
        cell.verdict = NOT_APPLICABLE
        cell.detail = (
            "the graph does not persist through the sweep's store, so separate processes share no park to race on"
        )
        return cell
    expected = ref.effects_by_leg.get(gate.index + 1, Counter())
    cell.effects = pairs(expected, ledger.fired_counts(phases=["race"]))
    node = setup.result.node
    served = ledger.served(phases=["race"])
    if not any(s[2] == node for s in served):  # the answer is consumed by another unit than the one that parked
        node = served[0][2] if served else node
    consumed = len([s for s in served if s[2] == node])
    failures = [r.failure_text() for r in racers if not r.completed]
    errors: list[str] = [
        r.result.resume_error for r in racers if r.completed and r.result is not None and r.result.resume_error
    ]
    if gate.breakpoint:  # a static breakpoint serves no value: each racer that ran the gated node consumed it
        consumed = len({r.pid for r in ledger.node_runs(phases=["race"]) if r.node == node}) if node else 0
    cell.witness = RaceWitness(
        k, consumed, [s[3] for s in served if s[2] == node], sorted(errors), sorted(failures), gate.ref
    )
    if failures:
        cell.verdict = ERROR
        cell.detail = "; ".join(sorted(set(failures)))
        return cell
    extra = {e: (x, o) for e, (x, o) in cell.effects.items() if o > x}
    if extra:
        cell.verdict = FAIL
        # located at the duplicated effect the resumed leg reaches last (the gated one, past any
        # re-entry of the parked node); one finding per gate, however many effects each race doubled
        order = list(expected)
        primary = max(extra, key=lambda e: (order.index(e) if e in order else -1, e))
        gated_row = next((r for r in ledger.effects(phases=["race"]) if r.fired and r.effect == primary), None)
        gated = gated_row.node if gated_row else node
        what = ", ".join(f"{e} fired {o} times (one resume fires it {x})" for e, (x, o) in sorted(extra.items()))
        pause = gate.describe() if gate.breakpoint else f"node `{node}`"
        cell.hits.append(
            Hit(
                "RA705",
                gated,
                f"concurrent:gate{gate.index}",
                f"{k} processes resumed the same {'pause' if gate.breakpoint else 'parked interrupt'} "
                f"({pause}{'' if gate.alone else f', gate {gate.index}'}) from a barrier on one durable store: "
                f"{what}; the {'pause was passed' if gate.breakpoint else 'interrupt was consumed'} {consumed} times, "
                f"{'no racer raised' if not errors else 'errors: ' + '; '.join(sorted(errors))}.",
                (
                    (node, f"{k} resumes released together"),
                    (node, f"interrupt consumed {consumed} times"),
                    (gated, what, gated_row.site if gated_row else None),
                ),
                DoubleConsumeWitness(k, consumed, {e: Counts(x, o) for e, (x, o) in extra.items()}),
            )
        )
        cell.detail = what
    else:
        deduplicated = any(not r.fired and r.key for r in ledger.effects(phases=["race"]))
        if not expected:
            how = " (the resumed leg fires no recorded effect, so there was nothing to duplicate)"
        elif consumed > 1 and deduplicated:
            how = " (CO-c: consumed more than once, repeated effects were skipped by their key)"
        elif consumed > 1:
            how = " (consumed more than once, yet no recorded effect fired twice)"
        else:
            how = ""
        cell.detail = (
            f"gated effects fired as once; interrupt consumed {consumed} time{'s' if consumed != 1 else ''}{how}"
        )
    return cell
