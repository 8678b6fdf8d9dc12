"""The result of a crash sweep: cells, findings, notes; stable JSON and a rich table."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from resume_audit.codec import encode
from resume_audit.dynamic.adapters.base import PlaneDescription, SourceLocation
from resume_audit.dynamic.assertions import assert_conformant, assert_exactly_once
from resume_audit.dynamic.catalog import all_dynamic_rules
from resume_audit.dynamic.cells import DRY_RUN, ERROR, FAIL, NOT_APPLICABLE, NOT_REACHED, PASS, Cell
from resume_audit.dynamic.protocol import SweepProtocol
from resume_audit.dynamic.shard import ShardPart
from resume_audit.findings import Finding, Notification, ScanResult, Severity

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table


@dataclass
class SweepReport:
    """Everything one ``crash_sweep`` observed.

    ``to_json_stable`` holds no timestamps, pids, durations, temp paths,
    checkpoint or interrupt ids: two sweeps of the same graph give the same
    bytes. ``timings`` and ``artifacts`` carry the rest.
    """

    target: str
    backend: str
    framework: str
    versions: dict[str, str]
    protocol: SweepProtocol
    cells: list[Cell]
    findings: list[Finding]
    notifications: list[Notification] = field(default_factory=list)
    #: False when the uninterrupted run itself failed, so nothing could be compared
    complete: bool = True
    kill_points: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    artifacts: str | None = None
    cwd: str = "."
    #: the resume plane and store the sweep exercised (adapter's ``Session.describe()``)
    plane: PlaneDescription = field(default_factory=PlaneDescription)
    #: with ``--shard K/N``: what ``merge`` needs from this slice
    shard: ShardPart | None = None
    #: where each unit of the program is defined (``audit`` matches static findings to them); not in the JSON
    nodes: dict[str, SourceLocation] = field(default_factory=dict)
    #: ``file:line`` of every effect call the uninterrupted run made (``audit`` tells a reached effect line from
    #: a node that ran without reaching it); not in the JSON
    effect_sites: frozenset[str] = frozenset()
    #: the kernel layers the uninterrupted run's child was under, in a line (not in the stable JSON)
    confinement: str = ""

    # -- outputs ---------------------------------------------------------------------
    def stable(self) -> dict[str, Any]:
        return {
            "tool": "resume-audit crash-sweep",
            "target": self.target,
            "framework": self.framework,
            "plane": dict(sorted(self.plane.as_dict().items())),
            "versions": dict(sorted(self.versions.items())),
            "backend": self.backend,
            "protocol": encode(self.protocol),
            "complete": self.complete,
            "kill_points": self.kill_points,
            "summary": self.summary(),
            "cells": [c.stable() for c in self.cells],
            "findings": encode(self.findings),
            "notifications": [
                {"kind": n.kind.value, "level": n.level.value, "message": n.message} for n in self.notifications
            ],
        }

    def to_json_stable(self) -> str:
        return json.dumps(self.stable(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    def to_json(self) -> str:
        data = self.stable()
        data["timings"] = {k: round(v, 3) for k, v in sorted(self.timings.items())}
        data["artifacts"] = self.artifacts
        data["confinement"] = self.confinement
        return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    @property
    def dry_run(self) -> Cell | None:
        """The uninterrupted run's cell (what every other cell is compared with)."""
        return next((c for c in self.cells if c.kind is DRY_RUN), None)

    def summary(self) -> dict[str, int]:
        out = {str(v): 0 for v in (PASS, FAIL, NOT_REACHED, ERROR, NOT_APPLICABLE)}
        for c in self.cells:
            out[str(c.verdict)] = out.get(str(c.verdict), 0) + 1
        out["findings"] = len(self.findings)
        return out

    def unexercised(self) -> list[str]:
        """Probes none of whose cells could run (every one ended in an error -- a timeout, a crash of
        the harness): their part of the contract was not exercised, which is not a pass."""
        kinds: dict[str, list[str]] = {}
        for c in self.cells:
            if c.kind.exercises:
                kinds.setdefault(c.kind, []).append(c.verdict)
        return [
            f"{kind} ({len(v)} cell{'s' if len(v) != 1 else ''})"
            for kind, v in kinds.items()
            if v and all(x == ERROR for x in v)
        ]

    def to_scan_result(self) -> ScanResult:
        """The same findings in the shape ``scan``'s reporters and exit codes consume."""
        return ScanResult(
            findings=list(self.findings),
            notifications=list(self.notifications),
            files_scanned=0,
            root=self.cwd,
            rules_run=tuple(r.id for r in all_dynamic_rules()),
        )

    def worst(self) -> Severity | None:
        if not self.findings:
            return None
        return max((f.severity for f in self.findings), key=lambda s: s.rank)

    # -- assertions (for a team's own test suite; see :mod:`resume_audit.dynamic.assertions`) ------
    def assert_exactly_once(self) -> None:
        """Raise :class:`~resume_audit.ResumeContractError` (an ``AssertionError``) with the minimal witness
        if an effect fired more than once: RA701 (crash path), RA704 (stray resume), RA705 (concurrent resumes)."""
        __tracebackhide__ = True
        assert_exactly_once(self)

    def assert_conformant(self, *properties: str) -> None:
        """Raise :class:`~resume_audit.ResumeContractError` with the minimal witness if a finding breaks one of
        ``properties`` (``"EO"``, ``"PC"``, ``"FD"``, ``"FI"``, ``"CV"``, ``"CO"``, ``"RD"``, ``"LV"``, or
        a dynamic rule id such as ``"RA703"``); with none given, any property of the contract."""
        __tracebackhide__ = True
        assert_conformant(self, *properties)

    # -- rich -----------------------------------------------------------------------
    def table(self) -> Table:
        """A rich Table: kill point / probe x effects expected vs observed x verdict."""
        from rich.table import Table
        from rich.text import Text

        table = Table(
            title=f"crash-sweep {self.target} ({self.backend})",
            show_lines=False,
            expand=False,
            caption=f"confinement: {self.confinement}" if self.confinement else None,
        )
        table.add_column("cell", style="cyan", no_wrap=False)
        table.add_column("kill point / probe", overflow="fold")
        table.add_column("effects exp→obs", overflow="fold")
        table.add_column("state", justify="center")
        table.add_column("verdict")
        styles = {PASS: "green", FAIL: "bold red", NOT_REACHED: "yellow", ERROR: "magenta", NOT_APPLICABLE: "dim"}
        for c in self.cells:
            effects = ", ".join(f"{k.rsplit('.', 1)[-1]} {e}→{o}" for k, (e, o) in sorted(c.effects.items())) or "-"
            state = "-" if c.final_state_match is None else ("=" if c.final_state_match else "≠")
            verdict = Text(c.verdict + (f" {' '.join(c.rules)}" if c.rules else ""), style=styles.get(c.verdict, ""))
            table.add_row(c.kind, c.name, effects, state, verdict)
        return table

    def render(self, console: Console | None = None) -> None:
        from rich.console import Console

        console = console or Console()
        console.print(self.table())
        s = self.summary()
        console.print(
            f"{len(self.cells)} cells: {s[PASS]} pass, {s[FAIL]} fail, {s[NOT_REACHED]} not reached, "
            f"{s[ERROR]} error, {s[NOT_APPLICABLE]} n/a; {len(self.findings)} finding(s)"
        )
        for f in self.findings:
            console.print(f"[bold red]{f.rule_id}[/] {f.span.path}:{f.span.start_line} [{f.scope}] {f.message}")
        for n in self.notifications:
            console.print(f"[yellow]note[/] {n.message}")
