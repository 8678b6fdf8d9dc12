"""Mark each SARIF result new or pre-existing relative to a reference scan.

A pull request should fail on the hazards it adds, not on the ones its base
already had (semgrep's baseline-commit mode). The action scans the head once
to SARIF; this module compares that SARIF's fingerprints with a reference --
the fingerprints of a scan of the merge base, or a team's baseline file -- and
writes the verdict into the SARIF itself, with SARIF's standard
``result.baselineState`` (``new`` / ``unchanged``). So ``github-report`` and
anything else reading the file (code scanning, a reviewer's SARIF viewer)
decide from the SARIF alone, and nothing is scanned twice.

The run's property bag records what "new" was judged against
(:data:`REFERENCE_KEY`), or why no reference was available
(:data:`UNAVAILABLE_KEY`): then no result is marked and every finding is
judged, never a silent pass.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from resume_audit.postprocess.fingerprint import FINGERPRINT_KEY

REFERENCE_KEY = "resumeAudit/baselineReference"
UNAVAILABLE_KEY = "resumeAudit/baselineUnavailable"


class BaselineState(str, enum.Enum):
    """SARIF 2.1.0 ``result.baselineState`` values this tool writes."""

    NEW = "new"
    UNCHANGED = "unchanged"


class SarifMarkError(Exception):
    """The SARIF file cannot be read or written (exit 2)."""


@dataclass(frozen=True)
class MarkCounts:
    """How many results were marked each way."""

    new: int
    unchanged: int


def _load(path: Path) -> dict[str, Any]:
    try:
        log = json.loads(path.read_text(encoding="utf-8"))
        log["runs"][0]
    except FileNotFoundError as exc:
        raise SarifMarkError(f"SARIF file not found: {path}") from exc
    except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
        raise SarifMarkError(f"{path} is not a SARIF log: {exc}") from exc
    if not isinstance(log, dict):
        raise SarifMarkError(f"{path} is not a SARIF log")
    return log


def _save(path: Path, log: dict[str, Any]) -> None:
    try:
        path.write_text(json.dumps(log, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise SarifMarkError(f"cannot write {path}: {exc.strerror or exc}") from exc


def mark_sarif(path: Path, known: set[str], reference: str) -> MarkCounts:
    """Set ``baselineState`` on every result of ``path``: ``unchanged`` when its fingerprint is in
    ``known``, else ``new``; record ``reference`` (e.g. "the merge base abc1234") in the run."""
    log = _load(path)
    new = unchanged = 0
    for run in log["runs"]:
        for result in run.get("results", []) or []:
            fingerprint = (result.get("partialFingerprints") or {}).get(FINGERPRINT_KEY)
            state = BaselineState.UNCHANGED if fingerprint in known else BaselineState.NEW
            result["baselineState"] = state.value
            new += state is BaselineState.NEW
            unchanged += state is BaselineState.UNCHANGED
        props = run.setdefault("properties", {})
        props[REFERENCE_KEY] = reference
        props.pop(UNAVAILABLE_KEY, None)
    _save(path, log)
    return MarkCounts(new=new, unchanged=unchanged)


def mark_unavailable(path: Path, reason: str) -> None:
    """Record that no reference could be had (and why), so every finding is judged and the
    summary says so; results keep no ``baselineState``."""
    log = _load(path)
    for run in log["runs"]:
        for result in run.get("results", []) or []:
            result.pop("baselineState", None)
        props = run.setdefault("properties", {})
        props[UNAVAILABLE_KEY] = reason
        props.pop(REFERENCE_KEY, None)
    _save(path, log)
