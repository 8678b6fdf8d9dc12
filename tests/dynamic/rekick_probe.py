"""A probe that exists only for ``test_probe_plugin.py``: one module, registered at test time, is a whole probe.

RA799 (EO, made up for the test): re-kicking a completed run -- invoking the program with its input again on the
same thread, as a retried "start" request would -- must not fire the completed run's effects again (the hazard
RA105 finds statically for CrewAI). The probe plans one cell, brings its own child role (run the protocol, then
run it again on the same thread), judges the cell from the ledger, and declares its rule's metadata and a
conformance column -- nothing else anywhere names it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from resume_audit.dynamic.cells import ERROR, FAIL, PASS, Cell, CellKind, Hit, Reference, Witness
from resume_audit.dynamic.ledger import Ledger, cell_ledger
from resume_audit.dynamic.probes.base import CellOutcome, Column, DynamicRule, Planning, Slot
from resume_audit.findings import Severity

if TYPE_CHECKING:
    from resume_audit.dynamic.child.context import Context
    from resume_audit.dynamic.parent.runner import ChildRun
    from resume_audit.dynamic.parent.workbench import Workbench

kind = CellKind.declare("rekick")
kinds: tuple[CellKind, ...] = (kind,)
rules: tuple[str, ...] = ("RA799",)

RA799 = DynamicRule(
    id="RA799",
    name="rekick-refires-effects",
    properties=("EO",),
    severity=Severity.WARNING,
    summary="Invoking a completed run again with its input on the same thread fired its effects again.",
    description="The probe ran the protocol to completion, then invoked the program with the same input on the same thread.",
    runtime="A retried start request re-runs a completed run from its input.",
    fix="Refuse a start on a thread that has completed, or key the effects by the thread.",
    headline="a re-kicked run fired its effects again",
)
catalog: tuple[DynamicRule, ...] = (RA799,)
columns: tuple[Column, ...] = (Column("EO-rekick", "EO re-kick", "EO", "RA799", (kind,)),)


@dataclass(frozen=True)
class RekickWitness(Witness):
    """RA799: how often each effect fired in the first run and in the re-kicked one."""

    first: dict[str, int]
    again: dict[str, int]

    def lines(self) -> list[str]:
        return [
            f"  {'effect:':<12} {e}  {self.first.get(e, 0)} -> {self.first.get(e, 0) + n}"
            for e, n in sorted(self.again.items())
        ]


def plan(planning: Planning) -> list[Slot]:
    return [Slot("rekick", job=partial(run_cell, planning.bench, planning.ref))]


def run_cell(bench: Workbench, ref: Reference) -> CellOutcome:
    cell_dir = bench.cell_dir("rekick")
    run = bench.child(bench.spec("rekick", cell_dir, bench.store(cell_dir), "first", 1, role_entry=child_rekick))
    with cell_ledger(cell_dir) as ledger:
        return CellOutcome(judge(run, ledger, ref), [run], cell_dir)


def child_rekick(ctx: Context) -> None:
    """In the child: the whole protocol, then the same input again on the same thread, answered the same way."""
    ctx.set_leg(0)
    ctx.drive(ctx.session.start(ctx.input))
    ctx.ledger.phase = "again"
    ctx.ledger.reset_interrupts()
    ctx.set_leg(0)
    ctx.result.parks = ctx.drive(ctx.session.start(ctx.input))
    ctx.finish()


def judge(run: ChildRun, ledger: Ledger, ref: Reference) -> Cell:
    cell = Cell(kind=kind, name="re-kick of a completed run", verdict=PASS, seconds=run.seconds)
    if not run.completed:
        cell.verdict, cell.detail = ERROR, run.failure_text()
        return cell
    first, again = ledger.fired_counts(phases=["first"]), ledger.fired_counts(phases=["again"])
    cell.effects = {e: (first.get(e, 0), first.get(e, 0) + again.get(e, 0)) for e in sorted(set(first) | set(again))}
    if again:
        node = next((r.node for r in ledger.effects(phases=["again"]) if r.fired), None)
        what = ", ".join(f"{e} fired {n} more time{'s' if n != 1 else ''}" for e, n in sorted(again.items()))
        cell.verdict, cell.detail = FAIL, what
        cell.hits.append(
            Hit(
                "RA799",
                node,
                "rekick",
                f"Invoking the completed run again with its input: {what}.",
                ((node, "run completed"), (node, "the same input again, same thread"), (node, what)),
                RekickWitness(dict(first), dict(again)),
            )
        )
    else:
        cell.detail = "the re-kicked run fired nothing again"
    cell.witness = RekickWitness(dict(first), dict(again))
    return cell
