"""What every analyser of one scan shares: the files, the bytes each was hashed from, the word
index over them, and the scan-wide settings an analysis needs.

Built once the files are read and the candidates known; an analyser per configuration group is
made from it (:meth:`Workspace.analyzer`), in this process or -- handed over to them -- in the
pool's workers (:mod:`resume_audit.engine.pool`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from resume_audit.discovery.modulenames import SourceFile
from resume_audit.discovery.repo_root import RepoPaths
from resume_audit.engine.analyzer import Analyzer
from resume_audit.engine.candidates import Candidates
from resume_audit.engine.grouping import Group
from resume_audit.engine.inventory import Inventory
from resume_audit.engine.options import ScanOptions
from resume_audit.facts.summaries import SummarySource
from resume_audit.reading.sourcebytes import Mentions, SourceBytes

if TYPE_CHECKING:
    from resume_audit.analysis.project import Project
    from resume_audit.facts.model import ModuleFacts


@dataclass(frozen=True)
class Workspace:
    """The analysis side of one scan."""

    files: Sequence[SourceFile]
    #: resolved path (as str) -> content hash, of every file of the scan
    hashes: dict[str, str]
    #: the bytes each file was hashed from (read on first use for the files the table vouched for)
    texts: SourceBytes
    #: which files mention a word: from the file table, the readers' answers, or one search
    mentions: Mentions
    #: the frameworks some file of the scan imports
    in_scan: frozenset[str]
    repo: RepoPaths
    time_limit: float | None
    max_file_bytes: int

    @classmethod
    def of(cls, inventory: Inventory, candidates: Candidates, repo: RepoPaths, options: ScanOptions) -> Workspace:
        texts = SourceBytes(inventory.raw_texts, inventory.hashes, inventory.corpus)
        mentions = Mentions(inventory.files, texts, inventory.table)
        if inventory.presearched is not None and candidates.paths:
            mentions.remember({word: sorted(holding) for word, holding in inventory.presearched.items()})
        return cls(
            inventory.files,
            inventory.hashes,
            texts,
            mentions,
            candidates.in_scan,
            repo,
            options.time_limit,
            options.max_file_bytes,
        )

    def analyzer(
        self,
        group: Group,
        summaries: SummarySource[Project] | None,
        parsed: dict[tuple[Path, str], ModuleFacts] | None = None,
    ) -> Analyzer:
        """An analyser of ``group``'s files, keeping the summaries it computes in ``summaries``
        (and, given ``parsed``, the modules it parses there, for the next analyser)."""
        return Analyzer(
            self.files,
            group.config,
            list(group.rule_ids),
            self.time_limit,
            self.hashes,
            self.texts,
            self.max_file_bytes,
            self.mentions,
            in_scan=self.in_scan,
            repo=self.repo,
            summaries=summaries,
            parsed=parsed,
        )
