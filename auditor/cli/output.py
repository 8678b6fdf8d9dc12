"""What every command shares: the output formats and exit thresholds, the rule-id lists of
``--select``/``--ignore``, writing a report, and failing with exit code 2."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from resume_audit.findings import ScanResult
from resume_audit.reporters import render
from resume_audit.reporters.terminal import PLAIN, stdout_styling


class OutputFormat(str, Enum):
    text = "text"
    json = "json"
    sarif = "sarif"
    github = "github"


class ScanFormat(str, Enum):
    text = "text"
    concise = "concise"
    json = "json"
    sarif = "sarif"
    github = "github"


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    note = "note"
    never = "never"


class ReportFailOn(str, Enum):
    """``--fail-on`` of ``audit`` and ``github-report``: a severity, or ``confirmed`` (what the sweep reproduced)."""

    confirmed = "confirmed"
    error = "error"
    warning = "warning"
    note = "note"
    never = "never"


def split_ids(values: Optional[List[str]]) -> Optional[List[str]]:
    if not values:
        return None
    out: list[str] = []
    for v in values:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return out


def emit(result: ScanResult, fmt: str, output: Optional[Path], *, quiet: bool = False) -> None:
    """Render ``result`` to ``output`` (or stdout) and say where it went (unless ``quiet``).

    Colour on stdout is rich's decision (``NO_COLOR``, ``FORCE_COLOR``, ``TERM=dumb``: see
    :mod:`resume_audit.reporters.terminal`); a report file is always plain."""
    styling = stdout_styling() if output is None and fmt == "text" else PLAIN
    text = render(result, fmt, styling=styling)
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        write_report(output, text)
        if quiet:
            return
        typer.echo(
            f"resume-audit: {len(result.findings)} finding(s), {len(result.notifications)} notification(s) "
            f"written to {output}",
            err=True,
        )


def write_report(output: Path, text: str) -> None:
    """Write a report file; a path that cannot be written is a usage error (exit 2), not findings (exit 1)."""
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise fail(f"cannot write the report to {output}: {exc.strerror or exc}")


def fail(message: str) -> "typer.Exit":
    typer.echo(f"resume-audit: error: {message}", err=True)
    return typer.Exit(2)
