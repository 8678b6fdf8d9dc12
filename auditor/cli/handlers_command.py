"""The ``handlers`` command: the functions a project serves once per delivery, and the handler catalog."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer

from resume_audit.cli.app import app
from resume_audit.cli.output import OutputFormat, fail

if TYPE_CHECKING:
    from rich.console import Console

    from resume_audit.handlers.catalog import HandlerShape


@app.command("handlers")
def handlers_command(
    path: Path = typer.Argument(Path("."), help="The project (a folder or a file) to list the served functions of."),
    format: OutputFormat = typer.Option(OutputFormat.text, "--format", "-f", help="text (a table) or json."),
    config: Optional[Path] = typer.Option(
        None,
        "--config",
        help="pyproject.toml to read [tool.resume-audit] from [default: the nearest one with the table].",
    ),
    catalog: bool = typer.Option(
        False,
        "--catalog",
        help="List the handler catalog (every registration form the tool knows, and your handlers = [...] entries) instead of the project's handlers.",
    ),
) -> None:
    """List the functions of PATH that a framework runs once per delivery (web routes, bot callbacks,
    queue tasks, UI events, MCP/A2A handlers, serverless entry points): where each is defined, what
    registers it (the catalog entry and the registration's file:line) and what a delivery means
    (concurrent, per-session, retried). RA302, RA303 and RA601 read the same list. Add the
    registrations of your own frameworks with handlers = [...] in [tool.resume-audit] (docs/handlers.md).

    Example: resume-audit handlers ./myagent --format json
    """
    from rich.console import Console  # imported by the commands that draw, not at start-up

    from resume_audit.api import ScanRequest, default_root, resolve_config
    from resume_audit.config.settings import ConfigError
    from resume_audit.handlers.catalog import config_entries

    if format not in (OutputFormat.text, OutputFormat.json):
        raise fail("handlers supports --format text or json")
    if not path.exists():
        raise fail(f"path does not exist: {path}")
    try:
        settings = resolve_config(ScanRequest(paths=[path], config_path=config))
    except ConfigError as exc:
        raise fail(str(exc)) from None
    if catalog:
        from resume_audit.handlers.known import BUILTIN

        entries = config_entries((*settings.handler_shapes, *BUILTIN))
        if format == OutputFormat.json:
            import json

            typer.echo(json.dumps(entries, indent=2))
            return
        _print_catalog((*settings.handler_shapes, *BUILTIN), Console(width=max(Console().width, 140)))
        return
    from resume_audit.handlers.listing import served_functions

    found = served_functions([path], default_root([path]), settings)
    rows: list[dict[str, Any]] = [
        {
            "path": s.path,
            "line": s.line,
            "function": s.function,
            "kind": s.kind,
            "concurrency": s.concurrency,
            "registered_at": s.registered_at,
            "why": s.why,
            "framework": s.shape.framework if s.shape is not None else None,
            "source": s.shape.source if s.shape is not None else "shape",
        }
        for s in found
    ]
    if format == OutputFormat.json:
        import json

        typer.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        typer.echo(f"no served functions found under {path} (see `resume-audit handlers --catalog`)")
        return
    from rich.table import Table

    table = Table(title=f"served functions under {path}", show_lines=False)
    for col in ("function", "defined at", "kind", "delivery", "registered at", "why"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(
            r["function"], f"{r['path']}:{r['line']}", r["kind"], r["concurrency"], r["registered_at"], r["why"]
        )
    Console(width=max(Console().width, 160)).print(table)


def _print_catalog(shapes: "tuple[HandlerShape, ...]", console: "Console") -> None:
    from rich.table import Table

    table = Table(title="resume-audit handler catalog", show_lines=True)
    for col in ("framework", "kind", "registration", "delivery", "source"):
        table.add_column(col, overflow="fold")
    for s in shapes:
        table.add_row(s.framework, s.kind, s.describe(), s.concurrency.value, s.source)
    console.print(table)
