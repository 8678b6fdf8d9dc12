"""Baselines: adopt resume-audit on an existing codebase without fixing everything first.

``--write-baseline FILE`` records the fingerprints of today's findings;
``--baseline FILE`` then reports only findings whose fingerprint is not in
it. Fingerprints ignore line numbers (see :mod:`resume_audit.fingerprint`), so
edits elsewhere in a file do not resurrect baselined findings.
"""

from __future__ import annotations

import json
from pathlib import Path

from resume_audit.findings import Finding

BASELINE_VERSION = 1


class BaselineError(Exception):
    """An unreadable or malformed baseline file (usage error, exit 2)."""


def write_baseline(path: Path, findings: list[Finding]) -> None:
    entries = sorted(
        ({"fingerprint": f.fingerprint, "rule_id": f.rule_id, "path": f.span.path, "scope": f.scope} for f in findings),
        key=lambda e: (e["path"], e["rule_id"], e["fingerprint"]),
    )
    try:
        path.write_text(json.dumps({"version": BASELINE_VERSION, "findings": entries}, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:  # a usage error (exit 2), not an internal one
        raise BaselineError(f"cannot write the baseline to {path}: {exc.strerror or exc}") from exc


def read_baseline(path: Path) -> set[str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise BaselineError(f"baseline file not found: {path}") from exc
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BaselineError(f"cannot read baseline {path}: {exc}") from exc
    if not isinstance(data, dict) or data.get("version") != BASELINE_VERSION or not isinstance(data.get("findings"), list):
        raise BaselineError(f"{path} is not a resume-audit baseline (expected version {BASELINE_VERSION})")
    entries = data["findings"]
    bad = [i for i, e in enumerate(entries) if not (isinstance(e, dict) and isinstance(e.get("fingerprint"), str))]
    if bad:
        raise BaselineError(f"{path}: entry {bad[0]} has no fingerprint string (is it a resume-audit baseline?)")
    return {e["fingerprint"] for e in entries}


def apply_baseline(findings: list[Finding], known: set[str]) -> tuple[list[Finding], int]:
    """Findings not in the baseline, and how many were hidden."""
    new = [f for f in findings if f.fingerprint not in known]
    return new, len(findings) - len(new)
