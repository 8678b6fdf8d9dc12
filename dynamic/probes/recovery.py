"""Crash and recovery: after a kill point, does a fresh interpreter's resume match the uninterrupted run?

One cell per kill point (``crash``; with ``--crash-mode exception`` once more
with an injected exception) and one per park (``parked``: the process dies
while the run waits for its human). Each runs the protocol to the kill
point, then resumes the thread in a fresh interpreter the documented way, and
compares the ledger with the uninterrupted run:

- RA701 (EO) an effect fired more often;
- RA702 (PC) a durably completed unit ran again, or the resumed run diverged;
- RA708 (FD) the resume failed, or found nothing of what was durable before
  the crash (a lost park, lost progress, a plane that persists nothing).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from resume_audit.dynamic.cells import ERROR, FAIL, NOT_REACHED, PASS, Cell, CellKind, Hit, Reference, Witness, pairs
from resume_audit.dynamic.child_result import DurableFound
from resume_audit.dynamic.killpoints import Event
from resume_audit.dynamic.ledger import Ledger, cell_ledger
from resume_audit.dynamic.probes.base import CellOutcome, Column, DynamicRule, Planning, Slot
from resume_audit.dynamic.values import short
from resume_audit.findings import Severity

if TYPE_CHECKING:
    from resume_audit.dynamic.parent.runner import ChildRun
    from resume_audit.dynamic.parent.workbench import Workbench


CRASH = CellKind.declare("crash")
PARKED = CellKind.declare("parked")
kinds: tuple[CellKind, ...] = (CRASH, PARKED)
rules: tuple[str, ...] = ("RA701", "RA702", "RA708")

RA701 = DynamicRule(
    id="RA701",
    name="crash-duplicate-effect",
    properties=("EO",),
    severity=Severity.ERROR,
    summary="After a crash and a resume, an effect fired more often than in the uninterrupted run, or a completed node ran again.",
    description="""
The crash sweep killed the graph's process (SIGKILL, synchronised with a named
event: a checkpointer `put`/`put_writes` returning, or an effect's ledger
record) and resumed the thread in a fresh interpreter. The external effect
ledger then counted more calls of a listed effect than the uninterrupted run
makes, or a node whose output was already durable ran again.
""",
    runtime="""
LangGraph checkpoints a node's output only after the node returns. A process
that dies after the node's side effect but before its write is durable leaves
no trace of the effect in the checkpoint, so the resumed run executes the node
again from its first line and the effect fires twice (measured on langgraph
1.2.24: 1 -> 2). The default `durability="async"` writes through a background
executor, so the next node can start -- and fire its own effect -- before the
previous write is on disk, which widens the window.
""",
    fix="""
Make the effect idempotent: pass an idempotency key derived from the thread and
node (`idempotency_key=f"{thread_id}:{node}"`) to the provider, or record the
effect durably (keyed the same way) before performing it and skip it when the
record exists. `durability="sync"` narrows the window between nodes but cannot
close the one inside a node.
""",
    headline="an effect fired again after a crash and a resume",
)

RA702 = DynamicRule(
    id="RA702",
    name="resume-diverges",
    properties=("PC",),
    severity=Severity.ERROR,
    summary="The resumed run re-ran its durably completed prefix, or its final state or step lineage differs from the uninterrupted run.",
    description="""
After a kill and a resume in a fresh interpreter, a unit (node, flow method)
whose completion was already durable ran again -- the resume re-ran the
completed prefix or rebuilt state from initial values -- or the run completed
with a final state, a number of supersteps, or a set of effects that differs
from the uninterrupted run (it skipped work).
""",
    runtime="""
A resume is supposed to continue the recorded run. When recovery re-executes
completed steps whose outputs accumulate (a reducer appending to a list, a
counter) or starts over from the input, the final state records the crash --
or the run silently skips work that the uninterrupted run does.
""",
    fix="""
