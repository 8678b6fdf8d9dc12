"""RA704 (CO, sequential): one more delivery of the documented resume after the run completed must be inert.

With parks, the uninterrupted run delivers its last answer once more after it
completed (a breakpoint's ``invoke(None)``). Frameworks without parks whose
restore re-delivers (CrewAI's checkpoint plane) get the equivalent: a crash,
a successful restore, and the same restore again. Anything fired or any state
changed by that delivery is a finding.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from resume_audit.codec import omit_default
from resume_audit.dynamic.cells import ERROR, FAIL, NOT_APPLICABLE, PASS, Cell, CellKind, Hit, Reference, Witness
from resume_audit.dynamic.child_result import ChildResult
from resume_audit.dynamic.killpoints import DURABLE_KINDS, Event
from resume_audit.dynamic.ledger import Ledger, cell_ledger
from resume_audit.dynamic.probes.base import CellOutcome, Column, DynamicRule, Planning, Slot
from resume_audit.dynamic.values import short
from resume_audit.findings import Severity

if TYPE_CHECKING:
    from resume_audit.dynamic.parent.workbench import Workbench


kind = CellKind.declare("stray")
kinds: tuple[CellKind, ...] = (kind,)
rules: tuple[str, ...] = ("RA704",)

RA704 = DynamicRule(
    id="RA704",
    name="stray-resume-not-inert",
    properties=("CO",),
    severity=Severity.ERROR,
    summary="A stray resume after completion fired an effect or changed state (CO-e).",
    description="""
After the run completed, the probe delivered one more `Command(resume=...)`
to the same thread -- a retried request, a duplicated queue message -- and the
effect ledger recorded a new effect or the thread's state changed.
""",
    runtime="""
A completed run has no interrupt left to consume. A resume delivered to it
must be inert; if it re-enters a gated node, the approved action happens
again without a new approval.
""",
    fix="""
Deduplicate resume deliveries (an idempotency key per human answer), check
that the thread is parked before resuming, and make the gated effect
idempotent.
""",
    headline="a stray resume after completion was not inert",
)

catalog: tuple[DynamicRule, ...] = (RA704,)
columns: tuple[Column, ...] = (Column("CO-seq", "CO sequential", "CO", "RA704", (kind,)),)
AFTER_RESTORE = "restore again after a successful restore"


@dataclass(frozen=True)
class StrayWitness(Witness):
    sent: Any
    raised: str | None
    checkpoints_added: int
    fired: dict[str, int]
    after_kill_point: str | None = omit_default(None)


@dataclass(frozen=True)
class NotInertWitness(Witness):
    """RA704: what the stray delivery did."""

    sent: Any
    fired: dict[str, int]
    state_changed: bool

    def lines(self) -> list[str]:
        out = [f"  {'probe:':<12} stray Command(resume={short(self.sent)}) after the run completed"]
        for effect, n in sorted(self.fired.items()):
            out.append(f"  {'effect:':<12} {effect}  0 -> {n}")
            width = max(len("0 calls"), len(f"{n} call{'s' if n != 1 else ''}"))
            out += [
                f"  - {'0 calls':<{width}}  (a completed run)",
                f"  + {f'{n} call' + ('s' if n != 1 else ''):<{width}}  (after the stray resume)",
            ]
        if self.state_changed:
            out.append(f"  {'state:':<12} changed by the stray resume")
        return out


def plan(planning: Planning) -> list[Slot]:
    if planning.parks or not planning.dry.stray_after_restore:
        return [Slot("stray", cell=judge(planning.dry, planning.dry_ledger, planning.ref))]
    # no park to resume again: the stray delivery is a second restore of the state a recovery restored
    point = next((p for p in planning.points if p.kind in DURABLE_KINDS), None)
    if point is None:
        return [
            Slot(
                "stray",
                cell=Cell(
                    kind,
                    AFTER_RESTORE,
                    NOT_APPLICABLE,
                    detail="the program persists nothing, so there is no state to restore twice",
                ),
            )
        ]
    bench, ref = planning.bench, planning.ref
    return [Slot("stray-restore", job=lambda: run_after_restore(bench, point, ref))]


def run_after_restore(bench: Workbench, point: Event, ref: Reference) -> CellOutcome:
    crash, recover, cell_dir = bench.crash_and_recover(f"crash-sigkill-{point.name}-stray", point, stray=True)
    runs = [crash] + ([recover] if recover else [])
    if recover is None or not recover.completed or recover.result is None:
        why = recover.failure_text() if recover is not None else "the kill point was not reached"
        return CellOutcome(
            Cell(kind, AFTER_RESTORE, ERROR, detail=f"no successful restore to repeat: {why}"), runs, cell_dir
        )
    with cell_ledger(cell_dir) as ledger:
        cell = judge(recover.result, ledger, ref, name=AFTER_RESTORE, after_kill_point=point.name)
    return CellOutcome(cell, runs, cell_dir)


def judge(
    result: ChildResult,
    ledger: Ledger,
    ref: Reference,
    name: str = "stray resume after completion",
    after_kill_point: str | None = None,
) -> Cell:
    cell = Cell(kind=kind, name=name, verdict=PASS)
    stray = result.stray
    if stray is None:
        cell.verdict = NOT_APPLICABLE
        cell.detail = "the graph never parks at an interrupt"
        return cell
    delivery = result.describe.stray or f"stray Command(resume={short(stray.sent)})"
    fired = ledger.fired_counts(phases=["stray"])
    cell.effects = {e: (0, fired.get(e, 0)) for e in sorted(set(ref.effects) | set(fired))}
    cell.final_state_match = not stray.state_changed
    cell.witness = StrayWitness(stray.sent, stray.error, stray.checkpoints_added, dict(fired), after_kill_point)
    node = ref.parks[-1].node if ref.parks else None
    if node is None:
        node = next((r.node for r in ledger.effects(phases=["stray"]) if r.fired and r.node), None)
    if sum(fired.values()) or stray.state_changed:
        cell.verdict = FAIL
        what = []
        if sum(fired.values()):
            what.append(", ".join(f"{e} fired {n} time{'s' if n != 1 else ''}" for e, n in sorted(fired.items())))
        if stray.state_changed:
            what.append(f"the state changed to {short(stray.state_after, 120)}")
        cell.hits.append(
            Hit(
                "RA704",
                node,
                "stray",
                f"A {delivery} delivered after the run completed was not inert: {'; '.join(what)}.",
                ((node, "run completed"), (node, delivery), (node, "; ".join(what))),
                NotInertWitness(stray.sent, dict(fired), stray.state_changed),
            )
        )
        cell.detail = "; ".join(what)
    else:
        how = "raised " + stray.error if stray.error else "returned the old result"
        cell.detail = f"inert: {how}, nothing fired, state unchanged, {stray.checkpoints_added} checkpoint(s) added"
    return cell
