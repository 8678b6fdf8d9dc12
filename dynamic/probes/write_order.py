"""RA707 (RD): recovery must not depend on the durable order of a step's writes.

For every checkpointer write kill point the crash is run twice: once with
writes landing in their natural order, once with each ``put_writes``
deferred past the next ``put`` (an order a saver may legally persist in).
The two recoveries are judged as crash cells (:mod:`.recovery`) and then
compared: a difference anyone outside the graph can see -- effects, final
state, verdicts -- is a finding; a pure node running once more is not.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from resume_audit.dynamic.cells import ERROR, FAIL, NOT_APPLICABLE, NOT_REACHED, PASS, Cell, CellKind, Hit, Witness
from resume_audit.dynamic.killpoints import Event
from resume_audit.dynamic.probes import recovery
from resume_audit.dynamic.probes.base import Column, DynamicRule, Outcomes, Planning, Slot
from resume_audit.findings import Severity

kind = CellKind.declare("write-order", exercises=False)
kinds: tuple[CellKind, ...] = (kind,)
rules: tuple[str, ...] = ("RA707",)

RA707 = DynamicRule(
    id="RA707",
    name="recovery-order-dependent",
    properties=("RD",),
    severity=Severity.ERROR,
    summary="Recovery differs between two legal durable orders of the same writes (LangGraph #8039 class).",
    description="""
The probe re-ran the crash cells under an adversarial but legal checkpointer
that defers each `put_writes` past the following `put`, killed the process at
the same named point, and resumed. The recovered run's effects, final state or
verdicts differ from recovery under the natural order. A pure node that runs
once more under one order (same effects, same final state) is shown in the
cell's detail but not reported: nothing outside the graph can tell.
""",
    runtime="""
Task writes and the superstep checkpoint are persisted by separate operations
through a background executor, with no barrier between them; which one reaches
disk first is a race. Recovery must decide the same way from either durable
state, or a crash outcome depends on thread scheduling.
""",
    fix="""
