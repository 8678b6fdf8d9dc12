"""Stage 1: the scan's files, found and read once.

* **Walk.** The files under the scanned paths (:func:`~resume_audit.discovery.walk.discover`), or
  the list the last scan found when no folder changed since (the replay record's), each put in
  its configuration group (:mod:`resume_audit.engine.grouping`).
* **Read.** Every file the file table (:mod:`resume_audit.cache.filetable`) cannot vouch for by
  its ``stat`` signature is read once, as bytes -- it has to be, to hash it for the cache -- by
  reader processes when there are many (:mod:`resume_audit.reading.readers`), decoded and
  pre-filtered: only files that mention one of the active rules' trigger words (in practice an
  import of a framework a rule knows) are candidates for parsing. Undecodable files are reported
  here. Readers also say which files hold the words every scan searches the whole tree for.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from resume_audit.cache.filetable import FileState, FileTable, Signature, signature
from resume_audit.catalog.ruleindex import RuleInfo, static_rules, tool_fingerprint
from resume_audit.discovery.modulenames import SourceFile, module_name_for
from resume_audit.discovery.walk import SourcePath, WalkRecord, discover
from resume_audit.engine import loading
from resume_audit.engine.grouping import Group, Groups
from resume_audit.engine.options import ScanOptions
from resume_audit.engine.replay import ReplayCheck, ScanReplay
from resume_audit.engine.rulesets import active_rule_infos, prefilter_of
from resume_audit.engine.scope import ScanScope
from resume_audit.findings import Notification, ScanResult
from resume_audit.reading import readers
from resume_audit.reading.prefilter import FileMatch, Prefilter
from resume_audit.reading.sourcebytes import Corpus
from resume_audit.reading.treewords import WHOLE_TREE_WORDS
from resume_audit.version import __version__


@dataclass
class Inventory:
    """Every file of the scan as found and read, in the order found."""

    groups: Groups
    #: every static rule (from the cache's snapshot when it has one: no rule module is imported)
    rule_infos: tuple[RuleInfo, ...]
    #: the pre-filter files were read with: one configuration's rules, or -- when folders may have
    #: their own -- every rule, narrowed to each file's group's when deciding what to parse
    prefilter: Prefilter
    #: what the last scan learned per file: an unchanged file is only stat-ed, never read
    table: FileTable | None
    #: what the walk rested on (None: nothing is recorded for a replay)
    walk: WalkRecord | None
    #: tool notifications so far: what could not be walked, read or decoded
    notifications: list[Notification] = field(default_factory=list)
    group_of: dict[Path, Group] = field(default_factory=dict)
    #: each file found, with the table's state of it when the table vouches for it (then it is not read)
    walked: list[tuple[SourcePath, FileState | None]] = field(default_factory=list)
    #: how many files were found (read or vouched for, readable or not)
    discovered: int = 0
    files: list[SourceFile] = field(default_factory=list)
    hashes: dict[str, str] = field(default_factory=dict)
    sizes: dict[Path, int] = field(default_factory=dict)
    #: the bytes of every file read, once: project-wide text questions and the analysis reuse them
    corpus: Corpus = field(default_factory=Corpus)
    #: and, whole, those of the files the pre-filter matched (the ones likely to be parsed)
    raw_texts: dict[Path, bytes] = field(default_factory=dict)
    matches: dict[Path, FileMatch] = field(default_factory=dict)
    #: every file's signature as it was before it was read (or found unchanged): what a replay checks
    signatures: dict[str, Signature | None] = field(default_factory=dict)
    #: which files hold each whole-tree word, as the readers answered (None: not every file was
    #: read by a reader, so the answers are incomplete)
    presearched: dict[str, list[str]] | None = None

    @property
    def read_rule_ids(self) -> list[str]:
        """The rules the files were pre-filtered for."""
        return [r.id for r in self.prefilter.rules]

    def save_table(self) -> None:
        """Write the file table (after the analysis: the words it searched for are learned by now)."""
        if self.table is not None:
            self.table.save(self.hashes)

    def record(self, replay: ScanReplay, result: ScanResult, complete: bool) -> None:
        """Keep ``result`` for a scan of the same, unchanged tree, with what it rests on: the walk,
        and every file found with its signature before it was read and its module name."""
        if self.walk is None or self.table is None:
            return
        modules = {str(f.path): (f.module_name, f.is_package) for f in self.files}
        replay.save(
            result,
            self.walk,
            [(sp, self.signatures.get(str(sp.resolved)), modules.get(str(sp.resolved))) for sp, _ in self.walked],
            self.table.started,
            complete=complete,
        )


def take_inventory(scope: ScanScope, options: ScanOptions, check: ReplayCheck, recording: bool) -> Inventory:
    """Walk (or take the replay record's file list) and read; ``recording``: the scan's result
    will be recorded for a replay, so the walk records what it rests on."""
    fixed = scope.fixed_config
    rule_infos = static_rules(options.cache_dir)
    prefilter = prefilter_of(active_rule_infos(fixed) if fixed is not None else list(rule_infos))
    table = (
        FileTable(options.cache_dir, [__version__, tool_fingerprint(), ",".join(r.id for r in prefilter.rules)])
        if options.cache_dir
        else None
    )
    walk = check.walk or (WalkRecord() if recording else None)
    inventory = Inventory(Groups(scope.source), rule_infos, prefilter, table, walk)
    found = (
        check.paths
        if check.paths is not None
        else discover(
            scope.paths,
            scope.root,
            options.exclude,
            follow_symlinks=options.follow_symlinks,
            problems=inventory.notifications,
            configs=scope.source,
            respect_gitignore=options.respect_gitignore,
            force_exclude=options.force_exclude,
            record=walk,
        )
    )
    _walk(inventory, found)
    _read(inventory, options, check.modules)
    if not inventory.groups.all:  # nothing to scan: report the rules the configuration would have run
        inventory.groups.of_dir(scope.home())
    return inventory


def _walk(inventory: Inventory, found: Iterable[SourcePath]) -> None:
    """Group every file found, and ask the file table whether it can vouch for it."""
    table = inventory.table
    for source_path in found:
        inventory.group_of[source_path.resolved] = inventory.groups.of(source_path.path)
        state = None
        if table is not None:
            with contextlib.suppress(OSError):
                state = table.known(str(source_path.resolved), os.stat(source_path.path))
        inventory.walked.append((source_path, state))


def _read(inventory: Inventory, options: ScanOptions, modules: dict[str, tuple[str, bool]] | None) -> None:
    """Read the files the table cannot vouch for, in the order they were found, and name every file's module."""
    # the files are read by reader processes when there are many; closed on the way out, not when
    # collected: Ctrl-C or SIGTERM between two files stops the readers now (a suspended generator
    # lives on in the exception's traceback). Readers also say which files hold the words every
    # scan searches the whole tree for: the answers then come from them, once, not from a search
    # of the text by every analysis worker
    presearched: dict[str, list[str]] | None = {word: [] for word in WHOLE_TREE_WORDS}
    table, walked, notifications, signatures = (
        inventory.table,
        inventory.walked,
        inventory.notifications,
        inventory.signatures,
    )
    files, hashes, sizes, matches = inventory.files, inventory.hashes, inventory.sizes, inventory.matches
    preloaded = False
    to_read = [(sp.path, sp.resolved, sp.display) for sp, state in walked if state is None]
    with contextlib.closing(
        readers.read_files(to_read, inventory.prefilter, options.workers, WHOLE_TREE_WORDS)
    ) as reads:
        for discovered, (source_path, state) in enumerate(walked, 1):
            if discovered % 256 == 0:
                options.tell("reading files", discovered, len(walked))
            key = str(source_path.resolved)
            if state is None:
                read = next(reads)
                if read.raw is None or read.info is None:
                    if read.problem is not None:
                        notifications.append(read.problem)
                    signatures[key] = None
                    continue
                signatures[key] = signature(read.info)
                raw, digest, found, problem = read.raw, read.digest, read.match, read.problem
                if read.words is None:  # read in this process: no readers, no answers
                    presearched = None
                else:
                    if presearched is not None:
                        for word in read.words:
                            presearched[word].append(key)
                    if not found.empty and not preloaded:
                        # readers are reading and this process mostly waits: import the analysis
                        # now, so the workers it forks later inherit it rather than each import it
                        loading.preload_analysis()
                        preloaded = True
                if table is not None:
                    table.record(key, read.info, digest, raw, found, problem)
                inventory.corpus.add(source_path.resolved, raw)
                if not found.empty:
                    inventory.raw_texts[source_path.resolved] = raw
                size = len(raw)
            else:
                digest, found, size = state.hash, state.match, state.size
                signatures[key] = state.signature
                problem = state.notification(source_path.display)
                presearched = None  # a file not read: the readers' answers miss it
            module = modules.get(key) if modules is not None else None
            name, is_package = module if module is not None else module_name_for(source_path.resolved, resolved=True)
            entry = SourceFile(source_path.resolved, source_path.display, name, is_package)
            files.append(entry)
            hashes[key] = digest
            sizes[entry.path] = size
            if problem is not None:
                notifications.append(problem)
                continue
            if not found.empty:
                matches[entry.path] = found
    inventory.presearched = presearched
    inventory.discovered = len(walked)
