"""The catalog commands: ``rules``, ``effects``, ``explain`` and the hidden ``properties``."""

from __future__ import annotations

import sys

import typer

from resume_audit.catalog.descriptors import descriptors
from resume_audit.catalog.docs import render_rule as documentation
from resume_audit.cli.app import app
from resume_audit.cli.output import OutputFormat, fail
from resume_audit.findings import PROPERTIES


@app.command("rules")
def rules_command(
    format: OutputFormat = typer.Option(OutputFormat.text, "--format", "-f", help="text (a table) or json."),
) -> None:
    """List the rule catalog: id, property, severity and what each rule finds.

    Example: resume-audit rules --format json
    """
    from rich.console import Console  # imported by the commands that draw, not at start-up

    catalog = descriptors()
    if format == OutputFormat.json:
        import json

        rows = [
            {
                "id": r.id,
                "name": r.name,
                "properties": list(r.properties),
                "severity": r.severity.value,
                "frameworks": list(r.frameworks),
                "summary": r.summary,
            }
            for r in catalog.values()
        ]
        typer.echo(json.dumps(rows, indent=2))
        return
    if format != OutputFormat.text:
        raise fail("rules supports --format text or json")
    from rich.table import Table  # here, not at start-up: a scan never draws a table

    table = Table(title="resume-audit rules", show_lines=False)
    for col in ("id", "property", "severity", "frameworks", "finds"):
        table.add_column(col, overflow="fold")
    for r in catalog.values():
        table.add_row(
            r.id, "/".join(r.properties), r.severity.value, ", ".join(r.frameworks), " ".join(r.summary.split())
        )
    Console(width=max(Console().width, 120)).print(table)


@app.command("effects")
def effects_command(
    format: OutputFormat = typer.Option(OutputFormat.text, "--format", "-f", help="text (a table) or json."),
) -> None:
    """List the effect catalog: which SDK calls the EO rules treat as effects, what a repeat does,
    and the idempotency key the SDK accepts. Add your own with effect-sinks in [tool.resume-audit].

    Example: resume-audit effects --format json
    """
    from rich.console import Console  # imported by the commands that draw, not at start-up

    from resume_audit.catalog.effect_rows import effect_rows

    rows = effect_rows()
    if format == OutputFormat.json:
        import json
        from dataclasses import asdict

        typer.echo(json.dumps([asdict(r) for r in rows], indent=2))
        return
    if format != OutputFormat.text:
        raise fail("effects supports --format text or json")
    from rich.table import Table

    table = Table(title="resume-audit effect catalog", show_lines=True)
    for col in ("SDK", "calls that write", "a repeat", "idempotency key"):
        table.add_column(col, overflow="fold")
    for r in rows:
        calls = list(r.calls) + [f".{m}() on any receiver" for m in r.any_receiver_methods]
        table.add_row(r.sdk, "\n".join(calls), r.why, r.idempotency_key or "-")
    Console(width=max(Console().width, 140)).print(table)


@app.command()
def explain(rule_id: str = typer.Argument(..., help="A rule id, e.g. RA201.")) -> None:
    """Print a rule's full documentation: what it finds, why it breaks at runtime, an example, the fix.

    Example: resume-audit explain RA201
    """
    from rich.console import Console  # imported by the commands that draw, not at start-up

    rule = descriptors().get(rule_id.strip().upper())
    if rule is None:
        raise fail(f"unknown rule id {rule_id!r}; run `resume-audit rules` to list them")
    console = Console()  # rich reads NO_COLOR, FORCE_COLOR and TERM itself
    if console.is_terminal:
        from rich.markdown import Markdown  # markdown-it and pygments: only for this command

        console.print(Markdown(documentation(rule)))
    else:
        sys.stdout.write(documentation(rule))


@app.command("properties", hidden=True)
def properties_command() -> None:
    """List the contract properties."""
    for key, value in PROPERTIES.items():
        typer.echo(f"{key}  {value}")
