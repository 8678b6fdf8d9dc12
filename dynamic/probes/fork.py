"""RA703 (FI): two resumes at the same park with different answers must each be served their own.

At every gate of the protocol one child runs to the park, takes the park's
fork point (LangGraph: the interrupt checkpoint's id), and resumes from it
twice -- the documented answer, then a different one -- in each form the
framework offers (a bare ``Command(resume=v)``, an interrupt-id map, two
restores of a saved state). The ledger records the value ``interrupt()``
returned in each branch: the second branch served the first answer (LangGraph
#6663), or never reached ``interrupt()`` at all, is a finding.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from resume_audit.codec import omit_default
from resume_audit.dynamic.cells import ERROR, FAIL, NOT_APPLICABLE, PASS, Cell, CellKind, Gate, GateRef, Hit, Witness
from resume_audit.dynamic.child_result import ForkBranch
from resume_audit.dynamic.ledger import Ledger, cell_ledger
from resume_audit.dynamic.probes.base import CellOutcome, Column, DynamicRule, Planning, Slot
from resume_audit.dynamic.values import short, to_jsonable
from resume_audit.findings import Severity

if TYPE_CHECKING:
    from resume_audit.dynamic.child.context import Context
    from resume_audit.dynamic.parent.runner import ChildRun
    from resume_audit.dynamic.parent.workbench import Workbench


kind = CellKind.declare("fork")
kinds: tuple[CellKind, ...] = (kind,)
rules: tuple[str, ...] = ("RA703",)

RA703 = DynamicRule(
    id="RA703",
    name="fork-served-first-value",
    properties=("FD", "FI"),
    severity=Severity.ERROR,
    summary="A second resume at the same interrupt checkpoint with a new value was served the first value (LangGraph #6663).",
    description="""
The fork probe parked the graph at an `interrupt()`, took the interrupt
checkpoint's id, and resumed twice at `(thread_id, checkpoint_id)` with two
different values, in the bare `Command(resume=v)` form and in the interrupt-id
map form. The second resume's `interrupt()` returned the first value.
""",
    runtime="""
LangGraph stores the resume value as a pending write on the interrupt
checkpoint and, on a later invocation addressed to that checkpoint, serves the
recorded value instead of the new one: the second answer is silently replaced
by the first (measured on langgraph 1.2.24, `InMemorySaver` and `SqliteSaver`,
both invocation forms). The wire has no way to say "this is a fork, not a
retry", so a branch-creating time-travel resume behaves as a replay.
""",
    fix="""
Do not re-answer an interrupt by addressing its checkpoint: fork explicitly
with `graph.update_state(config_at_checkpoint, values)` to create a new branch
checkpoint and resume from that, or use a checkpointer wrapper that drops the
recorded `__resume__` writes when the config names a `checkpoint_id` (e.g.
`remit.wrap(...)` from `remit-contract`).
""",
    headline="a second answer at the same interrupt was served the first",
)

catalog: tuple[DynamicRule, ...] = (RA703,)
columns: tuple[Column, ...] = (Column("FD", "FD", "FD", "RA703", (kind,), witness_from_message=True),)
FORM_NAMES = {
    "bare": "bare Command(resume=v)",
    "map": "interrupt-id map Command(resume={id: v})",
    "restore": "two restores of the park's durable state",
}


@dataclass(frozen=True)
class ForkWitness(Witness):
    sent: list[Any]
    served: list[Any]
    at: str
    form: str
    effects_per_branch: dict[str, dict[str, int]]
    gate: GateRef | None = omit_default(None)


@dataclass(frozen=True)
class ForkServedWitness(Witness):
    """RA703: what each branch sent and what ``interrupt()`` returned to it."""

    sent: list[Any]
    served: list[Any]
    form: str

    def lines(self) -> list[str]:
        out = [
            f"  {'probe:':<12} fork: two resumes at the interrupt checkpoint ({self.form} form)",
            f"  {'sent:':<12} {', '.join(short(v) for v in self.sent)}",
            f"  {'served:':<12} {', '.join(short(v) for v in self.served)}",
        ]
        if len(self.sent) == 2 and len(self.served) == 2:
            want, got = f"resume 2 served {short(self.sent[1])}", f"resume 2 served {short(self.served[1])}"
            width = max(len(want), len(got))
            out += [f"  - {want:<{width}}  (the value it sent)", f"  + {got:<{width}}  (the first answer, replayed)"]
        return out


def plan(planning: Planning) -> list[Slot]:
    forms = tuple(planning.dry.fork_forms or ("bare", "map"))
    return [
        Slot(f"fork:{form}:{gate.index}", job=partial(run_cell, planning.bench, form, gate))
        for gate in planning.gates
        for form in forms
    ]


def run_cell(bench: Workbench, form: str, gate: Gate) -> CellOutcome:
    cell_dir = bench.cell_dir(f"fork-{form}-gate{gate.index}")
    run = bench.child(
        bench.spec(
            "fork",
            cell_dir,
            bench.store(cell_dir),
            "fork-setup",
            1,
            form=form,
            gate=gate.index,
            fork_value=gate.fork_value,
            role_entry=child_fork,
        )
    )
    with cell_ledger(cell_dir) as ledger:
        return CellOutcome(judge(form, run, ledger, gate), [run], cell_dir)


def child_fork(ctx: Context) -> None:
    """In the child: run to the gate's park, take its fork point, answer it twice from there."""
    r = ctx.result
    ctx.ledger.phase = "fork-setup"
    found = ctx.park_at_gate()
    if found is None:
        return
    intr, record = found
    r.node, r.gate = intr.node, record
    if not intr.takes_value:
        r.why = f"the run pauses at a {intr.describe()}, which is continued without a value: there is no answer to discriminate"
        return
    at = ctx.session.fork_point()
    vi = record.value_index or 0
    second = ctx.spec.fork_value if ctx.spec.fork_value is not None else ctx.spec.run.fork_resume
    for n, value in enumerate([ctx.resume[vi], second], start=1):
        ctx.ledger.phase = f"fork-{n}"
        error = None
        try:
            ctx.session.answer([(intr, value)], at=at, form=ctx.spec.form or ctx.session.fork_forms[0])
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
        r.branches.append(ForkBranch(to_jsonable(value), error))
    r.applicable = True
    ctx.audit()


