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
from resume_audit.dynamic.probes.base import Column, DynamicRule, Outcomes, Planning, Slot
from resume_audit.dynamic.values import short
from resume_audit.findings import Severity

kind = CellKind.declare("validity", exercises=False)
kinds: tuple[CellKind, ...] = (kind,)
rules: tuple[str, ...] = ("RA706",)

RA706 = DynamicRule(
    id="RA706",
    name="invalid-checkpoint-persisted",
    properties=("CV",),
    severity=Severity.WARNING,
    summary="A persisted checkpoint holds state that fails the graph's state schema (LangGraph #6491 class).",
    description="""
Every checkpoint the sweep's runs persisted was validated against the graph's
state schema (pydantic model, TypedDict or dataclass). A field held a value
its annotation rejects; the finding names the node whose write produced it.
""",
    runtime="""
LangGraph validates pydantic state on input, not node outputs: an invalid
terminal write is persisted and nothing raises at `invoke`, `get_state` or
`get_state_history` (measured on langgraph 1.2.24). A mid-graph invalid write
is persisted too; then the next node never runs and the thread's own read APIs
raise `ValidationError`, while `saver.get_tuple` still returns the bad value.
""",
    fix="""
Validate node outputs before returning them (construct the state model, or a
pydantic model for the update) so the node raises before anything is
persisted, or wrap the checkpointer with a validating `put` that rejects
schema-invalid checkpoints.
""",
    headline="a persisted checkpoint fails the state schema",
)

catalog: tuple[DynamicRule, ...] = (RA706,)
columns: tuple[Column, ...] = (Column("CV", "CV", "CV", "RA706", (kind,)),)
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
        return [
            f"  {'field:':<12} `{self.field}` = {short(self.value)}",
            f"  {'schema:':<12} {self.error}",
            f"  {'written by:':<12} {self.writer}, persisted at step {self.step}"
            + (" -- silently, nothing raised" if self.silent else ""),
        ]


def plan(planning: Planning) -> list[Slot]:
    dry = planning.dry
    return [
        Slot(
            "validity",
            derive=lambda outcomes: judge(
                [("uninterrupted run", list(dry.invalid)), *sources(outcomes)], True, dry.schema
            ),
        )
    ]


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
        cell.hits.append(
            Hit(
                "RA706",
                node,
                f"field:{fld}",
                f"A checkpoint persisted at step {inv.step} holds `{fld}` = {short(inv.value)}, which fails the {schema} state "
                f"schema ({inv.error}); written by {'node `' + writer + '`' if node else writer}"
                + (" -- persisted silently: nothing raised." if dry_ok else "."),
                (
                    (node, f"{writer} wrote {fld} = {short(inv.value)}"),
                    (node, f"checkpoint at step {inv.step} persisted it"),
                ),
                InvalidFieldWitness(fld, inv.value, inv.error, inv.step, writer, dry_ok),
            )
        )
    cell.verdict = FAIL if cell.hits else PASS
    cell.detail = (
        f"{len(cell.hits)} invalid field value(s) persisted"
        if cell.hits
        else f"every persisted checkpoint validates against the {schema} schema"
    )
    return cell
