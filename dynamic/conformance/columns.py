"""The conformance matrix's columns, read off a sweep's cells -- never decided here.

Each column is declared by the probe whose cells it reads
(:class:`~resume_audit.dynamic.probes.base.Column`); the matrix shows them
ordered by contract property, then by probe:

========== ==================================================================
column     cells it is read from (declared in)
========== ==================================================================
EO-int     ``interrupt``: answering a park re-fires the parked unit's effects (``interrupt_path``)
EO-crash   ``crash``: a kill + restore fires an effect again, RA701 (``recovery``)
PC         ``crash``/``parked``: the restored run's state or lineage differs, RA702 (``recovery``)
FD         ``fork``: a second answer at one park is served the first, RA703 (``fork``)
CV         ``validity``: a persisted checkpoint fails the state schema, RA706 (``validity``)
CO-seq     ``stray``: one more delivery after completion is not inert, RA704 (``stray``)
CO-conc    ``concurrent``: k racers consume one park more than once, RA705 (``concurrent``)
RD         ``write-order``: recovery depends on the durable write order, RA707 (``write_order``)
LV         every kind that runs the program: the documented resume path did not complete, RA708 (``recovery``)
========== ==================================================================

A column is ✓ when every contributing cell passed, ✗ with the first failing
cell as its witness, n/a when no cell applies (the framework has no parks, no
write pairs, no schema).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from resume_audit.dynamic.cells import ERROR, FAIL, NOT_APPLICABLE, NOT_REACHED, PASS, Cell
from resume_audit.dynamic.cells import Verdict as CellVerdict
from resume_audit.dynamic.probes import cell_kinds, registry
from resume_audit.dynamic.probes.base import Column
from resume_audit.dynamic.report import SweepReport
from resume_audit.findings import PROPERTIES

MARK = {PASS: "✓", FAIL: "✗", NOT_APPLICABLE: "n/a", ERROR: "error"}


@dataclass
class Verdict:
    """One square of the matrix."""

    mark: CellVerdict  # PASS | FAIL | NOT_APPLICABLE | ERROR
    witness: str = ""
    rules: tuple[str, ...] = ()


def columns() -> tuple[Column, ...]:
    """Every registered probe's columns, by contract property, then in probe order."""
    order = list(PROPERTIES)
    declared = [column for probe in registry() for column in probe.columns]
    return tuple(sorted(declared, key=lambda c: order.index(c.property) if c.property in order else len(order)))


def column_ids() -> tuple[str, ...]:
    return tuple(c.id for c in columns())


def titles() -> dict[str, str]:
    return {c.id: c.title for c in columns()}


def _kinds(column: Column) -> tuple[str, ...]:
    if column.kinds is not None:
        return column.kinds
    return tuple(str(kind) for kind in cell_kinds() if kind.exercises)


def _effects_text(cell: Cell) -> str:
    return ", ".join(f"{k.rsplit('.', 1)[-1]} {e}→{o}" for k, (e, o) in sorted(cell.effects.items()) if e != o)


def read(cells: Sequence[Cell], column: Column) -> Verdict:
    """One column of one sweep: ✗ with the first failing cell's witness, error when every cell errored,
    ✓ when the rest passed, n/a when no cell applies."""
    kinds = _kinds(column)
    relevant = [c for c in cells if c.kind in kinds and c.verdict not in (NOT_APPLICABLE, NOT_REACHED)]
    if not relevant:
        return Verdict(NOT_APPLICABLE, next((c.detail for c in cells if c.kind in kinds), "no cell applies"))
    failing = [c for c in relevant if column.rule in c.rules]
    if failing:
        c = failing[0]
        hit = next((h for h in c.hits if h.rule == column.rule), None)
        text = (
            (hit.message if hit and column.witness_from_message else None)
            or _effects_text(c)
            or (hit.message if hit else c.detail)
        )
        witness = f"{c.name}: {text}"
        if len(failing) > 1:
            witness += f" (+{len(failing) - 1} more)"
        return Verdict(FAIL, witness[:400], tuple(sorted({h.rule for c in failing for h in c.hits})))
    errors = [c for c in relevant if c.verdict == ERROR]
    if errors and len(errors) == len(relevant):
        return Verdict(ERROR, f"{errors[0].name}: {errors[0].detail}"[:400])
    best = relevant[0]
    return Verdict(PASS, f"{len(relevant)} cell(s) pass; e.g. {best.name}: {best.detail}"[:400])


def verdicts(report: SweepReport) -> dict[str, Verdict]:
    """The matrix row of one sweep."""
    if not report.complete:
        why = next((n.message for n in reversed(report.notifications)), "the uninterrupted run failed")
        return {c: Verdict(ERROR, why[:400]) for c in column_ids()}
    return {column.id: read(report.cells, column) for column in columns()}
