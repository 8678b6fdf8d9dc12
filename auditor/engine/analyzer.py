"""Per-file analysis: one candidate file checked by the active rules against the whole project.

* **Lazy project.** Hazards cross files (a node in ``graph.py`` reaching
  ``stripe.Charge.create`` inside ``tools/payments.py``), so every file of the scan is indexed
  by module name, and the modules an analysis reaches are parsed on demand, from the bytes the
  scan read and hashed (an edit during the scan never lands under the old hash).
* **Time limit.** Each file's analysis runs under :class:`~resume_audit.engine.timelimit.Alarm`;
  a module another file reaches is parsed on a budget of its own, so a slow file is charged to
  itself. A file over its limit, or one that trips a rule bug, becomes a notification.
* **One finding per location.** The findings go through the per-file post-processing
  (:func:`~resume_audit.postprocess.perfile.postprocess`) of the file they land in.

The analysis (LibCST, the project model, the rules) is imported when the first analyser is
built, never by importing this module: a warm scan answered from the cache does without it.
"""

from __future__ import annotations

import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from resume_audit.cache.fileresult import FileResult
from resume_audit.config.settings import Config
from resume_audit.discovery.modulenames import SourceFile
from resume_audit.discovery.repo_root import AS_REPORTED, RepoPaths
from resume_audit.engine.loading import index_bytes, load_module
from resume_audit.engine.options import DEFAULT_MAX_FILE_BYTES
from resume_audit.engine.rulesets import prefilter_of
from resume_audit.engine.timelimit import Alarm, TimeLimit
from resume_audit.facts.summaries import SummarySource
from resume_audit.findings import Finding, Notification, NotificationKind, Severity
from resume_audit.postprocess.perfile import postprocess
from resume_audit.postprocess.suppression import SuppressionUse, parse_comments
from resume_audit.reading.sourcebytes import Mentions, SourceBytes

if TYPE_CHECKING:
    from resume_audit.analysis.project import Project
    from resume_audit.facts.collect import ModuleFacts


class IncompleteSummary(Exception):
    """A summary part could not be computed completely (a module it rests on timed out, or a bug)."""


class KeptSummaries(SummarySource["Project"]):
    """The summary store as an analyser uses it: a summary computed while a module it needed
    timed out, or from bytes that changed during the scan, serves this scan but is not kept.

    In a pool worker it also serves the summaries the other workers computed this scan
    (``shared``) and collects the ones this worker computed and kept (``kept``) to hand them on:
    a summary is then computed once per scan, not once per worker."""

    def __init__(self, store: SummarySource[Project], analyzer: Analyzer) -> None:
        self.store = store
        self.analyzer = analyzer
        self.shared: dict[tuple[str, Path], object] = {}
        self.kept: dict[tuple[str, Path], object] = {}

    def lookup(self, kind: str, path: Path, project: Project) -> object | None:
        value = self.shared.get((kind, path))
        return value if value is not None else self.store.lookup(kind, path, project)

    def record(
        self,
        kind: str,
        path: Path,
        value: object,
        paths: set[Path],
        words: set[str],
        summaries: dict[str, str],
        project: Project,
    ) -> None:
        if self.analyzer.incomplete or self.analyzer.texts.changed & paths:
            return
        self.kept[(kind, path)] = value
        self.store.record(kind, path, value, paths, words, summaries, project)


