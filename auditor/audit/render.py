"""The audit report as text (entry points, then findings by confirmation) and as JSON with an ``audit`` section."""

from __future__ import annotations

import io
import json

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from resume_audit.audit.confirm import SweptEntry
from resume_audit.audit.records import AuditSection, EntryRecord
from resume_audit.audit.rerun import rerun_command
from resume_audit.audit.run import AuditReport
from resume_audit.codec import encode
from resume_audit.findings import Confirmation
from resume_audit.reporters import render

ORDER = (Confirmation.CONFIRMED, Confirmation.DYNAMIC_ONLY, Confirmation.NOT_REPRODUCED, Confirmation.NOT_EXERCISED)
TITLES = {
    Confirmation.CONFIRMED: "Confirmed by the sweep",
    Confirmation.DYNAMIC_ONLY: "Found only by the sweep",
    Confirmation.NOT_REPRODUCED: "Not reproduced (exercised, the contract held)",
    Confirmation.NOT_EXERCISED: "Not exercised",
}


def entries_data(report: AuditReport) -> list[EntryRecord]:
    out = []
    for s in report.entries:
        r = s.report
        out.append(
            EntryRecord(
                target=s.entry.target,
                framework=s.entry.framework,
                kind=s.entry.kind,
                path=s.entry.path,
                line=s.entry.line,
                swept=s.ran,
                why=s.why,
                elsewhere=s.elsewhere,
                cells=len(r.cells) if r is not None else 0,
                dynamic_findings=len(r.findings) if r is not None else 0,
                answers=list(s.answers),
                seconds=round(s.seconds, 1),
                input=r.protocol.input if r is not None else None,
                effects=list(r.protocol.effects) if r is not None else [],
                rerun=rerun_command(s) if s.ran else "",
                factory_kwargs=dict(s.entry.factory_kwargs),
            )
        )
    return out


def finished_line(done: int, total: int, swept: SweptEntry) -> str:
    """One entry point's outcome, printed as it finishes when the output is not a terminal."""
    head = f"[{done}/{total}] {swept.entry.target}"
    if swept.elsewhere:
        return f"{head}: {swept.why}"
    if not swept.ran:
        return f"{head}: not swept ({swept.seconds:.1f} s): {swept.why}"
    report = swept.report
    found = len(report.findings) if report is not None else 0
    cells = len(report.cells) if report is not None else 0
    return f"{head}: swept, {cells} cells, {found} dynamic finding(s) in {swept.seconds:.1f} s"


def render_audit(report: AuditReport, fmt: str, *, color: bool = False, width: int | None = None) -> str:
    if fmt == "json":
        data = json.loads(render(report.to_scan_result(), "json"))
        data["audit"] = encode(
            AuditSection(
                entries_data(report),
                {c.value: report.count(c) for c in ORDER},
                round(report.seconds, 1),
                shard=report.shard,
            )
        )
        return json.dumps(data, indent=2, sort_keys=True) + "\n"
    if fmt != "text":
        return render(report.to_scan_result(), fmt, color=color, width=width)
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=color, width=width or 120, highlight=False)
    table = Table(title="entry points", title_justify="left")
    for column in ("entry point", "framework", "swept", "cells", "findings", "time"):
        table.add_column(column, overflow="fold")
    for e in entries_data(report):
        table.add_row(
            e.target,
            e.framework,
            "yes" if e.swept else f"no: {e.why}",
            str(e.cells),
            str(e.dynamic_findings),
            f"{e.seconds:.1f} s",
        )
    console.print(table)
    reruns = [e for e in entries_data(report) if e.rerun and e.dynamic_findings]
    if reruns:
        console.print(
            "\n[bold]To rerun an entry point's failing cells[/bold] (kept on disk: the folder is printed "
            "at the end; each finding's witness is its `witness` in --format json)"
        )
        for e in reruns:
            console.print(Text(f"  {e.target}:"))
            console.print(Text("    " + e.rerun), soft_wrap=True)  # one line, never cut: it is copied
    for confirmation in ORDER:
        group = [f for f in report.findings if f.confirmation is confirmation]
        if not group:
            continue
        console.print(f"\n[bold]{TITLES[confirmation]}[/bold] ({len(group)})")
        for f in group:
            console.print(
                Text(
                    f"  {f.span.path}:{f.span.start_line}  {f.rule_id} [{'/'.join(f.properties)}] "
                    + (f"`{f.scope}`" if f.scope else "")
                )
            )
            console.print(Padding(Text(f.message), (0, 0, 0, 6)))
            note = Text.assemble((f"{confirmation.value}: ", "italic"), f.confirmation_note)
            console.print(Padding(note, (0, 0, 0, 6)))
    counts = ", ".join(f"{report.count(c)} {c.value}" for c in ORDER)
    console.print(
        f"\n{len(report.entries)} entry point(s), {sum(1 for s in report.entries if s.ran)} swept, "
        f"{report.files_scanned} file(s) scanned in {report.seconds:.1f} s: {counts}"
    )
    for n in report.notifications:
        console.print(Text(f"note: {n.message}" + (f" ({n.path})" if n.path else "")))
    return buf.getvalue()
