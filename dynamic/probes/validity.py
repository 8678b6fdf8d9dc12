"""RA706 (CV): every checkpoint a run persists must validate against the graph's state schema.

Every child audits the checkpoints its run left (the adapter validates each
against the declared schema); this probe collects what the uninterrupted run
and every other cell found and reports each (field, writer) once, saying
whether the write was silent (the uninterrupted run completed without
raising).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from resume_audit.dynamic.adapters.base import InvalidState
from resume_audit.dynamic.cells import FAIL, NOT_APPLICABLE, PASS, Cell, CellKind, Hit, Witness
from resume_audit.dynamic.values import short
from resume_audit.dynamic.probes.base import Outcomes, Planning, Slot

kind = CellKind.VALIDITY
kinds = frozenset({kind})
rules: tuple[str, ...] = ("RA706",)
NAME = "checkpoint schema validity"
#: (where it was seen, what was invalid there)
Source = tuple[str, list[InvalidState]]


@dataclass(frozen=True)
class InvalidFieldWitness(Witness):
    """RA706: the persisted value, the schema's complaint, who wrote it."""

    field: str
    value: Any
    error: str
    step: int | None
    writer: str
    silent: bool

    def lines(self) -> list[str]:
        return [f"  {'field:':<12} `{self.field}` = {short(self.value)}",
                f"  {'schema:':<12} {self.error}",
                f"  {'written by:':<12} {self.writer}, persisted at step {self.step}"
                + (" -- silently, nothing raised" if self.silent else "")]


def plan(planning: Planning) -> list[Slot]:
    dry = planning.dry
    return [Slot("validity", derive=lambda outcomes: judge([("uninterrupted run", list(dry.invalid)), *sources(outcomes)],
                                                           True, dry.schema))]


def sources(outcomes: Outcomes) -> list[Source]:
    """What each swept cell's children found invalid, in label order."""
    out: list[Source] = []
    for label, outcome in sorted(outcomes.items()):
        for run in outcome.runs:
            if run.result is not None and run.result.invalid:
                out.append((label, list(run.result.invalid)))
    return out


def judge(found: list[Source], dry_ok: bool, schema: str | None) -> Cell:
    cell = Cell(kind=kind, name=NAME, verdict=PASS)
    if schema is None:
        cell.verdict = NOT_APPLICABLE
        cell.detail = "the graph declares no state schema"
        return cell
    seen: dict[tuple[str, str], tuple[InvalidState, str]] = {}
    for _origin, invalid in found:
        for inv in invalid:
            for writer in inv.writers or ("unknown",):
                seen.setdefault((inv.field, writer), (inv, writer))
    for (fld, writer), (inv, _w) in sorted(seen.items()):
        node = writer if writer not in ("input", "unknown", "state update") else None
        cell.hits.append(Hit(
            "RA706", node, f"field:{fld}",
            f"A checkpoint persisted at step {inv.step} holds `{fld}` = {short(inv.value)}, which fails the {schema} state "
            f"schema ({inv.error}); written by {'node `' + writer + '`' if node else writer}"
            + (" -- persisted silently: nothing raised." if dry_ok else "."),
            ((node, f"{writer} wrote {fld} = {short(inv.value)}"), (node, f"checkpoint at step {inv.step} persisted it")),
            InvalidFieldWitness(fld, inv.value, inv.error, inv.step, writer, dry_ok),
        ))
    cell.verdict = FAIL if cell.hits else PASS
    cell.detail = (f"{len(cell.hits)} invalid field value(s) persisted" if cell.hits
                   else f"every persisted checkpoint validates against the {schema} schema")
    return cell
