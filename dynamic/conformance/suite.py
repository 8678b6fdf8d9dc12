"""``resume-audit conformance``: the built-in probe suite against every installed framework.

Each row is one framework / resume plane / backend, swept with
:func:`resume_audit.dynamic.parent.sweep.crash_sweep` over a bundled probe program
(:mod:`resume_audit.dynamic.conformance`); each column is one property of the resume
contract, read off the sweep's cells -- never decided here:

========== ==================================================================
column     cells it is read from
========== ==================================================================
EO-int     ``interrupt``: answering a park re-fires the parked unit's effects
EO-crash   ``crash``: a kill (SIGKILL, or an exception where asked) + restore fires an effect again (RA701)
PC         ``crash``/``parked``: the restored run's state or lineage differs (RA702)
FD         ``fork``: a second answer at one park is served the first (RA703)
CV         ``validity``: a persisted checkpoint fails the state schema (RA706)
CO-seq     ``stray``: one more delivery after completion is not inert (RA704)
CO-conc    ``concurrent``: k racers consume one park more than once (RA705)
RD         ``write-order``: recovery depends on the durable write order (RA707)
LV         any: the documented resume path did not complete (RA708)
========== ==================================================================

A cell is ✓ when every contributing cell passed, ✗ with the first failing
cell as its witness, n/a when no cell applies (the framework has no parks, no
write pairs, no schema).
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, cast

from resume_audit.frameworks import registry
from resume_audit.dynamic.cells import ERROR, FAIL, NOT_APPLICABLE, NOT_REACHED, PASS, Cell, Verdict as CellVerdict
from resume_audit.dynamic.report import SweepReport

COLUMNS = ("EO-int", "EO-crash", "PC", "FD", "CV", "CO-seq", "CO-conc", "RD", "LV")
COLUMN_TITLES = {
    "EO-int": "EO interrupt path", "EO-crash": "EO crash path", "PC": "PC", "FD": "FD", "CV": "CV",
    "CO-seq": "CO sequential", "CO-conc": "CO concurrent", "RD": "RD", "LV": "liveness",
}
MARK = {PASS: "✓", FAIL: "✗", NOT_APPLICABLE: "n/a", ERROR: "error"}
PROBES = "resume_audit.dynamic.conformance"


@dataclass(frozen=True)
class Probe:
    """One row: a bundled program swept on one plane and backend."""

    framework: str
    plane: str
    backend_label: str
    target: str
    effects: tuple[str, ...]
    resume: tuple[Any, ...] = ()
    input: Any = None
    backend: str = "sqlite"
    dsn: str | None = None
    saver: str | None = None
    crash_modes: tuple[str, ...] = ("sigkill",)
    cells: tuple[str, ...] | None = None


@dataclass
class Verdict:
    mark: CellVerdict  # PASS | FAIL | NOT_APPLICABLE | ERROR
    witness: str = ""
    rules: tuple[str, ...] = ()


@dataclass
class Row:
    probe: Probe
    versions: dict[str, str]
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    report: SweepReport | None = None
    note: str = ""
    seconds: float = 0.0

    @property
    def label(self) -> str:
        return f"{self.probe.framework} / {self.probe.plane} / {self.probe.backend_label}"


@dataclass
class Matrix:
    rows: list[Row]
    seconds: float

    def stable(self) -> dict[str, Any]:
        return {
            "tool": "resume-audit conformance",
            "columns": [{"id": c, "title": COLUMN_TITLES[c]} for c in COLUMNS],
            "rows": [
                {
                    "framework": r.probe.framework,
                    "plane": r.probe.plane,
                    "backend": r.probe.backend_label,
                    "versions": dict(sorted(r.versions.items())),
                    "target": r.probe.target,
                    "note": r.note,
                    "cells": {c: {"verdict": MARK[v.mark], "witness": v.witness, "rules": list(v.rules)}
                              for c, v in r.verdicts.items()},
                }
                for r in self.rows
            ],
        }


# -- reading a sweep into columns ------------------------------------------------------------
def _effects_text(cell: Cell) -> str:
    return ", ".join(f"{k.rsplit('.', 1)[-1]} {e}→{o}" for k, (e, o) in sorted(cell.effects.items()) if e != o)


def _column(cells: list[Cell], rule: str | None, kinds: tuple[str, ...]) -> Verdict:
    relevant = [c for c in cells if c.kind in kinds and c.verdict not in (NOT_APPLICABLE, NOT_REACHED)]
    if not relevant:
        return Verdict(NOT_APPLICABLE, next((c.detail for c in cells if c.kind in kinds), "no cell applies"))
    failing = [c for c in relevant if (rule in c.rules if rule else c.verdict == FAIL)]
    if failing:
        c = failing[0]
        hit = next((h for h in c.hits if rule is None or h.rule == rule), None)
        prefer_message = rule in ("RA703", "RA708", "RA701") and c.kind in ("fork", "interrupt") or rule == "RA708"
        text = (hit.message if hit and prefer_message else None) or _effects_text(c) or (hit.message if hit else c.detail)
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
    cells = report.cells
    out = {
        "EO-int": _column(cells, "RA701", ("interrupt",)),
        "EO-crash": _column(cells, "RA701", ("crash",)),
        "PC": _column(cells, "RA702", ("crash", "parked")),
        "FD": _column(cells, "RA703", ("fork",)),
        "CV": _column(cells, "RA706", ("validity",)),
        "CO-seq": _column(cells, "RA704", ("stray",)),
        "CO-conc": _column(cells, "RA705", ("concurrent",)),
        "RD": _column(cells, "RA707", ("write-order",)),
        "LV": _column(cells, "RA708", ("crash", "parked", "stray", "fork", "concurrent")),
    }
    if not report.complete:
        why = next((n.message for n in reversed(report.notifications)), "the uninterrupted run failed")
        out = {c: Verdict(ERROR, why[:400]) for c in COLUMNS}
    return out


# -- the suite: its rows come from each framework's folder (frameworks/<name>/conformance.py) ---------
@dataclass(frozen=True)
class Unswept:
    """A row a framework can only explain: its program cannot be swept here (every column n/a, with ``reason``)."""

    probe: Probe
    versions: dict[str, str]
    reason: str
    note: str


#: a framework's rows: ``(saver, dsn) -> rows``, named by its registry record's ``conformance``
RowSource = Callable[[str | None, str | None], list["Probe | Unswept"]]


def probes(saver: str | None = None, dsn: str | None = None) -> tuple[list[Probe], list[Row]]:
    """The rows for the frameworks installed here (and rows that can only say why a framework is not swept),
    in registry order; with ``saver`` (a checkpointer of one framework's) only that framework's rows."""
    rows: list[Probe] = []
    notes: list[Row] = []
    for framework in registry.frameworks():
        if framework.conformance is None or (saver is not None and not framework.takes_saver):
            continue
        source = cast(RowSource, registry.load(framework.conformance))
        for row in source(saver, dsn):
            if isinstance(row, Unswept):
                notes.append(Row(row.probe, row.versions, {c: Verdict(NOT_APPLICABLE, row.reason) for c in COLUMNS},
                                 note=row.note))
            else:
                rows.append(row)
    return rows, notes


def run_conformance(saver: str | None = None, dsn: str | None = None, timeout: float = 60,
                    progress: Callable[[int, int, str], None] | None = None) -> Matrix:
    """Sweep every probe row (rows in parallel) and read the matrix."""
    from resume_audit.dynamic.parent.runner import context
    from resume_audit.dynamic.parent.sweep import crash_sweep
    from resume_audit.dynamic.parent.workbench import preload_for

    started = time.monotonic()
    todo, rows = probes(saver, dsn)
    context(preload_for(None))  # one fork server, warm with every installed framework
    done = [0]

    def one(p: Probe) -> Row:
        t0 = time.monotonic()
        report = crash_sweep(p.target, effects=list(p.effects), input=p.input if p.input is not None else {},
                             resume=list(p.resume), backend=p.backend,
                             dsn=p.dsn, timeout=timeout, cells=p.cells, framework=p.framework, crash_modes=p.crash_modes,
                             saver=p.saver)
        row = Row(p, dict(report.versions), verdicts(report), report, seconds=time.monotonic() - t0)
        done[0] += 1
        if progress:
            progress(done[0], len(todo), row.label)
        return row

    with ThreadPoolExecutor(max_workers=max(1, min(3, len(todo))), thread_name_prefix="resume-audit-conformance") as pool:
        swept = list(pool.map(one, todo))
    return Matrix(swept + rows, time.monotonic() - started)


# -- rendering ---------------------------------------------------------------------------------
def table(matrix: Matrix):
    """A rich Table of the matrix."""
    from rich.table import Table
    from rich.text import Text

    t = Table(title="resume-audit conformance", show_lines=True)
    t.add_column("framework / plane / backend", overflow="fold")
    t.add_column("versions", overflow="fold", style="dim")
    for c in COLUMNS:
        t.add_column(COLUMN_TITLES[c], justify="center")
    styles = {PASS: "green", FAIL: "bold red", NOT_APPLICABLE: "dim", ERROR: "magenta"}
    for r in matrix.rows:
        versions = ", ".join(f"{k} {v}" for k, v in sorted(r.versions.items()))
        t.add_row(r.label + (f"\n({r.note})" if r.note else ""), versions,
                  *[Text(MARK[r.verdicts[c].mark], style=styles.get(r.verdicts[c].mark, "")) for c in COLUMNS])
    return t


def witnesses(matrix: Matrix) -> list[str]:
    out = []
    for r in matrix.rows:
        for c in COLUMNS:
            v = r.verdicts[c]
            if v.mark in (FAIL, ERROR):
                out.append(f"{r.label} · {COLUMN_TITLES[c]} {MARK[v.mark]} {' '.join(v.rules)}: {v.witness}")
    return out


def markdown(matrix: Matrix) -> str:
    head = "| framework / plane / backend | versions | " + " | ".join(COLUMN_TITLES[c] for c in COLUMNS) + " |"
    sep = "|" + "---|" * (len(COLUMNS) + 2)
    lines = [head, sep]
    for r in matrix.rows:
        versions = ", ".join(f"{k} {v}" for k, v in sorted(r.versions.items()))
        label = r.label.replace("|", "\\|") + (f" ({r.note})" if r.note else "")
        lines.append(f"| {label} | {versions} | " + " | ".join(MARK[r.verdicts[c].mark] for c in COLUMNS) + " |")
    lines.append("")
    lines.append("Witnesses of ✗:")
    lines.append("")
    lines.extend(f"- {w}" for w in witnesses(matrix))
    return "\n".join(lines) + "\n"


def scan_result(matrix: Matrix):
    """Every finding of every row, in one ScanResult for the SARIF/JSON reporters."""
    from resume_audit.findings import ScanResult

    from resume_audit.dynamic.catalog import DYNAMIC_RULES

    findings = [f for r in matrix.rows if r.report for f in r.report.findings]
    notes = [n for r in matrix.rows if r.report for n in r.report.notifications]
    return ScanResult(findings=findings, notifications=notes, files_scanned=0, root=os.getcwd(),
                      rules_run=tuple(r.id for r in DYNAMIC_RULES))