Order `put_writes` before the next `put` in custom savers (await the write
futures first), and make recovery a function of the durable log that does not
depend on which of the two landed first.
""",
    headline="recovery depends on the durable order of writes",
)

catalog: tuple[DynamicRule, ...] = (RA707,)
columns: tuple[Column, ...] = (Column("RD", "RD", "RD", "RA707", (kind,)),)
WRITE_KINDS = ("put", "put_writes")


@dataclass(frozen=True)
class RecoverySummary:
    effects: dict[str, tuple[int, int]]
    rules: list[str]
    resumed: str | None

    @classmethod
    def of(cls, cell: Cell) -> "RecoverySummary":
        return cls(dict(cell.effects), list(cell.rules), cell.resumed)


@dataclass(frozen=True)
class WriteOrderWitness(Witness):
    natural: RecoverySummary
    deferred: RecoverySummary


@dataclass(frozen=True)
class OrderDependenceWitness(Witness):
    """RA707: the two recoveries differ."""

    kill_point: str
    differences: list[str]

    def lines(self) -> list[str]:
        out = [f"  {'kill point:':<12} {self.kill_point}"]
        for d in self.differences:
            a, sep, b = d.rpartition(" vs ")
            label, _, left = a.partition(": ")
            if sep and left:
                first, second = f"{label}: {left}", f"{label}: {b}"
                width = max(len(first), len(second))
                out += [
                    f"  - {first:<{width}}  (natural write order)",
                    f"  + {second:<{width}}  (put_writes deferred past the next put)",
                ]
            else:
                out.append(f"  {'differs:':<12} {d}")
        return out


def plan(planning: Planning) -> list[Slot]:
    slots: list[Slot] = []
    bench, ref = planning.bench, planning.ref
    for p in planning.points:
        if p.kind not in WRITE_KINDS:
            continue
        natural, deferred = f"crash:{p.name}", f"write-order-deferred:{p.name}"
        if recovery.CRASH not in planning.wanted:  # the natural-order recovery runs anyway, unshown
            slots.append(Slot(natural, job=partial(recovery.run_cell, bench, recovery.CRASH, p, ref), shown=False))
        slots.append(
            Slot(
                deferred,
                job=partial(recovery.run_cell, bench, recovery.CRASH, p, ref, "deferred"),
                shown=False,
                group=natural,
            )
        )
        slots.append(Slot(f"write-order:{p.name}", derive=partial(_derive, natural, deferred, p), group=natural))
    return slots


def _derive(natural: str, deferred: str, point: Event, outcomes: Outcomes) -> Cell | None:
    if natural not in outcomes or deferred not in outcomes:
        return None  # another shard swept this pair
    return judge(outcomes[natural].cell, outcomes[deferred].cell, point)


def judge(natural: Cell | None, deferred: Cell, point: Event | None = None) -> Cell:
    """RD: recovery under the deferred order must equal recovery under the natural order."""
    cell = Cell(
        kind=kind,
        name=deferred.name,
        verdict=PASS,
        effects=deferred.effects,
        nodes=deferred.nodes,
        final_state_match=deferred.final_state_match,
        resumed=deferred.resumed,
        seconds=deferred.seconds,
    )
    if deferred.verdict in (NOT_REACHED, ERROR) or natural is None or natural.verdict in (NOT_REACHED, ERROR):
        cell.verdict = deferred.verdict if deferred.verdict in (NOT_REACHED, ERROR) else NOT_APPLICABLE
        cell.detail = deferred.detail or "no natural-order cell to compare with"
        return cell

    def signature(c: Cell) -> tuple[object, ...]:
        return (tuple(sorted(c.effects.items())), tuple(sorted(c.nodes.items())), c.final_state_match, c.rules)

    cell.witness = WriteOrderWitness(RecoverySummary.of(natural), RecoverySummary.of(deferred))
    diffs = []
    material = False  # a difference anyone outside the graph can see
    for e in sorted(set(natural.effects) | set(deferred.effects)):
        a, b = natural.effects.get(e, (0, 0))[1], deferred.effects.get(e, (0, 0))[1]
        if a != b:
            diffs.append(f"{e}: {a} vs {b}")
            material = True
    node_diffs = []
    for n in sorted(set(natural.nodes) | set(deferred.nodes)):
        a, b = natural.nodes.get(n, (0, 0))[1], deferred.nodes.get(n, (0, 0))[1]
        if a != b:
            node_diffs.append(f"runs of {n}: {a} vs {b}")
    diffs.extend(node_diffs)
    if natural.final_state_match != deferred.final_state_match:
        diffs.append("final state differs")
        material = True
    if natural.rules != deferred.rules:
        diffs.append(f"verdicts {list(natural.rules) or ['pass']} vs {list(deferred.rules) or ['pass']}")
        material = True
    if signature(natural) != signature(deferred) and not material:
        # a pure node ran once more under one order: same effects, same final state, same
        # verdicts -- nothing a user can observe, so no finding (and nothing to silence)
        cell.detail = "recovery equivalent under both durable orders (same effects and final state); " + "; ".join(
            node_diffs
        )
        return cell
    if signature(natural) != signature(deferred):
        cell.verdict = FAIL
        node = next((h.node for h in deferred.hits + natural.hits if h.node), point.node if point else None)
        cell.hits.append(
            Hit(
                "RA707",
                node,
                "write-order",
                f"Recovery after a crash {deferred.name.split(': ', 1)[-1]} depends on the durable order of writes: "
                f"natural order vs each put_writes deferred past the next put gives {'; '.join(diffs)}.",
                ((node, f"process SIGKILLed {deferred.name} under both write orders"), (node, "recoveries differ")),
                OrderDependenceWitness(deferred.name, diffs),
            )
        )
        cell.detail = "; ".join(diffs)
    else:
        cell.detail = "recovery identical under both durable orders"
    return cell
