"""What analysing one candidate file produced, and what it depended on: the unit the analysis
hands back (from this process or a pool worker) and the result cache stores.

Defined here, beside the cache that stores it, rather than in the engine that produces it: the
cache then depends on nothing of the engine (it once imported the engine to build an entry).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from resume_audit.findings import Finding, Notification
from resume_audit.postprocess.suppression import SuppressionComment, SuppressionUse


@dataclass
class FileResult:
    """What analysing one candidate file produced, and what it depended on."""

    display: str
    findings: list[Finding] = field(default_factory=list)
    notifications: list[Notification] = field(default_factory=list)
    suppressed: int = 0
    #: the ``# resume-audit: ignore`` comments of the file itself
    suppression_comments: list[SuppressionComment] = field(default_factory=list)
    #: every suppression that took effect during this analysis (in this file or one it reached)
    suppressions_used: list[SuppressionUse] = field(default_factory=list)
    #: resolved path -> content hash of every module the analysis looked into
    deps: dict[str, str] = field(default_factory=dict)
    mention_words: list[str] = field(default_factory=list)
    #: summary part -> digest of the value the analysis relied on (``Project.summaries_over``)
    summary_deps: dict[str, str] = field(default_factory=dict)
    #: False when a module the analysis needed timed out: the result is not cached
    complete: bool = True
