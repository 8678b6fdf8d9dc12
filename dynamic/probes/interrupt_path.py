"""RA701 on the interrupt path: answering a park must not re-fire what the parked unit did before it parked.

Read from the uninterrupted run alone: an effect that the parked unit fired
before the park (leg k) and fires again when the answer arrives (leg k+1)
means the unit re-ran from its start -- LangGraph's node re-entry over an
effect before ``interrupt()`` (RA101), LlamaIndex's ``wait_for_event`` step
re-run (RA102) -- in process, with no crash at all.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from resume_audit.dynamic.cells import FAIL, NOT_APPLICABLE, PASS, Cell, CellKind, Hit, Reference, Witness
from resume_audit.dynamic.ledger import Ledger
from resume_audit.dynamic.probes.base import Column, DynamicRule, Planning, Slot

kind = CellKind.declare("interrupt", exercises=False)
kinds: tuple[CellKind, ...] = (kind,)
rules: tuple[str, ...] = ("RA701",)
catalog: tuple[DynamicRule, ...] = ()  # RA701 is declared by :mod:`.recovery`
columns: tuple[Column, ...] = (
    Column("EO-int", "EO interrupt path", "EO", "RA701", (kind,), witness_from_message=True),
)
NAME = "answering a park re-runs the parked unit's completed effects"


@dataclass(frozen=True)
class Replay:
    park: int
    node: str | None
    effect: str
    before: int
    after: int


@dataclass(frozen=True)
class InterruptPathWitness(Witness):
    replays: list[Replay]


@dataclass(frozen=True)
class ReplayWitness(Witness):
    """RA701 without a crash: the parked unit's effect fired again when its answer arrived."""

    park: int
    effect: str
    before_park: int
    after_answer: int

    def lines(self) -> list[str]:
        return [
            f"  {'probe:':<12} answering park {self.park}, no crash",
            f"  {'effect:':<12} {self.effect}  {self.before_park} -> {self.before_park + self.after_answer}",
        ]


def plan(planning: Planning) -> list[Slot]:
    return [Slot("interrupt", cell=judge(planning.dry_ledger, planning.ref))]


def judge(ledger: Ledger, ref: Reference) -> Cell:
    cell = Cell(kind=kind, name=NAME, verdict=PASS)
    if not ref.parks:
        cell.verdict = NOT_APPLICABLE
        cell.detail = "the program never parks"
        return cell
    rows = [r for r in ledger.effects(phases=["run"]) if r.fired]
    replays = []
    for park in ref.parks:
        leg, node = park.index, park.node
        before = Counter(r.effect for r in rows if r.leg == leg and r.node == node)
        after_rows = [r for r in rows if r.leg == leg + 1 and r.node == node and r.effect in before]
        after = Counter(r.effect for r in after_rows)
        for effect, n in sorted(after.items()):
            replays.append(
                (Replay(park.index, node, effect, before[effect], n), next(r for r in after_rows if r.effect == effect))
            )
    cell.effects = {k: (v, v) for k, v in sorted(ref.effects.items())}
    for replay, row in replays:
        b, a, node, effect = replay.before, replay.after, replay.node, replay.effect
        cell.hits.append(
            Hit(
                "RA701",
                node,
                f"replay:{effect}",
                f"Answering park {replay.park} re-ran `{node}` from its start: {effect} fired {b} time"
                f"{'s' if b != 1 else ''} before the park and {a} more after the answer arrived "
                f"(in one process, no crash) -- {b} -> {b + a}.",
                (
                    (node, f"{effect} fired before the park", row.site),
                    (node, f"park {replay.park} answered"),
                    (node, f"{effect} fired again: {b} -> {b + a}", row.site),
                ),
                ReplayWitness(replay.park, effect, b, a),
            )
        )
    cell.verdict = FAIL if cell.hits else PASS
    cell.detail = (
        "; ".join(f"{r.effect} {r.before} -> {r.before + r.after} in `{r.node}`" for r, _row in replays)
        if replays
        else "no effect of a parked unit fired again after its answer"
    )
    cell.witness = InterruptPathWitness([r for r, _row in replays])
    return cell
