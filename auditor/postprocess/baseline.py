"""Baselines: adopt resume-audit on an existing codebase without fixing everything first.

``--write-baseline FILE`` records the fingerprints of today's findings;
``--baseline FILE`` then reports only findings whose fingerprint is not in
it. Fingerprints ignore line numbers (see :mod:`resume_audit.postprocess.fingerprint`), so
edits elsewhere in a file do not resurrect baselined findings.

Format version 2 (written since the repository-root change): each entry's
``path`` is relative to the repository root, and its fingerprint hashes that
path (see :mod:`resume_audit.discovery.repo_root`), so a baseline written from a
subfolder matches a scan started at the top and the other way round. Version
1 files are still read: their fingerprints hashed the path relative to the
folder the scan was started from, which is the same thing when that was the
repository root; when it was not they match nothing, and the scan says so
(see :func:`stale_baseline_note`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from resume_audit.discovery.repo_root import RepoPaths
from resume_audit.findings import Finding, Notification, NotificationKind, Severity

BASELINE_VERSION = 2
#: versions this release reads
READABLE_VERSIONS = (1, 2)


class BaselineError(Exception):
    """An unreadable or malformed baseline file (usage error, exit 2)."""


@dataclass(frozen=True)
class Baseline:
    """A baseline file as read: the fingerprints it records, and the format version they follow."""

    fingerprints: frozenset[str]
    version: int


def write_baseline(path: Path, findings: list[Finding], repo: RepoPaths) -> None:
    entries = sorted(
        (
            {"fingerprint": f.fingerprint, "rule_id": f.rule_id, "path": repo.relative(f.span.path), "scope": f.scope}
            for f in findings
        ),
        key=lambda e: (e["path"], e["rule_id"], e["fingerprint"]),
    )
    document = {"version": BASELINE_VERSION, "paths": "relative to the repository root", "findings": entries}
    try:
        path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:  # a usage error (exit 2), not an internal one
        raise BaselineError(f"cannot write the baseline to {path}: {exc.strerror or exc}") from exc


def read_baseline(path: Path) -> Baseline:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise BaselineError(f"baseline file not found: {path}") from exc
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BaselineError(f"cannot read baseline {path}: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("findings"), list):
        raise BaselineError(f"{path} is not a resume-audit baseline (expected version {BASELINE_VERSION})")
    version = data.get("version")
    if version not in READABLE_VERSIONS or isinstance(version, bool):
        raise BaselineError(
            f"{path} is a baseline of version {version!r}; this resume-audit reads versions "
            f"{', '.join(map(str, READABLE_VERSIONS))} (a newer resume-audit wrote it? upgrade, or rewrite it with --write-baseline)"
        )
    entries = data["findings"]
    bad = [i for i, e in enumerate(entries) if not (isinstance(e, dict) and isinstance(e.get("fingerprint"), str))]
    if bad:
        raise BaselineError(f"{path}: entry {bad[0]} has no fingerprint string (is it a resume-audit baseline?)")
    return Baseline(frozenset(e["fingerprint"] for e in entries), int(version))


def apply_baseline(findings: list[Finding], known: Baseline | set[str] | frozenset[str]) -> tuple[list[Finding], int]:
    """Findings not in the baseline, and how many were hidden."""
    fingerprints = known.fingerprints if isinstance(known, Baseline) else known
    new = [f for f in findings if f.fingerprint not in fingerprints]
    return new, len(findings) - len(new)


def stale_baseline_note(path: Path, baseline: Baseline, hidden: int) -> Notification | None:
    """A warning when a non-empty baseline hid none of the scan's findings: it silently protects
    nothing (written for other paths, or -- version 1 -- from another folder)."""
    if not baseline.fingerprints or hidden:
        return None
    why = (
        f"it is a version-1 baseline, whose entries hold paths relative to the folder it was written from: "
        f"if that was not the repository root, rewrite it with --write-baseline (version {BASELINE_VERSION} "
        f"entries are relative to the repository root and match wherever the scan starts)"
        if baseline.version == 1
        else "was it written for other paths, or have those findings been fixed?"
    )
    return Notification(
        NotificationKind.INFO,
        f"the baseline {path} ({len(baseline.fingerprints)} finding(s)) matched none of this scan's findings: "
        f"{why}. Every finding is reported as new.",
        None,
        level=Severity.WARNING,
    )
