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
from importlib import metadata
from typing import TYPE_CHECKING, Any, Callable

from resume_audit.dynamic.adapters import installed
from resume_audit.dynamic.cells import ERROR, FAIL, NOT_APPLICABLE, PASS, Verdict as CellVerdict
from resume_audit.dynamic.conformance.columns import MARK, Verdict, column_ids, titles, verdicts
from resume_audit.dynamic.report import SweepReport
from resume_audit.findings import ScanResult

if TYPE_CHECKING:
    from rich.table import Table

__all__ = ["COLUMNS", "COLUMN_TITLES", "MARK", "Matrix", "Probe", "Row", "Verdict", "markdown", "probes", "run_conformance",
           "scan_result", "table", "verdicts", "witnesses"]

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
                    "cells": {c: {"verdict": MARK[v.mark], "witness": v.witness, "rules": list(v.rules)}
                              for c, v in r.verdicts.items()},
                }
                for r in self.rows
            ],
        }


# -- the suite ---------------------------------------------------------------------------------
def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def probes(saver: str | None = None, dsn: str | None = None) -> tuple[list[Probe], list[Row]]:
    """The rows for the frameworks installed here (and rows that can only say why a framework is not swept)."""
    rows: list[Probe] = []
    notes: list[Row] = []
    lg: dict[str, Any] = dict(target=f"{PROBES}.langgraph_order:build_graph", effects=(f"{PROBES}.langgraph_order:charge_card",),
              resume=("approve",), input={"order_id": 7, "amount": 30})
    if saver is not None:
        rows.append(Probe("langgraph", "checkpointer", f"--saver {saver}", backend="custom", saver=saver, **lg))
    elif installed("langgraph"):
        rows.append(Probe("langgraph", "checkpointer", "SqliteSaver", backend="sqlite", **lg))
        rows.append(Probe("langgraph", "checkpointer", "InMemorySaver", backend="memory",
                          cells=("interrupt", "crash", "parked", "fork", "stray", "concurrent", "validity"), **lg))
        if dsn:
            rows.append(Probe("langgraph", "checkpointer", "PostgresSaver", backend="postgres", dsn=dsn,
                              cells=("interrupt", "crash", "parked", "fork", "stray", "concurrent"), **lg))
    if saver is not None:
        return rows, notes
    if installed("crewai"):
        crew = f"{PROBES}.crewai_counter"
        effects = (f"{crew}:effect_s1", f"{crew}:effect_s2")
        cells = ("crash", "stray", "validity")
        for attr, plane, modes in (
            ("checkpoint_all", 'CheckpointConfig(on_events=["*"])', ("sigkill", "exception")),
            ("checkpoint_finished", 'CheckpointConfig(on_events=["method_execution_finished"])', ("sigkill",)),
            ("checkpoint_default", "checkpoint=True (default trigger)", ("sigkill",)),
            ("PersistClass", "@persist (class-level)", ("sigkill", "exception")),
            ("PersistMethod", "@persist (method-level)", ("sigkill",)),
        ):
            store = "SQLiteFlowPersistence" if "persist" in plane else "JsonProvider"
            rows.append(Probe("crewai", plane, store, f"{crew}:{attr}", effects, crash_modes=modes, cells=cells))
    if installed("llamaindex"):
        li = f"{PROBES}.llamaindex_approval"
        for attr, plane in (("TwoStep", "InputRequiredEvent → HumanResponseEvent step"), ("WaitForEvent", "ctx.wait_for_event")):
            rows.append(Probe("llamaindex", plane, "Context.to_dict() JSON", f"{li}:{attr}",
                              (f"{li}:prepare_order", f"{li}:charge_card"), ("approve",)))
    if installed("pydantic-graph"):
        version = _version("pydantic-graph") or "?"
        pg = f"{PROBES}.pydantic_graph_approval"
        major = version.split(".")[0]
        if major.isdigit() and int(major) >= 2:
            notes.append(Row(Probe("pydantic-graph", "FileStatePersistence", "-", f"{pg}:build", ()),
                             {"pydantic-graph": version},
                             {c: Verdict(NOT_APPLICABLE, "no persistence module in 2.x") for c in COLUMNS},
                             note=f"pydantic-graph {version} removed pydantic_graph.persistence: no documented resume path"))
        else:
            rows.append(Probe("pydantic-graph", "FileStatePersistence", "JSON file", f"{pg}:build",
                              (f"{pg}:prepare_order", f"{pg}:charge_card"), ("approve",)))
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
        t.add_row(r.label + (f"\n({r.note})" if r.note else ""), versions,
                  *[Text(MARK[_mark(r, c)], style=styles.get(_mark(r, c), "")) for c in shown])
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
    return ScanResult(findings=findings, notifications=notes, files_scanned=0, root=os.getcwd(),
                      rules_run=tuple(r.id for r in all_dynamic_rules()))
