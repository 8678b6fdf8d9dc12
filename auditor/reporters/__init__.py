"""Output formats. Each reporter turns a :class:`~auditor.findings.ScanResult` into text."""

from __future__ import annotations

from typing import Callable

from auditor.findings import ScanResult

Reporter = Callable[[ScanResult], str]

FORMATS = ("text", "json", "sarif", "github")


def render(result: ScanResult, fmt: str, *, color: bool = False, width: int | None = None) -> str:
    """Render ``result`` in ``fmt`` (one of :data:`FORMATS`)."""
    if fmt == "text":
        from auditor.reporters.text import render_text

        return render_text(result, color=color, width=width)
    if fmt == "json":
        from auditor.reporters.json_report import render_json

        return render_json(result)
    if fmt == "sarif":
        from auditor.reporters.sarif import render_sarif

        return render_sarif(result)
    if fmt == "github":
        from auditor.reporters.github import render_github

        return render_github(result)
    raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
