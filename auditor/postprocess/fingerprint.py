"""Stable finding fingerprints (SARIF ``partialFingerprints``, baselines).

A fingerprint must survive unrelated edits above the finding -- a new import,
a reformatted docstring -- or every such edit would re-open old findings in
code scanning and break a team's baseline. So it hashes what identifies the
hazard, not where it is: the rule, the file, the enclosing function, the
whitespace-normalised text of the flagged code, and its occurrence number
among identical ones in that function. Line numbers are deliberately left out.

The file is named relative to the repository root (:mod:`resume_audit.discovery.repo_root`),
not to the report root: a scan started in a subfolder fingerprints a finding
as one started at the top does, so baselines and code-scanning alerts do not
depend on the working directory. When the two roots are the same folder (the
usual case) this is the path the report shows.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from typing import Callable, Iterable

from resume_audit.findings import Finding

FINGERPRINT_KEY = "resumeAudit/v1"
_WS = re.compile(r"\s+")


def _normalised_text(lines: list[str], finding: Finding) -> str:
    span = finding.span
    if not lines or span.start_line < 1 or span.start_line > len(lines):
        return ""
    if span.start_line == span.end_line:
        text = lines[span.start_line - 1][span.start_col - 1 : span.end_col - 1]
    else:
        first = lines[span.start_line - 1][span.start_col - 1 :]
        middle = lines[span.start_line : span.end_line - 1]
        last = lines[span.end_line - 1][: span.end_col - 1] if span.end_line <= len(lines) else ""
        text = "\n".join([first, *middle, last])
    return _WS.sub(" ", text).strip()


def assign_fingerprints(
    findings: Iterable[Finding],
    lines_by_path: dict[str, list[str]],
    repo_path: Callable[[str], str] = lambda reported: reported,
) -> list[Finding]:
    """Return the findings, sorted by location, with ``fingerprint`` set where it was empty.

    ``repo_path`` maps a reported path to the one hashed (relative to the repository root)."""
    seen: Counter[tuple[str, ...]] = Counter()
    out: list[Finding] = []
    for f in sorted(findings, key=lambda x: x.sort_key):
        if f.fingerprint:
            out.append(f)
            continue
        text = _normalised_text(lines_by_path.get(f.span.path, []), f)
        key = (f.rule_id, repo_path(f.span.path), f.scope, text or f.message)
        seen[key] += 1
        digest = hashlib.sha256("\x1f".join([*key, str(seen[key])]).encode("utf-8")).hexdigest()[:32]
        out.append(f.with_fingerprint(digest))
    return out
