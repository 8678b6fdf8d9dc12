"""``resume-audit conformance``: the built-in probe suite against every installed framework.

Each row is one framework / resume plane / backend, swept with
:func:`resume_audit.dynamic.parent.sweep.crash_sweep` over a bundled probe program
(:mod:`resume_audit.dynamic.conformance`); each column is one property of the resume
contract, read off the sweep's cells by :mod:`resume_audit.dynamic.conformance.columns`
(the probes declare them).
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, cast

from resume_audit.dynamic.cells import ERROR, FAIL, NOT_APPLICABLE, PASS
from resume_audit.dynamic.cells import Verdict as CellVerdict
from resume_audit.dynamic.conformance.columns import MARK, Verdict, column_ids, titles, verdicts
from resume_audit.dynamic.report import SweepReport
from resume_audit.findings import ScanResult
from resume_audit.frameworks import registry

if TYPE_CHECKING:
    from rich.table import Table

__all__ = [
    "COLUMNS",
    "COLUMN_TITLES",
    "MARK",
    "Matrix",
    "Probe",
    "Row",
    "Verdict",
    "markdown",
    "probes",
    "run_conformance",
    "scan_result",
    "table",
    "verdicts",
    "witnesses",
]

#: the columns of the built-in probes (:func:`~resume_audit.dynamic.conformance.columns.column_ids` reads them when asked)
COLUMNS = column_ids()
COLUMN_TITLES = titles()
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
            "columns": [{"id": c, "title": title} for c, title in titles().items()],
            "rows": [
                {
                    "framework": r.probe.framework,
                    "plane": r.probe.plane,
                    "backend": r.probe.backend_label,
                    "versions": dict(sorted(r.versions.items())),
                    "target": r.probe.target,
                    "note": r.note,
                    "cells": {
                        c: {"verdict": MARK[v.mark], "witness": v.witness, "rules": list(v.rules)}
                        for c, v in r.verdicts.items()
                    },
                }
                for r in self.rows
            ],
        }


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
                notes.append(
                    Row(
                        row.probe,
                        row.versions,
                        {c: Verdict(NOT_APPLICABLE, row.reason) for c in COLUMNS},
                        note=row.note,
                    )
                )
            else:
                rows.append(row)
    return rows, notes


def run_conformance(
    saver: str | None = None,
    dsn: str | None = None,
    timeout: float = 60,
    progress: Callable[[int, int, str], None] | None = None,
) -> Matrix:
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
        report = crash_sweep(
            p.target,
            effects=list(p.effects),
            input=p.input if p.input is not None else {},
            resume=list(p.resume),
            backend=p.backend,
            dsn=p.dsn,
            timeout=timeout,
            cells=p.cells,
            framework=p.framework,
            crash_modes=p.crash_modes,
            saver=p.saver,
        )
        row = Row(p, dict(report.versions), verdicts(report), report, seconds=time.monotonic() - t0)
        done[0] += 1
        if progress:
            progress(done[0], len(todo), row.label)
        return row

    with ThreadPoolExecutor(
        max_workers=max(1, min(3, len(todo))), thread_name_prefix="resume-audit-conformance"
    ) as pool:
        swept = list(pool.map(one, todo))
    return Matrix(swept + rows, time.monotonic() - started)


# -- rendering ---------------------------------------------------------------------------------
def table(matrix: Matrix) -> Table:
    """A rich Table of the matrix."""
    from rich.table import Table  # imported when drawn, not with the suite
    from rich.text import Text

    t = Table(title="resume-audit conformance", show_lines=True)
    t.add_column("framework / plane / backend", overflow="fold")
    t.add_column("versions", overflow="fold", style="dim")
    shown = titles()
    for title in shown.values():
        t.add_column(title, justify="center")
    styles = {PASS: "green", FAIL: "bold red", NOT_APPLICABLE: "dim", ERROR: "magenta"}
    for r in matrix.rows:
        versions = ", ".join(f"{k} {v}" for k, v in sorted(r.versions.items()))
        t.add_row(
            r.label + (f"\n({r.note})" if r.note else ""),
            versions,
            *[Text(MARK[_mark(r, c)], style=styles.get(_mark(r, c), "")) for c in shown],
        )
    return t


def _mark(row: Row, column: str) -> CellVerdict:
    """A row's verdict in a column (n/a in a column the row was not read into: a probe registered after it)."""
    v = row.verdicts.get(column)
    return v.mark if v is not None else NOT_APPLICABLE


def witnesses(matrix: Matrix) -> list[str]:
    out = []
    shown = titles()
    for r in matrix.rows:
        for c, title in shown.items():
            v = r.verdicts.get(c)
            if v is not None and v.mark in (FAIL, ERROR):
                out.append(f"{r.label} · {title} {MARK[v.mark]} {' '.join(v.rules)}: {v.witness}")
    return out


def markdown(matrix: Matrix) -> str:
    shown = titles()
    head = "| framework / plane / backend | versions | " + " | ".join(shown.values()) + " |"
    sep = "|" + "---|" * (len(shown) + 2)
    lines = [head, sep]
    for r in matrix.rows:
        versions = ", ".join(f"{k} {v}" for k, v in sorted(r.versions.items()))
        label = r.label.replace("|", "\\|") + (f" ({r.note})" if r.note else "")
        lines.append(f"| {label} | {versions} | " + " | ".join(MARK[_mark(r, c)] for c in shown) + " |")
    lines.append("")
    lines.append("Witnesses of ✗:")
    lines.append("")
    lines.extend(f"- {w}" for w in witnesses(matrix))
    return "\n".join(lines) + "\n"


def scan_result(matrix: Matrix) -> ScanResult:
    """Every finding of every row, in one ScanResult for the SARIF/JSON reporters."""
    from resume_audit.dynamic.catalog import all_dynamic_rules

    findings = [f for r in matrix.rows if r.report for f in r.report.findings]
    notes = [n for r in matrix.rows if r.report for n in r.report.notifications]
    return ScanResult(
        findings=findings,
        notifications=notes,
        files_scanned=0,
        root=os.getcwd(),
        rules_run=tuple(r.id for r in all_dynamic_rules()),
    )