Make node outputs replay-safe (overwrite instead of append, or key appended
items by the step that produced them), resume with `invoke(None, config)` or
the pending interrupt's `Command(resume=...)` on the same `thread_id` instead
of re-invoking with the input, and keep the checkpointer durable.
""",
    headline="the resumed run diverged from the uninterrupted run",
)

RA708 = DynamicRule(
    id="RA708",
    name="resume-path-dead",
    properties=("LV",),
    severity=Severity.ERROR,
    summary="The documented resume path did not complete: an unrestorable checkpoint, a lost park, or an error on resume.",
    description="""
After a kill, the fresh interpreter could not continue the run through the
documented resume path (`invoke(None, config)` or `Command(resume=...)` on the
same thread): the resume raised, never completed, or the parked interrupt was
gone -- the run silently restarted from nothing.
""",
    runtime="""
Safety properties pass vacuously when nothing resumes. A checkpointer that
keeps parked runs in process memory (`InMemorySaver`), `durability="exit"`
under a crash, or a checkpoint the framework cannot load leaves a run that can
never continue: every parked approval dies with the process.
""",
    fix="""
Use a durable checkpointer (`SqliteSaver`, `PostgresSaver`) for graphs that
park or must survive a crash, keep the default durability, and surface resume
errors instead of starting the run afresh.
""",
    headline="the documented resume path did not complete",
)

catalog: tuple[DynamicRule, ...] = (RA701, RA702, RA708)
columns: tuple[Column, ...] = (
    Column("EO-crash", "EO crash path", "EO", "RA701", (CRASH,)),
    Column("PC", "PC", "PC", "RA702", (CRASH, PARKED)),
    Column("LV", "liveness", "LV", "RA708", None, witness_from_message=True),
)


def _row(label: str, value: object) -> str:
    return f"  {label + ':':<12} {value}"


def _diff(expected: str, observed: str, exp_note: str, obs_note: str) -> list[str]:
    width = max(len(expected), len(observed))
    return [f"  - {expected:<{width}}  ({exp_note})", f"  + {observed:<{width}}  ({obs_note})"]


def _calls(n: int) -> str:
    return f"{n} call{'s' if n != 1 else ''}"


@dataclass(frozen=True)
class RecoveryWitness(Witness):
    kill_point: str
    durable_at_crash: DurableFound | None


@dataclass(frozen=True)
class ResumeFailedWitness(Witness):
    """RA708: the fresh interpreter could not resume."""

    kill_point: str
    error: str

    def lines(self) -> list[str]:
        return [_row("kill point", self.kill_point), _row("error", self.error)]


@dataclass(frozen=True)
class LostWitness(Witness):
    """RA708: the resume found nothing of what was durable before the crash."""

    kill_point: str
    durable: DurableFound | None
    resumed: str | None

    def lines(self) -> list[str]:
        out = [_row("kill point", self.kill_point), _row("resumed by", self.resumed)]
        if self.durable is not None:
            out.append(
                _row(
                    "durable",
                    f"{self.durable.interrupts} pending interrupt(s), checkpoint "
                    + ("present" if self.durable.exists else "missing"),
                )
            )
        return out


@dataclass(frozen=True)
class DuplicateEffectWitness(Witness):
    """RA701: an effect fired more often than in the uninterrupted run."""

    kill_point: str
    effect: str
    expected: int
    observed: int
    resumed: str | None

    def lines(self) -> list[str]:
        return [
            _row("kill point", self.kill_point),
            _row("resumed by", self.resumed),
            _row("effect", f"{self.effect}  {self.expected} -> {self.observed}"),
            *_diff(_calls(self.expected), _calls(self.observed), "uninterrupted run", "after the crash and the resume"),
        ]


@dataclass(frozen=True)
class RerunWitness(Witness):
    """RA702: a unit whose write was durable ran again."""

    kill_point: str
    node: str
    step: int | None

    def lines(self) -> list[str]:
        return [
            _row("kill point", self.kill_point),
            _row("node", f"`{self.node}` ran again at step {self.step} although its write was already durable"),
        ]


@dataclass(frozen=True)
class DivergedWitness(Witness):
    """RA702: the resumed run ended elsewhere than the uninterrupted one."""

    kill_point: str
    differences: list[str]

    def lines(self) -> list[str]:
        return [_row("kill point", self.kill_point), *(_row("differs", d) for d in self.differences)]


def plan(planning: Planning) -> list[Slot]:
    slots: list[Slot] = []
    bench, ref = planning.bench, planning.ref
    if CRASH in planning.wanted:
        slots += [Slot(f"crash:{p.name}", job=partial(run_cell, bench, CRASH, p, ref)) for p in planning.points]
        if "exception" in planning.crash_modes:
            slots += [
                Slot(f"crash-exception:{p.name}", job=partial(run_cell, bench, CRASH, p, ref, mode="exception"))
                for p in planning.points
            ]
    if PARKED in planning.wanted:
        slots += [Slot(f"parked:{p.name}", job=partial(run_cell, bench, PARKED, p, ref)) for p in planning.parks]
    return slots


def run_cell(
    bench: Workbench,
    cell_kind: CellKind,
    point: Event,
    ref: Reference,
    write_order: str = "natural",
    mode: str = "sigkill",
) -> CellOutcome:
    """Crash at ``point``, recover in a fresh interpreter, judge."""
    crash, recover, cell_dir = bench.crash_and_recover(f"{cell_kind}-{mode}-{point.name}", point, write_order, mode)
    with cell_ledger(cell_dir) as ledger:
        cell = judge(cell_kind, point, crash, recover, ledger, ref)
    return CellOutcome(cell, [crash] + ([recover] if recover else []), cell_dir)


def judge(
    cell_kind: CellKind, point: Event, crash: ChildRun, recover: ChildRun | None, ledger: Ledger, ref: Reference
) -> Cell:
    """Verdict of a crash (or crash-while-parked) cell from its two children."""
    cell = Cell(
        kind=cell_kind,
        name=point.name if crash.spec.crash_mode == "sigkill" else f"{point.name} [raised]",
        verdict=PASS,
    )
    cell.seconds = crash.seconds + (recover.seconds if recover else 0.0)
    if not crash.crashed:
        if crash.result is not None and crash.result.ok and crash.result.reached is False:
            cell.verdict = NOT_REACHED
            cell.detail = "the kill point did not occur in this run (the executor took another order); nothing to judge"
        else:
            cell.verdict = ERROR
            cell.detail = f"the run to the kill point did not get there: {crash.failure_text()}"
        return cell
    if recover is None:
        cell.verdict = ERROR
        cell.detail = "no recovery was attempted"
        return cell
    cell.effects = pairs(ref.effects, ledger.fired_counts(phases=["crash", "recover"]))
    cell.nodes = pairs(ref.nodes, ledger.node_counts(phases=["crash", "recover"]))
    kill_desc = point.name
    where, what = kill_desc.split(": ", 1)[-1], kill_desc.split(":", 1)[0]
    how_killed = "SIGKILLed" if crash.killed_itself else "raised an exception"
    killed_step = (point.node, f"process {how_killed} {kill_desc}")
    if not recover.completed or recover.result is None:
        why = recover.failure_text()
        cell.verdict = FAIL
        cell.resumed = "failed"
        cell.detail = f"the fresh interpreter could not resume: {why}"
        cell.hits.append(
            Hit(
                "RA708",
                point.node,
                "resume-failed",
                f"After a crash {where} ({what}), resuming the thread in a fresh interpreter did not complete: {why}.",
                (killed_step, (None, f"fresh interpreter: resume failed: {why}")),
                ResumeFailedWitness(kill_desc, why),
            )
        )
        return cell
    r = recover.result
    how = r.how
    cell.resumed = how
    cell.final_state_match = r.final_state == ref.final_state
    rec_rows = ledger.effects(phases=["recover"])
    crash_rows = ledger.effects(phases=["crash"])
    kill_site = crash_rows[-1].site if point.kind == "effect" and crash_rows else None
    first_recovered = next(iter(ledger.node_runs(phases=["recover"])), None)
    resume_node = first_recovered.node if first_recovered else None
    durable = r.durable
    exists = durable is not None and durable.exists
    parked_lost = cell_kind == PARKED and not (durable is not None and durable.interrupts)
    progress_lost = not exists and ref.durable_before(point.name)
    nothing_written = not exists and ref.writes_nothing
    if parked_lost or progress_lost or nothing_written:
        if nothing_written and not (parked_lost or progress_lost):
            text = (
                f"The program configures {ref.declared_plane}, yet its uninterrupted run wrote no checkpoint: after a "
                f"crash {where}, the documented restore had nothing to restore and the only way on was {how}."
            )
        elif parked_lost:
            text = (
                f"The process died while the run was parked ({where}); a fresh interpreter found no pending interrupt "
                f"on the thread: the park was lost and the only way on was {how}."
            )
        else:
            text = f"After a crash {where}, a fresh interpreter found none of the checkpoints written before the crash: {how}."
        cell.hits.append(
            Hit(
                "RA708",
                point.node,
                "park-lost" if parked_lost else ("progress-lost" if progress_lost else "nothing-persisted"),
                text,
                (killed_step, (resume_node, f"fresh interpreter: {how}")),
                LostWitness(kill_desc, durable, how),
            )
        )
    for effect, (exp, obs) in cell.effects.items():
        if obs > exp:
            dup = next((e for e in rec_rows if e.effect == effect and e.fired), None)
            dup_node = dup.node if dup else None
            cell.hits.append(
                Hit(
                    "RA701",
                    dup_node,
                    f"effect:{effect}",
                    f"Crash {where} ({what}), then a resume in a fresh interpreter ({how}): {effect} fired {obs} times; the "
                    f"uninterrupted run fires it {exp} time{'s' if exp != 1 else ''}. Node `{dup_node}` ran again from its start"
                    + (" because its write was not durable when the process died." if not r.reran_completed else "."),
                    (
                        (point.node, f"process {how_killed} {kill_desc}", kill_site),
                        (resume_node, f"fresh interpreter: {how}"),
                        (
                            dup_node,
                            f"{effect} fired again: {obs} calls, uninterrupted run {exp}",
                            dup.site if dup else None,
                        ),
                    ),
                    DuplicateEffectWitness(kill_desc, effect, exp, obs, how),
                )
            )
    for node, step in r.reran_completed:
        # a durably completed unit running again is the completed prefix re-run: PC (its effects, if
        # any, are counted by the RA701 hits above)
        cell.hits.append(
            Hit(
                "RA702",
                node,
                f"rerun:{node}",
                f"Crash {where}, then a resume in a fresh interpreter: node `{node}` (step {step}) ran again although its "
                "write was already durable.",
                (killed_step, (node, f"completed node {node} re-ran at step {step}")),
                RerunWitness(kill_desc, node, step),
            )
        )
    diverged = []
    if not cell.final_state_match:
        diverged.append(f"final state {short(r.final_state, 120)} instead of {short(ref.final_state, 120)}")
    if r.final_step != ref.final_step:
        diverged.append(f"{r.final_step} supersteps instead of {ref.final_step}")
    diverged.extend(f"{e} fired {o} times instead of {x}" for e, (x, o) in cell.effects.items() if o < x)
    if diverged:
        cell.hits.append(
            Hit(
                "RA702",
                resume_node or point.node,
                "diverged",
                f"Crash {where}, then a resume in a fresh interpreter ({how}): the resumed run differs from the "
                f"uninterrupted one: {'; '.join(diverged)}.",
                (killed_step, (resume_node, f"fresh interpreter: {how}")),
                DivergedWitness(kill_desc, diverged),
            )
        )
    cell.verdict = FAIL if cell.hits else PASS
    bits = [f"resumed by {how}"]
    if r.reran_completed:
        bits.append("re-ran completed " + ", ".join(f"{n}@{s}" for n, s in r.reran_completed))
    cell.detail = "; ".join(bits)
    cell.witness = RecoveryWitness(kill_desc, durable)
    return cell
