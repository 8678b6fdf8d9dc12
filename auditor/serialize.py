"""Findings, notifications and scan results to and from plain JSON data.

Used by the JSON report, the per-file cache and the scan replay. The cache is JSON, never
pickle: it may live next to a scanned tree an attacker controls, and loading
it must not be able to run code.
"""

from __future__ import annotations

from typing import Any

from resume_audit.findings import Autofix, Confirmation, Edit, Finding, FixSafety, FlowStep, Notification, NotificationKind, Related, ScanResult, Severity, Span
from resume_audit.postprocess.suppression import SuppressionComment, SuppressionUse


def span_to_dict(span: Span) -> dict[str, Any]:
    return {
        "path": span.path,
        "start_line": span.start_line,
        "start_col": span.start_col,
        "end_line": span.end_line,
        "end_col": span.end_col,
    }


def span_from_dict(d: dict[str, Any]) -> Span:
    return Span(d["path"], d["start_line"], d["start_col"], d["end_line"], d["end_col"])


def finding_to_dict(f: Finding) -> dict[str, Any]:
    return {
        "rule_id": f.rule_id,
        "severity": f.severity.value,
        "properties": list(f.properties),
        **span_to_dict(f.span),
        "message": f.message,
        "fix": f.fix,
        "scope": f.scope,
        "origin": f.origin,
        "fingerprint": f.fingerprint,
        "related": [{**span_to_dict(r.span), "message": r.message} for r in f.related],
        "flows": [[{**span_to_dict(s.span), "message": s.message} for s in flow] for flow in f.flows],
        "witness": f.witness,
        **({"confirmation": f.confirmation.value, "confirmation_note": f.confirmation_note} if f.confirmation else {}),
        **({"autofix": autofix_to_dict(f.autofix)} if f.autofix else {}),
    }


def autofix_to_dict(fix: Autofix) -> dict[str, Any]:
    return {
        "description": fix.description,
        "safety": fix.safety.value,
        "edits": [{**span_to_dict(e.span), "replacement": e.replacement} for e in fix.edits],
    }


def autofix_from_dict(d: dict[str, Any]) -> Autofix:
    return Autofix(d["description"], FixSafety(d["safety"]),
                   tuple(Edit(span_from_dict(e), e["replacement"]) for e in d["edits"]))


def finding_from_dict(d: dict[str, Any]) -> Finding:
    return Finding(
        rule_id=d["rule_id"],
        severity=Severity(d["severity"]),
        properties=tuple(d["properties"]),
        message=d["message"],
        fix=d["fix"],
        span=span_from_dict(d),
        related=tuple(Related(span_from_dict(r), r["message"]) for r in d["related"]),
        flows=tuple(tuple(FlowStep(span_from_dict(s), s["message"]) for s in flow) for flow in d["flows"]),
        fingerprint=d["fingerprint"],
        scope=d["scope"],
        origin=d["origin"],
        witness=d["witness"],
        confirmation=Confirmation(d["confirmation"]) if d.get("confirmation") else None,
        confirmation_note=d.get("confirmation_note", ""),
        autofix=autofix_from_dict(d["autofix"]) if d.get("autofix") else None,
    )


def notification_to_dict(n: Notification) -> dict[str, Any]:
    return {
        "kind": n.kind.value,
        "message": n.message,
        "path": n.path,
        "line": n.line,
        "column": n.column,
        "level": n.level.value,
    }


def notification_from_dict(d: dict[str, Any]) -> Notification:
    return Notification(NotificationKind(d["kind"]), d["message"], d["path"], d["line"], d["column"], Severity(d["level"]))


def suppression_comment_to_dict(c: SuppressionComment) -> dict[str, Any]:
    return {"line": c.line, "column": c.column, "ids": None if c.ids is None else sorted(c.ids)}


def suppression_comment_from_dict(d: dict[str, Any]) -> SuppressionComment:
    ids = d["ids"]
    if not (isinstance(d["line"], int) and isinstance(d["column"], int)
            and (ids is None or (isinstance(ids, list) and all(isinstance(i, str) for i in ids)))):
        raise TypeError("malformed suppression comment")
    return SuppressionComment(d["line"], d["column"], None if ids is None else frozenset(ids))


def suppression_use_from_list(u: list[Any]) -> SuppressionUse:
    path, line, rule_id = u
    if not (isinstance(path, str) and isinstance(line, int) and isinstance(rule_id, str)):
        raise TypeError("malformed suppression use")
    return SuppressionUse(path, line, rule_id)


def scan_result_to_dict(r: ScanResult) -> dict[str, Any]:
    """A scan's whole result as the engine returns it (before a baseline or ``--diff`` is applied)."""
    return {
        "findings": [finding_to_dict(f) for f in r.findings],
        "notifications": [notification_to_dict(n) for n in r.notifications],
        "files_scanned": r.files_scanned, "root": r.root, "rules_run": list(r.rules_run),
        "suppressed": r.suppressed, "files_analysed": r.files_analysed,
        "unresolved_imports": r.unresolved_imports, "category": r.category,
    }


def scan_result_from_dict(d: dict[str, Any]) -> ScanResult:
    return ScanResult(
        findings=[finding_from_dict(f) for f in d["findings"]],
        notifications=[notification_from_dict(n) for n in d["notifications"]],
        files_scanned=int(d["files_scanned"]), root=str(d["root"]), rules_run=tuple(map(str, d["rules_run"])),
        suppressed=int(d["suppressed"]), files_analysed=int(d["files_analysed"]),
        unresolved_imports=int(d["unresolved_imports"]), category=str(d["category"]),
    )
