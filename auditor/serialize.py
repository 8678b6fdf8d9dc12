"""Findings, notifications and scan results to and from plain JSON data, through :mod:`resume_audit.codec`.

Used by the JSON report, the per-file cache and the scan replay. Each type has one JSON shape, defined
with the type (a :class:`~resume_audit.findings.Finding` lays its span out flat): these functions name
the conversions their callers need. The cache is JSON, never pickle: it may live next to a scanned tree
an attacker controls, and loading it must not be able to run code.
"""

from __future__ import annotations

from typing import Any, TypeVar

from resume_audit.codec import decode, encode
from resume_audit.findings import Autofix, Finding, Notification, ScanResult, Span
from resume_audit.postprocess.suppression import SuppressionComment, SuppressionUse

T = TypeVar("T")


def _data(value: object) -> dict[str, Any]:
    data: dict[str, Any] = encode(value)
    return data


def _read(cls: type[T], data: dict[str, Any]) -> T:
    value: T = decode(cls, data)
    return value


def span_to_dict(span: Span) -> dict[str, Any]:
    return _data(span)


def span_from_dict(d: dict[str, Any]) -> Span:
    return Span.within(d)


def finding_to_dict(f: Finding) -> dict[str, Any]:
    return f.to_data()


def finding_from_dict(d: dict[str, Any]) -> Finding:
    return Finding.from_data(d)


def autofix_to_dict(fix: Autofix) -> dict[str, Any]:
    return _data(fix)


def autofix_from_dict(d: dict[str, Any]) -> Autofix:
    return _read(Autofix, d)


def notification_to_dict(n: Notification) -> dict[str, Any]:
    return _data(n)


def notification_from_dict(d: dict[str, Any]) -> Notification:
    return _read(Notification, d)


def suppression_comment_to_dict(c: SuppressionComment) -> dict[str, Any]:
    return _data(c)


def suppression_comment_from_dict(d: dict[str, Any]) -> SuppressionComment:
    return _read(SuppressionComment, d)


def suppression_use_from_list(u: list[Any]) -> SuppressionUse:
    path, line, rule_id = u
    if not (isinstance(path, str) and isinstance(line, int) and isinstance(rule_id, str)):
        raise TypeError("malformed suppression use")
    return SuppressionUse(path, line, rule_id)


#: what a scan replay keeps of a result: the engine's output before a baseline or ``--diff`` is applied
_REPLAYED = (
    "findings",
    "notifications",
    "files_scanned",
    "root",
    "rules_run",
    "suppressed",
    "files_analysed",
    "unresolved_imports",
    "category",
)


def scan_result_to_dict(r: ScanResult) -> dict[str, Any]:
    """A scan's whole result as the engine returns it (before a baseline or ``--diff`` is applied)."""
    data = _data(r)
    return {key: data[key] for key in _REPLAYED}


def scan_result_from_dict(d: dict[str, Any]) -> ScanResult:
    return _read(ScanResult, {key: d[key] for key in _REPLAYED})