class Analyzer:
    """Analyses candidate files against a lazily loaded project. One per configuration group and process."""

    def __init__(
        self,
        files: Sequence[SourceFile],
        config: Config,
        rule_ids: Sequence[str],
        time_limit: float | None,
        hashes: dict[str, str],
        texts: SourceBytes | dict[Path, bytes] | None = None,
        max_file_bytes: int | None = None,
        mentions: Callable[[str], list[str]] | None = None,
        in_scan: frozenset[str] | None = None,
        repo: RepoPaths = AS_REPORTED,
        summaries: SummarySource[Project] | None = None,
        parsed: dict[tuple[Path, str], ModuleFacts] | None = None,
    ) -> None:
        from resume_audit.analysis.configs import ConfigEvaluator
        from resume_audit.analysis.effects import EffectModel
        from resume_audit.analysis.project import Project
        from resume_audit.rules import all_rules

        self.config = config
        #: fingerprints hash paths relative to the repository root
        self.repo = repo
        self.max_file_bytes = max_file_bytes or DEFAULT_MAX_FILE_BYTES
        self.rules = [r() for r in all_rules() if r.id in set(rule_ids)]
        self.prefilter = prefilter_of(self.rules)
        #: the frameworks some file of the scan imports (a framework-bound trigger counts only then);
        #: None: every framework (a caller analysing files outside a scan)
        self.in_scan = frozenset(self.prefilter.frameworks) if in_scan is None else in_scan
        self.time_limit = time_limit
        self.hashes = hashes
        self.by_path = {f.path: f for f in files}
        #: the bytes each file was hashed from: analysed as read, so an edit during the scan can
        #: never put the new content's result under the old hash, nor a deleted file go missing
        self.texts = texts if isinstance(texts, SourceBytes) else SourceBytes(dict(texts or {}), hashes)
        self.load_notes: dict[Path, Notification] = {}
        #: modules parsed earlier, by (path, content hash): a project rebuilt after an edit
        #: (:mod:`~resume_audit.engine.live`) parses only what changed. None: parse everything
        self.parsed = parsed
        #: the file under analysis, and whether a module it needed could not be loaded in time
        self.current: Path | None = None
        self.incomplete = False
        #: timeouts of modules the analysis reached, reported with the file being analysed
        self.dependency_notes: list[Notification] = []
        if mentions is None:  # a pool worker: its own index over the texts it was handed
            mentions = Mentions(files, self.texts)
        #: which files mention a word (what the cache records for every word a result relied on)
        self.mentions = mentions
        self.summaries = KeptSummaries(summaries if summaries is not None else SummarySource(), self)
        self.project = Project(files=files, loader=self._load, mentions=mentions, summaries=self.summaries)
        self.effects = EffectModel(
            config.effect_sinks, config.safe_calls, safe_urls=config.safe_urls, read_only_tools=config.read_only_tools
        )
        self.configs = ConfigEvaluator(self.project)

    def _load(self, entry: SourceFile) -> ModuleFacts | None:
        raw = self.texts.get(entry.path)
        if raw is None:
            loaded: ModuleFacts | Notification = load_module(entry.path, entry.display)
        elif len(raw) > self.max_file_bytes:
            return None  # never parse an oversized file, even as a dependency
        else:
            known = (entry.path, self.hashes.get(str(entry.path), ""))
            kept = self.parsed.get(known) if self.parsed is not None else None
            if kept is not None:
                return kept
            if entry.path != self.current and Alarm.running():
                loaded = self._load_on_its_own_budget(entry, raw)
            else:
                loaded = index_bytes(raw, entry)
            if (
                self.parsed is not None
                and not isinstance(loaded, Notification)
                and entry.path not in self.texts.changed
            ):
                self.parsed[known] = loaded
        if isinstance(loaded, Notification):
            self.load_notes[entry.path] = loaded
            return None
        return loaded

    def _load_on_its_own_budget(self, entry: SourceFile, raw: bytes) -> ModuleFacts | Notification:
        """A module another file's analysis reaches is parsed on a time budget of its own: a slow
        file is charged to itself (reported as a timeout when its turn comes), never to the
        neighbour whose finding would otherwise be lost. The neighbour's clock is paused meanwhile."""
        started = time.perf_counter()
        with Alarm.paused(self.time_limit):
            try:
                loaded = index_bytes(raw, entry)
                # the alarm's exception can be swallowed (raised inside a gc callback, which Python
                # ignores): the clock decides, not only the signal
                if self.time_limit and time.perf_counter() - started > self.time_limit:
                    raise TimeLimit()
                return loaded
            except TimeLimit:
                self.incomplete = True
                note = Notification(
                    NotificationKind.TIMEOUT,
                    f"parsing took longer than {self.time_limit:g} s; file skipped",
                    entry.display,
                )
                self.dependency_notes.append(note)  # reported even if the slow file is no candidate itself
                return note

    def summarise(self, path: Path) -> bool:
        """Compute every registered kind of per-module summary of the file at ``path`` (each kept
        one lands in ``self.summaries.kept``), on the file's time limit: a pool's first phase, so
        that the whole-project questions every file asks are answered once per scan, not once per
        worker. False when it could not be done completely (a module it needed timed out, or a
        bug): this analyser's memos then rest on a partial project, and the caller discards it --
        the file's own analysis meets the problem again and reports it as a serial scan would."""
        from resume_audit.facts.summaries import SUMMARY_KINDS

        entry = self.by_path[path]
        self.project.begin_file()
        self.current, self.incomplete = entry.path, False
        try:
            with Alarm(self.time_limit):
                for kind in SUMMARY_KINDS:
                    self.project.summary_value(kind, entry)
        except Exception:  # the time limit, nesting too deep, a bug
            return False
        finally:
            self.current = None
            self.dependency_notes = []
        return not self.incomplete

    def summary_digest(self, key: str) -> str | None:
        """The current digest of a summary part, computed on the file time limit. Raises
        :class:`IncompleteSummary` when a module it rests on is too slow, or a bug: the project
        then holds answers computed without that module."""
        known = self.project.known_digest(key)
        if known is not None:
            return known[0]  # most parts are asked by every cached result: no timer for a memo hit
        self.incomplete = False
        try:
            with Alarm(self.time_limit):
                digest = self.project.summary_digest(key)
        except (TimeLimit, RecursionError, Exception):
            digest = None
            self.incomplete = True
        finally:
            self.dependency_notes = []
        if self.incomplete:
            raise IncompleteSummary(key)
        return digest

    def analyse(self, path: Path) -> FileResult:
        entry = self.by_path[path]
        result = FileResult(entry.display)
        self.project.begin_file()
        self.current, self.incomplete = entry.path, False
        try:
            with Alarm(self.time_limit):
                module = self.project.load(entry)
                if module is None:
                    note = self.load_notes.get(entry.path)
                    if note is not None:
                        result.notifications.append(note)
                else:
                    self._check_file(module, entry, result)
        except TimeLimit:
            result.findings, result.suppressions_used = [], []
            result.notifications.append(
                Notification(
                    NotificationKind.TIMEOUT,
                    f"analysis took longer than {self.time_limit:g} s; file skipped",
                    entry.display,
                )
            )
            self.project.give_up(entry)  # a neighbour reaching it later does not pay for it again
        except RecursionError:
            result.findings, result.suppressions_used = [], []
            result.notifications.append(
                Notification(
                    NotificationKind.INTERNAL_ERROR, "nesting too deep to analyse; file skipped", entry.display
                )
            )
        # a module read late that no longer matches its hash: the result rests on an edit made
        # during the scan and is not cached under the old hash
        result.complete = not self.incomplete and not (self.texts.changed & self.project.touched)
        result.notifications.extend(self.dependency_notes)
        self.dependency_notes = []
        self.current = None
        result.deps = {p: self.hashes.get(p, "") for p in sorted(map(str, self.project.touched))}
        result.mention_words = sorted(self.project.mention_words)
        result.summary_deps = dict(sorted(self.project.summary_deps.items()))
        return result

    def _check_file(self, module: ModuleFacts, entry: SourceFile, result: FileResult) -> None:
        """The rules' findings on a loaded module, post-processed per file they land in."""
        result.suppression_comments = parse_comments(module.source)
        unresolved = self.project.unresolved_imports(module)
        if unresolved:
            result.notifications.append(
                Notification(
                    NotificationKind.UNRESOLVED_IMPORTS, " ".join(unresolved), entry.display, level=Severity.NOTE
                )
            )
        raw = self._check(module, result)
        used: set[SuppressionUse] = set()
        by_file: dict[str, list[Finding]] = {}
        for f in raw:
            by_file.setdefault(f.span.path, []).append(f)
        for display, group in sorted(by_file.items()):
            where = module if display == module.display_path else self.project.module_for_display(display)
            if where is None:
                continue
            kept, dropped = postprocess(group, where, self.config, self.rules, self.repo, used)
            result.findings.extend(kept)
            result.suppressed += dropped
        result.suppressions_used = sorted(used)

    def _check(self, module: ModuleFacts, result: FileResult) -> list[Finding]:
        from resume_audit.rules import RuleContext

        findings: list[Finding] = []
        raw = self.texts.get(self.current) if self.current is not None else None
        match = self.prefilter.match(raw) if raw is not None else None
        for rule in self.rules:
            if match is not None and not self.prefilter.applies(type(rule), match, self.in_scan):
                continue
            ctx = RuleContext(rule, module, self.project, self.effects, self.configs)
            try:
                findings.extend(rule.check(ctx))
            except (TimeLimit, RecursionError):
                raise
            except Exception as exc:  # a rule bug must not lose the rest of the scan
                where = traceback.extract_tb(exc.__traceback__)[-1]
                result.notifications.append(
                    Notification(
                        NotificationKind.INTERNAL_ERROR,
                        f"{rule.id} failed on this file ({exc.__class__.__name__}: {str(exc)[:120]} at "
                        f"{Path(where.filename).name}:{where.lineno}); other rules and files were scanned",
                        module.display_path,
                    )
                )
        return findings
