"""Output formats. Each reporter turns a :class:`~resume_audit.findings.ScanResult` into text."""

from __future__ import annotations

from typing import Callable

from resume_audit.findings import ScanResult
from resume_audit.reporters.terminal import Styling

Reporter = Callable[[ScanResult], str]

FORMATS = ("text", "concise", "json", "sarif", "github")


def render(
    result: ScanResult, fmt: str, *, color: bool = False, width: int | None = None, styling: Styling | None = None
) -> str:
    """Render ``result`` in ``fmt`` (one of :data:`FORMATS`).

    ``styling`` (the CLI passes what rich decided for stdout, see :mod:`resume_audit.reporters.terminal`)
    overrides ``color``/``width``; ``color=True`` alone means standard colours."""
    if fmt == "text":
        from resume_audit.reporters.text import render_text

        if styling is None:
            styling = Styling(color_system="standard" if color else None, width=width)
        return render_text(result, styling=styling)
    if fmt == "concise":
        from resume_audit.reporters.concise import render_concise

        return render_concise(result)
    if fmt == "json":
        from resume_audit.reporters.json_report import render_json

        return render_json(result)
    if fmt == "sarif":
        from resume_audit.reporters.sarif import render_sarif

        return render_sarif(result)
    if fmt == "github":
        from resume_audit.reporters.github import render_github

        return render_github(result)
    raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
