"""Joining the slices of ``audit --shard K/N`` into one audit report.

Each shard scans the whole tree (the static stage is cheap) and sweeps the
entry points dealt to it, so every shard reports every static finding -- with
the confirmation its own sweeps could give. The merge keeps, per finding
(fingerprint), what the shard that swept its program said: ``confirmed`` over
``not-reproduced`` over ``not-exercised``; dynamic-only findings are the union
of the shards'. The result equals an unsharded audit's findings and
confirmations.
"""

from __future__ import annotations

from typing import Any

from resume_audit.audit.records import AuditSection, EntryRecord
from resume_audit.codec import DecodeError, decode, encode
from resume_audit.findings import Confirmation, Finding, Notification, ScanResult

RANK = {
    Confirmation.CONFIRMED: 3,
    Confirmation.DYNAMIC_ONLY: 3,
    Confirmation.NOT_REPRODUCED: 2,
    Confirmation.NOT_EXERCISED: 1,
}


class AuditMergeError(ValueError):
    """The files are not the shards of one audit (the CLI's exit code 2)."""


def is_audit(document: Any) -> bool:
    return isinstance(document, dict) and isinstance(document.get("audit"), dict)


def merge_audits(documents: list[dict[str, Any]]) -> tuple[ScanResult, dict[str, Any]]:
    """The findings (as a ``ScanResult``) and the ``audit`` section of the unsharded audit."""
    if not documents:
        raise AuditMergeError("every file must be an `audit --shard K/N --format json` output")
    try:
        sections = [decode(AuditSection, d["audit"]) for d in documents]
        found = [[decode(Finding, f) for f in d.get("findings", [])] for d in documents]
        noted = [[decode(Notification, n) for n in d.get("notifications", [])] for d in documents]
    except (KeyError, TypeError, ValueError, DecodeError) as exc:
        raise AuditMergeError(f"not the output of `audit --shard K/N --format json`: {exc}") from None
    if any(s.shard is None for s in sections):
        raise AuditMergeError("every file must be an `audit --shard K/N --format json` output")
    shards = sorted(str(s.shard) for s in sections)
    count = int(shards[0].split("/")[1])
    if shards != sorted(f"{k}/{count}" for k in range(1, count + 1)):
        raise AuditMergeError(
            f"expected shards 1/{count} .. {count}/{count} exactly once each; got {', '.join(shards)}"
        )
    best: dict[str, Finding] = {}
    for findings in found:
        for f in findings:
            key = f"{f.fingerprint}|{f.confirmation.value if f.confirmation is Confirmation.DYNAMIC_ONLY else ''}"
            held = best.get(key)
            if held is None or _rank(f) > _rank(held):
                best[key] = f
    entries: dict[str, EntryRecord] = {}
    for section in sections:
        for e in section.entry_points:
            if not e.elsewhere or e.target not in entries:
                entries[e.target] = e
    findings = sorted(best.values(), key=lambda f: f.sort_key)
    notes = {(n.kind, n.message): n for notifications in noted for n in notifications}
    first = documents[0]
    result = ScanResult(
        findings=findings,
        notifications=list(notes.values()),
        files_scanned=int(first.get("summary", {}).get("files_scanned", 0)),
        root=str(first.get("root", ".")),
        rules_run=tuple(first.get("rules_run", [])),
    )
    merged = AuditSection(
        entry_points=sorted(entries.values(), key=lambda e: (e.path, e.line, e.target)),
        confirmations={
            c.value: sum(1 for f in findings if f.confirmation is c)
            for c in (
                Confirmation.CONFIRMED,
                Confirmation.DYNAMIC_ONLY,
                Confirmation.NOT_REPRODUCED,
                Confirmation.NOT_EXERCISED,
            )
        },
        seconds=round(sum(s.seconds for s in sections), 1),
        merged_shards=count,
    )
    audit: dict[str, Any] = encode(merged)
    return result, audit


def _rank(f: Finding) -> int:
    return RANK.get(f.confirmation, 0) if f.confirmation is not None else 0
