"""What stages 1-4 of a scan leave behind: the inventory, the candidates, the analysis side, the
cache and the per-file results -- combined into the scan's result by stage 5.

A plain scan combines it once and drops it; a project held warm between edits
(:mod:`~resume_audit.engine.live`) keeps it and combines it again after each update.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from resume_audit.cache.fileresult import FileResult
from resume_audit.engine.cached import ScanCache
from resume_audit.engine.candidates import Candidates
from resume_audit.engine.combine import combine
from resume_audit.engine.grouping import GroupAnalyzers
from resume_audit.engine.inventory import Inventory
from resume_audit.engine.scope import ScanScope
from resume_audit.engine.workspace import Workspace
from resume_audit.findings import ScanResult


@dataclass
class Stages:
    """One scan's state after analysis, before combination."""

    scope: ScanScope
    inventory: Inventory
    candidates: Candidates
    workspace: Workspace
    cache: ScanCache
    analyzers: GroupAnalyzers
    #: every candidate's result, from the cache or analysed
    results: dict[Path, FileResult]

    def combined(self) -> ScanResult:
        """Stage 5 on the results as they are now. Combining adds notifications (unused
        suppressions); it adds them to a copy of the inventory's, so combining again after an
        update reports each once."""
        inventory = dataclasses.replace(self.inventory, notifications=list(self.inventory.notifications))
        return combine(self.scope, inventory, self.candidates, self.results)
