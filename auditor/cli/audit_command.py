"""``audit``: both stages in one run -- scan, sweep every graph, flow and workflow found, and say
of each static finding whether the sweep confirmed it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, List, Optional

import typer

from resume_audit.api import default_root
from resume_audit.cli.app import app
from resume_audit.cli.output import OutputFormat, ReportFailOn, fail, split_ids, write_report
from resume_audit.config.settings import ConfigError
from resume_audit.discovery.walk import PathNotFound
from resume_audit.reporters.terminal import stdout_styling


@app.command(
    epilog=(
        "Examples: resume-audit audit ./myagent | resume-audit audit . --list | "
        "resume-audit audit . --format sarif --output audit.sarif --fail-on confirmed"
    )
)
def audit(
    paths: List[Path] = typer.Argument(..., help="Files or directories to audit, e.g. ./myagent."),
    format: OutputFormat = typer.Option(
        OutputFormat.text, "--format", "-f", help="Output format: text, json, sarif, github."
    ),
    output: Optional[Path] = typer.Option(
        None, "--output", "-o", help="Write the report to this file instead of stdout."
    ),
    select: Optional[List[str]] = typer.Option(None, "--select", help="Only these static rule ids or prefixes."),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", help="Skip these static rule ids or prefixes."),
    exclude: Optional[List[str]] = typer.Option(None, "--exclude", help="Glob of paths to skip (repeatable)."),
    fail_on: ReportFailOn = typer.Option(
        ReportFailOn.confirmed,
        "--fail-on",
        help="Exit 1 on a confirmed (or dynamic-only) finding (the default), on any finding at or above a severity, or never.",
    ),
    timeout: float = typer.Option(60.0, "--timeout", min=0.1, help="Seconds each child process of a sweep may run."),
    live_effects: bool = typer.Option(
        False,
        "--live-effects",
        help="Let the effects run for real instead of recording stubs (they fire: use test credentials).",
    ),
    cells: Optional[List[str]] = typer.Option(
        None, "--cells", help="Restrict each sweep's probes, e.g. --cells crash,concurrent."
    ),
    list_only: bool = typer.Option(
        False, "--list", help="List the entry points the audit would sweep (and why any cannot be), then exit."
    ),
    pass_env: Optional[List[str]] = typer.Option(
        None,
        "--pass-env",
        metavar="NAME",
        help="Pass this environment variable to the programs (repeatable; also `pass-env` in [tool.resume-audit] and per entry point). They get an allow-list otherwise. See docs/sandbox.md.",
    ),
    require_confinement: bool = typer.Option(
        False,
        "--require-confinement",
        help="Refuse to run any program (exit 2, with the reason) when the kernel cannot confine the sweep's children here (`resume-audit doctor`).",
    ),
    shard: Optional[str] = typer.Option(
        None,
        "--shard",
        metavar="K/N",
        help="Sweep only the entry points dealt to slice K of N (a CI matrix); join the --format json outputs with `resume-audit merge`.",
    ),
    target: Optional[List[str]] = typer.Option(
        None,
        "--target",
        metavar="MODULE:ATTR",
        help="Sweep this entry point instead of the ones discovery finds (repeatable), e.g. --target myagent.app:graph; [tool.resume-audit.audit] targets = [...] does the same.",
    ),
    allow_network: bool = typer.Option(
        False,
        "--allow-network",
        help="Let the programs open connections beyond loopback (a database or service they need); their effects are still stubbed.",
    ),
) -> None:
    """Scan, then sweep every graph, flow and workflow found, and say of each static finding whether the sweep
    confirmed it, did not reproduce it, or could not exercise it. No configuration needed; user code runs only in
    sandboxed child processes, with its effects stubbed.

    Example: resume-audit audit ./myagent --format sarif --output audit.sarif
    """
    from resume_audit.audit.entrypoints import discover as discover_entries
    from resume_audit.audit.plan import AuditConfigError, load_config
    from resume_audit.audit.render import render_audit
    from resume_audit.audit.run import AuditRequest, ConfinementUnavailableError, run_audit
    from resume_audit.discovery.walk import discover as discover_files
    from resume_audit.findings import Confirmation

    for p in paths:
        if not p.exists():
            raise fail(f"path does not exist: {p}")
    if list_only:
        root = default_root(list(paths)).resolve()
        try:
            named = list(target or []) or list(load_config(list(paths)).targets)
        except AuditConfigError as exc:
            raise fail(str(exc))
        entries = discover_entries(
            [(sp.path, sp.display) for sp in discover_files(list(paths), root, list(exclude or []))],
            root,
            targets=named,
        )
        for e in entries:
            called = ", ".join(f"{k}={v!r}" for k, v in e.factory_kwargs)
            typer.echo(
                f"{e.path}:{e.line}  {e.target}  [{e.framework or 'detected when swept'} {e.kind}]"
                + (f"  called with {called}" if called else "")
                + (f"  cannot sweep: {e.why_not}" if e.why_not else "")
            )
        if not entries:
            typer.echo("no graph, flow or workflow found", err=True)
        raise typer.Exit(0)
    from resume_audit.dynamic.request import Shard

    try:
        slice_ = Shard.parse(shard) if shard is not None else None
    except ValueError as exc:
        raise fail(str(exc))
    request = AuditRequest(
        paths=list(paths),
        select=split_ids(select),
        ignore=split_ids(ignore),
        exclude=list(exclude or []),
        timeout=timeout,
        live_effects=live_effects,
        cells=split_ids(cells),
        shard=slice_,
        targets=list(target or []),
        allow_network=allow_network,
        pass_env=list(pass_env or []),
        require_confinement=require_confinement,
    )
    from resume_audit.audit.render import finished_line

    def finished(done: int, total: int, swept: Any) -> None:
        # a line per entry point as it finishes, where nothing else shows the run is alive (a file, a pipe, CI)
        typer.echo(finished_line(done, total, swept), err=True)

    try:
        report = run_audit(request, finished=None if sys.stdout.isatty() else finished)
    except (ConfigError, PathNotFound, AuditConfigError, ConfinementUnavailableError) as exc:
        raise fail(str(exc))
    text = render_audit(report, format.value, color=output is None and stdout_styling().escapes)
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        write_report(output, text)
        typer.echo(f"resume-audit: {len(report.findings)} finding(s) written to {output}", err=True)
    if fail_on is ReportFailOn.never:
        raise typer.Exit(0)
    if fail_on is ReportFailOn.confirmed:
        failing = report.count(Confirmation.CONFIRMED) + report.count(Confirmation.DYNAMIC_ONLY)
    else:
        from resume_audit.findings import Severity

        threshold = Severity(fail_on.value)
        failing = report.to_scan_result().count_at_or_above(threshold)
    raise typer.Exit(1 if failing else 0)