def judge(form: str, run: ChildRun, ledger: Ledger, gate: Gate) -> Cell:
    form_name = FORM_NAMES.get(form, form)
    cell = Cell(kind=kind, name=f"fork probe ({form_name}){gate.suffix}", verdict=PASS, seconds=run.seconds)
    if not run.completed or run.result is None:
        cell.verdict = ERROR
        cell.detail = run.failure_text()
        return cell
    r = run.result
    if not r.applicable:
        cell.verdict = NOT_APPLICABLE
        cell.detail = r.why or "the graph never parks at an interrupt"
        return cell
    node = r.node
    served = []
    for n, _branch in enumerate(r.branches, start=1):
        every = ledger.served(phases=[f"fork-{n}"])
        rows = [v for _phase, _leg, nd, v in every if nd == node or node is None] or [v for *_x, v in every]
        served.append(rows[0] if rows else None)
    sent = [b.sent for b in r.branches]
    at = (
        "(thread_id, checkpoint_id) of the interrupt checkpoint"
        if form in ("bare", "map")
        else "the durable state saved at the park, restored twice"
    )
    fired = {f"fork-{n}": dict(ledger.fired_counts(phases=[f"fork-{n}"])) for n in (1, 2)}
    cell.witness = ForkWitness(sent, served, at, form, fired, gate.ref)
    errors = [b.error for b in r.branches if b.error]
    if errors:
        cell.verdict = ERROR
        cell.detail = "; ".join(errors)
        return cell

    def hit(outcome: str, last_step: str) -> Hit:
        return Hit(
            "RA703",
            node,
            f"fork:{form}",
            f"Two resumes at the same park{gate.suffix} ({form_name}): the first sent {short(sent[0])} and was served "
            f"{short(served[0])}; the second sent {short(sent[1])} {outcome}",
            (
                (node, f"resume 1 at the interrupt checkpoint with {short(sent[0])}"),
                (node, f"resume 2 at the same checkpoint with {short(sent[1])}"),
                (node, last_step),
            ),
            ForkServedWitness(sent, served, form),
        )

    if len(served) == 2 and served[1] == sent[0] and sent[0] != sent[1]:
        cell.verdict = FAIL
        cell.hits.append(
            hit(
                f"and was served {short(served[1])} -- the first value. A fork of this approval "
                "silently replays the first answer.",
                f"interrupt() returned {short(served[1])}",
            )
        )
        cell.detail = f"sent {short(sent[0])} then {short(sent[1])}; served {short(served[0])} then {short(served[1])}"
    elif len(served) == 2 and served[0] == sent[0] and served[1] is None and sent[0] != sent[1]:
        # the first branch shows interrupt() is observed; the second never reached it (a subgraph
        # whose own checkpoint already holds the first answer's outcome, for one)
        cell.verdict = FAIL
        cell.hits.append(
            hit(
                "and interrupt() never ran -- the answer was silently dropped and the branch carries the "
                "first answer's outcome.",
                "interrupt() was not called again: the second answer reached nothing",
            )
        )
        cell.detail = f"sent {short(sent[0])} then {short(sent[1])}; served {short(served[0])}, then nothing"
    elif len(served) == 2 and served[1] == sent[1]:
        cell.detail = f"each resume served its own value ({short(sent[0])}, {short(sent[1])})"
    else:
        cell.verdict = ERROR
        cell.detail = f"could not observe the served values (served {served!r})"
    return cell
