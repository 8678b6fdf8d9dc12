"""GitHub Actions workflow commands: one ``::error``/``::warning``/``::notice`` per finding.

GitHub shows these as annotations on the pull request's diff. Property
values and messages are escaped as the runner requires (``%``, CR, LF, and
``:``/``,`` inside properties).
"""

from __future__ import annotations

from resume_audit.catalog.descriptors import rule_name
from resume_audit.findings import Finding, Notification, ScanResult, Severity
from resume_audit.reporters.visible import visible

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}


def escape_data(value: str) -> str:
    """The runner's escapes, then any other control character shown as text (a log must not
    carry a scanned file's terminal sequences)."""
    return visible(value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def annotation(f: Finding) -> str:
    name = rule_name(f.rule_id)
    title = f"{f.rule_id} {name}" if name is not None else f.rule_id
    where = [f"file={escape_property(f.span.path)}", f"line={f.span.start_line}", f"endLine={f.span.end_line}"]
    if f.span.start_line == f.span.end_line:  # GitHub takes columns only on a one-line annotation
        where += [f"col={f.span.start_col}", f"endColumn={f.span.end_col}"]
    props = ",".join([*where, f"title={escape_property(title)}"])
    return f"::{_LEVEL[f.severity]} {props}::{escape_data(f'{f.message} Fix: {f.fix}')}"


def notification_annotation(n: Notification) -> str:
    props = []
    if n.path:
        props.append(f"file={escape_property(n.path)}")
        if n.line:
            props.append(f"line={n.line}")
    props.append(f"title={escape_property('resume-audit ' + n.kind.value)}")
    return f"::warning {','.join(props)}::{escape_data(n.message)}"


def render_github(result: ScanResult) -> str:
    lines = [notification_annotation(n) for n in result.notifications]
    lines += [annotation(f) for f in result.findings]
    return "\n".join(lines) + ("\n" if lines else "")
