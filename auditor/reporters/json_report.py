"""Machine-readable JSON: stable field names, no timestamps, sorted output.

Two scans of the same tree produce byte-identical JSON, so it diffs cleanly
and can be committed as a golden file.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from resume_audit import serialize
from resume_audit.catalog.descriptors import rule_name
from resume_audit.findings import Finding, ScanResult
from resume_audit.version import __version__

SCHEMA_VERSION = 1


def finding_to_dict(f: Finding) -> dict[str, Any]:
    d = serialize.finding_to_dict(f)
    return {"rule_id": d.pop("rule_id"), "rule_name": rule_name(f.rule_id), **d}


def build_json(result: ScanResult) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "resume-audit", "version": __version__},
        "summary": {
            "files_scanned": result.files_scanned,
            "findings": len(result.findings),
            "by_severity": dict(sorted(Counter(f.severity.value for f in result.findings).items())),
            "by_rule": dict(sorted(Counter(f.rule_id for f in result.findings).items())),
            "notifications": len(result.notifications),
            "suppressed": result.suppressed,
            "unused_suppressions": len(result.unused_suppressions),
            "baselined": result.baselined,
            "outside_diff": result.outside_diff,
            "unresolved_imports": result.unresolved_imports,
        },
        "rules_run": list(result.rules_run),
        "findings": [finding_to_dict(f) for f in result.findings],
        "notifications": [serialize.notification_to_dict(n) for n in result.notifications],
    }


def render_json(result: ScanResult) -> str:
    return json.dumps(build_json(result), indent=2, ensure_ascii=False) + "\n"
