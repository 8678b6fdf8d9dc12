"""A scan's findings and notifications as LSP diagnostics, per file.

A finding becomes one diagnostic at its primary span: its severity, the rule id as ``code`` with
``codeDescription.href`` to the rule's page, the runtime message, and its related locations (the
effect a node reaches in another file, the ``interrupt()`` it precedes) as ``relatedInformation``.
A notification that names a file (it does not parse, is not text, is too big, a rule crashed on
it, an unused suppression comment) becomes a diagnostic of that file; one that names none is for
the log.

Positions: findings count lines and columns from 1, in characters; LSP counts from 0, in the
units the client chose (UTF-16 unless it said otherwise) -- converted with the file's text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from lsprotocol import types as lsp
from pygls.workspace import PositionCodec

from resume_audit.catalog.docs import help_uri
from resume_audit.findings import Finding, Notification, NotificationKind, ScanResult, Severity, Span

SOURCE = "resume-audit"

_SEVERITY = {
    Severity.ERROR: lsp.DiagnosticSeverity.Error,
    Severity.WARNING: lsp.DiagnosticSeverity.Warning,
    Severity.NOTE: lsp.DiagnosticSeverity.Information,
}

#: the text of a file as lines, for position conversion (None: unknown, columns taken as they are)
LinesOf = Callable[[Path], "Sequence[str] | None"]


@dataclass(frozen=True)
class Located:
    """Where a reported path lives: the folder's root joins a relative one. Each path is resolved
    once (a publication names the same few files hundreds of times; resolving is a system call
    per folder level)."""

    root: Path
    _paths: dict[str, Path] = field(default_factory=dict, compare=False)

    def path(self, display: str) -> Path:
        found = self._paths.get(display)
        if found is None:
            as_given = Path(display)
            found = self._paths[display] = as_given if as_given.is_absolute() else (self.root / as_given).resolve()
        return found

    def uri(self, display: str) -> str:
        return self.path(display).as_uri()


def span_range(span: Span, lines: Sequence[str] | None, codec: PositionCodec) -> lsp.Range:
    """The LSP range of a finding's span (1-based characters, end exclusive) in client units."""
    start = lsp.Position(max(span.start_line - 1, 0), max(span.start_col - 1, 0))
    end = lsp.Position(max(span.end_line - 1, 0), max(span.end_col - 1, 0))
    if lines is None or all(_ascii(lines, p.line) for p in (start, end)):
        return lsp.Range(start, end)  # one unit per character in every encoding
    return codec.range_to_client_units(lines, lsp.Range(start, end))


def _ascii(lines: Sequence[str], line: int) -> bool:
    return line >= len(lines) or lines[line].isascii()


def finding_diagnostic(finding: Finding, where: Located, lines_of: LinesOf, codec: PositionCodec) -> lsp.Diagnostic:
    path = where.path(finding.span.path)
    related = [
        lsp.DiagnosticRelatedInformation(
            lsp.Location(where.uri(r.span.path), span_range(r.span, lines_of(where.path(r.span.path)), codec)),
            r.message,
        )
        for r in finding.related
    ]
    return lsp.Diagnostic(
        range=span_range(finding.span, lines_of(path), codec),
        message=f"{finding.message}\nFix: {finding.fix}" if finding.fix else finding.message,
        severity=_SEVERITY[finding.severity],
        code=finding.rule_id,
        code_description=lsp.CodeDescription(href=help_uri(finding.rule_id)),
        source=SOURCE,
        related_information=related or None,
        data={"fingerprint": finding.fingerprint},
    )


def notification_diagnostic(note: Notification, lines: Sequence[str] | None, codec: PositionCodec) -> lsp.Diagnostic:
    line = max((note.line or 1) - 1, 0)
    start = lsp.Position(line, max((note.column or 1) - 1, 0))
    end = lsp.Position(line, len(lines[line]) if lines is not None and line < len(lines) else start.character)
    position = lsp.Range(start, end)
    unused = note.kind is NotificationKind.UNUSED_SUPPRESSION
    return lsp.Diagnostic(
        range=codec.range_to_client_units(lines, position) if lines is not None else position,
        message=note.message,
        severity=lsp.DiagnosticSeverity.Hint if unused else _SEVERITY[note.level],
        code=note.kind.value,
        source=SOURCE,
        tags=[lsp.DiagnosticTag.Unnecessary] if unused else None,
    )


def diagnostics_by_file(
    result: ScanResult, where: Located, lines_of: LinesOf, codec: PositionCodec
) -> dict[str, list[lsp.Diagnostic]]:
    """Every file's diagnostics, by URI (a file with none is absent)."""
    out: dict[str, list[lsp.Diagnostic]] = {}
    for finding in result.findings:
        out.setdefault(where.uri(finding.span.path), []).append(finding_diagnostic(finding, where, lines_of, codec))
    for note in result.notifications:
        if note.path is not None:
            path = where.path(note.path)
            out.setdefault(path.as_uri(), []).append(notification_diagnostic(note, lines_of(path), codec))
    return out


def findings_at(result: ScanResult, where: Located, path: Path, first_line: int, last_line: int) -> list[Finding]:
    """The findings of the file at ``path`` whose primary span meets lines ``first_line`` to
    ``last_line`` (0-based, as LSP counts)."""
    return [
        f
        for f in result.findings
        if where.path(f.span.path) == path and f.span.start_line - 1 <= last_line and f.span.end_line - 1 >= first_line
    ]
