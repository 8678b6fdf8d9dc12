"""The static scan: discover, pre-filter, analyse (in parallel, cached), post-process.

* **Pre-filter.** Every discovered file is read once as bytes (it has to be,
  to hash it for the cache). Only files that mention one of the active rules'
  trigger words -- in practice an import of a framework the rule knows --
  are parsed and checked; a file that imports no agent framework cannot hold
  a resume-plane hazard. Undecodable files are reported at this stage.
* **Lazy project.** Hazards cross files (a node in ``graph.py`` reaching
  ``stripe.Charge.create`` inside ``tools/payments.py``), so every file is
  indexed by module name, and the modules an analysis reaches are parsed on
  demand.
* **Parallel.** Many files are read, hashed and pre-filtered by reader processes
  (:mod:`resume_audit.reading.readers`); candidate files are analysed by a standard process
  pool in two phases -- first the per-module summaries every file's whole-project
  questions read, split across the workers and handed to all of them, then the
  files. The output order is deterministic (sorted by location) whatever the schedule.
* **Per-file configuration.** Each file is analysed under the configuration
  that applies to it (:mod:`resume_audit.config.tree`: a monorepo's packages
  keep their own rules and effect sinks). Files sharing a configuration form a
  group with its own analyser and cache key; the project every analysis looks
  into is still the whole scan.
* **Cache.** Per-file results are cached as JSON keyed by the tool version,
  the configuration that applied to the file, the file's content, the
  content of every module its analysis touched, and the *value* of every
  per-module summary it read (:mod:`resume_audit.facts.summaries`: which
  functions a module makes checkpointed, which names it calls...), so an
  unchanged tree rescans at I/O speed and an edit that changes no summary
  re-analyses only the edited file (early cut-off). Summaries are stored too:
  checking them parses only the modules that changed.
* **Replay.** A scan of a tree where nothing changed returns the last result from
  ``stat`` calls alone, and one where only files' contents changed takes the last
  file list instead of walking (:mod:`resume_audit.engine.replay`).
* **Never stuck.** Each file's analysis has a time limit; a file that exceeds
  it, or trips a rule bug, is reported as a notification and the scan goes on.

Nothing here imports or executes scanned code.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import os
import signal
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Sequence

from resume_audit import __version__
# plain JSON bookkeeping, no LibCST: a warm scan checks stored summaries with them
from resume_audit.facts.summaries import SummarySource
from resume_audit.cache.summaries import StoredDigests, SummaryStore
from resume_audit.cache.results import ResultCache
from resume_audit.config.settings import Config
from resume_audit.config.tree import ConfigSource, FixedConfig, common_dir, root_config
from resume_audit.reading.decoding import SourceText, decode_source
from resume_audit.discovery.walk import SourcePath, WalkRecord, discover
from resume_audit.findings import Finding, Notification, NotificationKind, ScanResult, Severity
from resume_audit.cache.filetable import FileState, FileTable, Signature, signature
from resume_audit.reading.prefilter import FileMatch, Prefilter, frameworks_in_scan, prefilter_for
from resume_audit.reading.readers import read_files
from resume_audit.reading.treewords import WHOLE_TREE_WORDS
from resume_audit.reading.sourcebytes import Corpus, Mentions, SourceBytes, read_regular
from resume_audit.postprocess.fingerprint import assign_fingerprints
from resume_audit.discovery.repo_root import AS_REPORTED, RepoPaths
from resume_audit.discovery.modulenames import SourceFile, module_name_for
from resume_audit.catalog.ruleindex import RuleInfo, static_rules, tool_fingerprint
from resume_audit.engine.replay import ReplayCheck, ScanReplay, replay_key, source_fingerprint
from resume_audit.postprocess.suppression import SuppressionComment, SuppressionUse, parse_comments, parse_suppressions, suppressing_lines
from resume_audit.postprocess.unused_suppressions import unused_suppressions

if TYPE_CHECKING:  # the analysis (LibCST and the rules) is imported when a file is analysed, and
    # the process pool's modules (:mod:`resume_audit.engine.processpool`) when a pool starts, never before:
    # a warm scan whose every result comes from the cache does without them
    from multiprocessing.sharedctypes import SynchronizedArray

    from resume_audit.facts.collect import ModuleFacts
    from resume_audit.analysis.project import Project
    from resume_audit.rules import Rule

#: Below this many files to analyse a pool costs more than it saves: starting a worker, and its
#: import of the analysis, is a third of a second. Measured on two cores: no faster at 5 to 10
#: agent files, 7 % faster at 20, 35 % at 80.
PARALLEL_THRESHOLD = 16
#: Candidate files larger than this are reported and skipped: generated code, and LibCST's
#: native parser cannot be interrupted by the per-file time limit.
DEFAULT_MAX_FILE_BYTES = 5 * 1024 * 1024
DEFAULT_TIME_LIMIT = 60.0


def prefilter_of(rules: Sequence["Rule | RuleInfo"]) -> Prefilter:
    """The pre-filter for these (active) rules: instances of the rule classes, or their
    :class:`~resume_audit.catalog.ruleindex.RuleInfo` (what a scan has before it analyses anything)."""
    return prefilter_for(tuple(r if isinstance(r, RuleInfo) else type(r) for r in rules))


# -- loading ---------------------------------------------------------------------------------

def index_source(source: SourceText) -> ModuleFacts | Notification:
    from resume_audit.facts.collect import build_module_facts
    from resume_audit.facts.parse import parse_source

    tree = parse_source(source)
    if isinstance(tree, Notification):
        return tree
    name, is_package = module_name_for(source.path)
    try:
        return build_module_facts(source.path, source.display_path, name, is_package, source.text, tree)
    except RecursionError:
        return Notification(NotificationKind.PARSE_ERROR, "nesting too deep to analyse, file skipped", source.display_path)
    except Exception as exc:  # an indexing bug must cost one file, not the scan
        return Notification(
            NotificationKind.INTERNAL_ERROR,
            f"could not be indexed ({exc.__class__.__name__}: {str(exc)[:120]}); file skipped, please report",
            source.display_path,
        )


def _index_bytes(raw: bytes, entry: SourceFile) -> ModuleFacts | Notification:
    return _index_raw(raw, entry.path, entry.display)


def _index_raw(raw: bytes, path: Path, display: str) -> ModuleFacts | Notification:
    source = decode_source(raw, path, display)
    if isinstance(source, Notification):
        return source
    return index_source(source)


def load_module(path: Path, display: str) -> ModuleFacts | Notification:
    """Read (a regular file only: never a FIFO's endless wait), parse and index one file; every
    failure becomes a notification."""
    read = read_regular(path, display)
    if isinstance(read, Notification):
        return read
    return _index_raw(read[0], path, display)


def active_rules(config: Config) -> list[Rule]:
    from resume_audit.rules import all_rules

    return [rule() for rule in all_rules() if config.rule_enabled(rule.id)]


def active_rule_infos(config: Config, cache_dir: Path | None = None) -> list[RuleInfo]:
    """:func:`active_rules` as the scan's set-up needs them, without importing the rules."""
    return [rule for rule in static_rules(cache_dir) if config.rule_enabled(rule.id)]


# -- one file's analysis --------------------------------------------------------------------

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
    #: summary part -> digest of the value the analysis relied on (:meth:`Project.summaries_over`)
    summary_deps: dict[str, str] = field(default_factory=dict)
    #: False when a module the analysis needed timed out: the result is not cached
    complete: bool = True


class _TimeLimit(Exception):
    pass


class _Alarm:
    """A per-file wall-clock limit (SIGALRM; only where signals can be used: the main thread)."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.active = bool(seconds) and threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")

    def __enter__(self) -> "_Alarm":
        if self.active:
            assert self.seconds  # active only with a limit
            self.stopping = False
            self.previous = signal.signal(signal.SIGALRM, self._raise)
            try:
                signal.setitimer(signal.ITIMER_REAL, self.seconds)
            except _TimeLimit:
                # a limit shorter than the way back to the caller: the alarm fired (and armed its
                # repeat) before the block began, so no ``__exit__`` will stop it -- stop it here
                self.__exit__()
                raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self.active:
            try:
                # from here the handler neither raises nor re-arms: a repeat that fired while the
                # body's exception was unwinding must not outlive the block (it once crashed pytest
                # 50 ms later, far from any analysis)
                self.stopping = True
            finally:  # even when a repeat raised on the line above
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, self.previous)

    #: after the limit, the alarm fires again this often until the body has stopped: an exception
    #: raised while a gc callback or ``__del__`` runs is printed and dropped by the interpreter
    #: (seen in CI: hypothesis's gc callback ate one), and the file would run on unlimited. Long
    #: enough that the first one's unwinding reaches ``__exit__`` before a repeat, on a loaded machine.
    REPEAT_SECONDS = 0.5

    def _raise(self, signum: int, frame: object) -> None:
        if self.stopping:
            return
        signal.setitimer(signal.ITIMER_REAL, _Alarm.REPEAT_SECONDS)
        raise _TimeLimit()

    @staticmethod
    def running() -> bool:
        return hasattr(signal, "getitimer") and threading.current_thread() is threading.main_thread() \
            and signal.getitimer(signal.ITIMER_REAL)[0] > 0

    @staticmethod
    @contextlib.contextmanager
    def paused(seconds: float | None) -> Iterator[None]:
        """Run the body on a fresh budget of ``seconds``, then give the running alarm back what it had left."""
        remaining = signal.setitimer(signal.ITIMER_REAL, 0)[0]
        try:
            if seconds:
                signal.setitimer(signal.ITIMER_REAL, seconds)
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            if remaining > 0:
                signal.setitimer(signal.ITIMER_REAL, remaining)


class _KeptSummaries(SummarySource):
    """The summary store as an analyser uses it: a summary computed while a module it needed
    timed out, or from bytes that changed during the scan, serves this scan but is not kept.

    In a pool worker it also serves the summaries the other workers computed this scan
    (``shared``) and collects the ones this worker computed and kept (``kept``) to hand them on:
    a summary is then computed once per scan, not once per worker."""

    def __init__(self, store: SummarySource, analyzer: "Analyzer") -> None:
        self.store = store
        self.analyzer = analyzer
        self.shared: dict[tuple[str, Path], object] = {}
        self.kept: dict[tuple[str, Path], object] = {}

    def lookup(self, kind: str, path: Path, project: Project) -> object | None:
        value = self.shared.get((kind, path))
        return value if value is not None else self.store.lookup(kind, path, project)

    def record(self, kind: str, path: Path, value: object, paths: set[Path], words: set[str],
               summaries: dict[str, str], project: Project) -> None:
        if self.analyzer._incomplete or self.analyzer.texts.changed & paths:
            return
        self.kept[(kind, path)] = value
        self.store.record(kind, path, value, paths, words, summaries, project)


class Analyzer:
    """Analyses candidate files against a lazily loaded project. One per process."""

    def __init__(self, files: Sequence[SourceFile], config: Config, rule_ids: Sequence[str], time_limit: float | None,
                 hashes: dict[str, str], texts: SourceBytes | dict[Path, bytes] | None = None,
                 max_file_bytes: int | None = None, mentions: Callable[[str], list[str]] | None = None,
                 in_scan: frozenset[str] | None = None, repo: RepoPaths = AS_REPORTED,
                 summaries: SummarySource | None = None) -> None:
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
        #: the file under analysis, and whether a module it needed could not be loaded in time
        self._current: Path | None = None
        self._incomplete = False
        self._dependency_notes: list[Notification] = []
        if mentions is None:  # a pool worker: its own index over the texts it was handed
            mentions = Mentions(files, self.texts)
        #: which files mention a word (what the cache records for every word a result relied on)
        self.mentions = mentions
        self.summaries = _KeptSummaries(summaries if summaries is not None else SummarySource(), self)
        self.project = Project(files=files, loader=self._load, mentions=mentions, summaries=self.summaries)
        self.effects = EffectModel(config.effect_sinks, config.safe_calls, safe_urls=config.safe_urls, read_only_tools=config.read_only_tools)
        self.configs = ConfigEvaluator(self.project)

    def _load(self, entry: SourceFile) -> ModuleFacts | None:
        raw = self.texts.get(entry.path)
        if raw is None:
            loaded: ModuleFacts | Notification = load_module(entry.path, entry.display)
        elif len(raw) > self.max_file_bytes:
            return None  # never parse an oversized file, even as a dependency
        elif entry.path != self._current and _Alarm.running():
            loaded = self._load_on_its_own_budget(entry, raw)
        else:
            loaded = _index_bytes(raw, entry)
        if isinstance(loaded, Notification):
            self.load_notes[entry.path] = loaded
            return None
        return loaded

    def _load_on_its_own_budget(self, entry: SourceFile, raw: bytes) -> ModuleFacts | Notification:
        """A module another file's analysis reaches is parsed on a time budget of its own: a slow
        file is charged to itself (reported as a timeout when its turn comes), never to the
        neighbour whose finding would otherwise be lost. The neighbour's clock is paused meanwhile."""
        started = time.perf_counter()
        with _Alarm.paused(self.time_limit):
            try:
                loaded = _index_bytes(raw, entry)
                # the alarm's exception can be swallowed (raised inside a gc callback, which Python
                # ignores): the clock decides, not only the signal
                if self.time_limit and time.perf_counter() - started > self.time_limit:
                    raise _TimeLimit()
                return loaded
            except _TimeLimit:
                self._incomplete = True
                note = Notification(NotificationKind.TIMEOUT,
                                    f"parsing took longer than {self.time_limit:g} s; file skipped", entry.display)
                self._dependency_notes.append(note)  # reported even if the slow file is no candidate itself
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
        self._current, self._incomplete = entry.path, False
        try:
            with _Alarm(self.time_limit):
                for kind in SUMMARY_KINDS:
                    self.project.summary_value(kind, entry)
        except Exception:  # the time limit, nesting too deep, a bug
            return False
        finally:
            self._current = None
            self._dependency_notes = []
        return not self._incomplete

    def analyse(self, path: Path) -> FileResult:
        entry = self.by_path[path]
        result = FileResult(entry.display)
        self.project.begin_file()
        self._current, self._incomplete = entry.path, False
        try:
            with _Alarm(self.time_limit):
                module = self.project.load(entry)
                if module is None:
                    note = self.load_notes.get(entry.path)
                    if note is not None:
                        result.notifications.append(note)
                else:
                    result.suppression_comments = parse_comments(module.source)
                    unresolved = self.project.unresolved_imports(module)
                    if unresolved:
                        result.notifications.append(
                            Notification(NotificationKind.UNRESOLVED_IMPORTS, " ".join(unresolved), entry.display, level=Severity.NOTE)
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
        except _TimeLimit:
            result.findings, result.suppressions_used = [], []
            result.notifications.append(
                Notification(NotificationKind.TIMEOUT, f"analysis took longer than {self.time_limit:g} s; file skipped", entry.display)
            )
            self.project.give_up(entry)  # a neighbour reaching it later does not pay for it again
        except RecursionError:
            result.findings, result.suppressions_used = [], []
            result.notifications.append(Notification(NotificationKind.INTERNAL_ERROR, "nesting too deep to analyse; file skipped", entry.display))
        # a module read late that no longer matches its hash: the result rests on an edit made
        # during the scan and is not cached under the old hash
        result.complete = not self._incomplete and not (self.texts.changed & self.project.touched)
        result.notifications.extend(self._dependency_notes)
        self._dependency_notes = []
        self._current = None
        result.deps = {p: self.hashes.get(p, "") for p in sorted(map(str, self.project.touched))}
        result.mention_words = sorted(self.project.mention_words)
        result.summary_deps = dict(sorted(self.project.summary_deps.items()))
        return result

    def _check(self, module: ModuleFacts, result: FileResult) -> list[Finding]:
        from resume_audit.rules import RuleContext

        findings: list[Finding] = []
        raw = self.texts.get(self._current) if self._current is not None else None
        match = self.prefilter.match(raw) if raw is not None else None
        for rule in self.rules:
            if match is not None and not self.prefilter.applies(type(rule), match, self.in_scan):
                continue
            ctx = RuleContext(rule, module, self.project, self.effects, self.configs)
            try:
                findings.extend(rule.check(ctx))
            except (_TimeLimit, RecursionError):
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


def postprocess(findings: Iterable[Finding], module: ModuleFacts, config: Config, rules: Sequence[Rule],
                repo: RepoPaths = AS_REPORTED, used: set[SuppressionUse] | None = None) -> tuple[list[Finding], int]:
    """Suppression comments, per-path ignores, one finding per location, fingerprints -- all per file.

    Every comment that matches a finding is added to ``used`` -- also when a per-path ignore drops
    the finding anyway: the comment is not stale, only redundant with the configuration."""
    suppressions = parse_suppressions(module.source)
    relative = _config_relative(module, config)
    kept: list[Finding] = []
    suppressed = 0
    for f in findings:
        lines = suppressing_lines(suppressions, f.rule_id, f.span.start_line, f.span.end_line)
        if used is not None:
            used.update(SuppressionUse(f.span.path, line, f.rule_id) for line in lines)
        if lines or config.ignored_for_path(f.rule_id, relative):
            suppressed += 1
            continue
        kept.append(f)
    kept = one_per_location(kept, {type(r).id: type(r) for r in rules})
    return assign_fingerprints(kept, {module.display_path: module.lines}, repo.relative), suppressed


def _config_relative(module: ModuleFacts, config: Config) -> str:
    base = config.base_dir
    if base is None:
        return module.display_path
    try:
        return module.path.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return module.display_path


def one_per_location(findings: list[Finding], rules: dict[str, type[Rule]]) -> list[Finding]:
    """Drop exact duplicates, and a finding whose rule yields to another rule at the same location."""
    at: dict[tuple[str, int, int], set[str]] = {}
    for f in findings:
        at.setdefault((f.span.path, f.span.start_line, f.span.start_col), set()).add(f.rule_id)
    out: list[Finding] = []
    seen: set[tuple] = set()
    for f in findings:
        key = (f.rule_id, f.span)
        if key in seen:
            continue
        seen.add(key)
        present = at[(f.span.path, f.span.start_line, f.span.start_col)]
        yields_to = getattr(rules.get(f.rule_id), "yields_to", ())
        if any(other in present for other in yields_to):
            continue
        out.append(f)
    return out


# -- process pool plumbing ------------------------------------------------------------------

class _Analyzers:
    """One :class:`Analyzer` per configuration group, built when the group's first file comes:
    a worker handed only one package's files never builds the others'."""

    def __init__(self, groups: Sequence["Group"], make: Callable[["Group"], Analyzer]) -> None:
        self.groups = groups
        self.make = make
        self.built: dict[int, Analyzer] = {}
        #: groups whose summaries could not all be computed while checking the cache (a module
        #: timed out): their remaining cached results are not trusted this scan
        self.unsure: set[int] = set()
        #: per group, the summaries other pool workers computed this scan (see :func:`_summarise`)
        self.shared: dict[int, dict[tuple[str, Path], object]] = {}

    def of(self, group: int) -> Analyzer:
        if group not in self.built:
            analyzer = self.built[group] = self.make(self.groups[group])
            analyzer.summaries.shared = self.shared.setdefault(group, {})
        return self.built[group]

    def analyse(self, group: int, path: Path) -> FileResult:
        return self.of(group).analyse(path)


@dataclass(frozen=True)
class _WorkerSetup:
    """What every pool worker analyses with. Forked workers inherit it as it is -- the scan's
    read text and word index included, so no worker reads the tree again; elsewhere it is
    pickled, and ``mentions`` (its text may be spilled to an open temporary file) is None: each
    worker then searches words in the files it reads from disk."""

    files: Sequence[SourceFile]
    groups: Sequence[Group]
    time_limit: float | None
    hashes: dict[str, str]
    texts: SourceBytes | dict[Path, bytes]
    max_file_bytes: int
    in_scan: frozenset[str]
    repo: RepoPaths
    cache_dir: Path | None
    cache_keys: list[str] | None
    mentions: Mentions | None


@dataclass(frozen=True)
class _Summarised:
    """What a worker's first-phase task computed and kept: (group, kind, module path, value), and
    which worker it was (its process id: it still holds the modules it parsed for them)."""

    values: list[tuple[int, str, Path, object]]
    worker: int


@dataclass(frozen=True)
class _Analysed:
    """A worker's second-phase answer: the results, and which files mention each word they
    relied on (the result cache records those; the scan's own process need not search again)."""

    results: list[FileResult]
    mentions: dict[str, list[str]]


@dataclass(frozen=True)
class _Chunk:
    """A worker's second-phase task: files to analyse, with every summary the first phase kept."""

    items: list[tuple[int, Path]]
    shared: dict[int, dict[tuple[str, Path], object]]


@dataclass(frozen=True)
class _Claim:
    """A second-phase task that picks its files when a worker runs it: the first chunk not yet
    taken that this worker summarised, else the first not yet taken (what is taken: the pool's
    shared table, ``_TAKEN``). The pool hands tasks to whichever worker is free, and a worker given a
    chunk another one summarised parses its files again -- a third of a 5,000-file scan's analysis
    went there. As many claims as chunks are sent, so every chunk is analysed once."""

    chunks: list[list[tuple[int, Path]]]
    #: per chunk, the process id of the worker that summarised it
    summarised_by: list[int]
    shared: dict[int, dict[tuple[str, Path], object]]


_WORKER: _Analyzers | None = None
#: per second-phase chunk, whether a worker took it (shared by the scan's workers; None: no pool)
_TAKEN: "SynchronizedArray[int] | None" = None


def _init_worker(setup: _WorkerSetup, taken: "SynchronizedArray[int] | None" = None) -> None:
    global _WORKER, _TAKEN
    _TAKEN = taken

    def make(g: Group) -> Analyzer:
        if isinstance(setup.texts, SourceBytes) and setup.mentions is not None:
            texts_here, mentions = setup.texts, setup.mentions
        else:
            texts_here = SourceBytes(dict(setup.texts) if isinstance(setup.texts, dict) else dict(setup.texts.loaded), setup.hashes)
            mentions = Mentions(setup.files, texts_here)
        store = SummaryStore(setup.cache_dir, setup.cache_keys[g.index], setup.hashes, mentions) \
            if setup.cache_dir is not None and setup.cache_keys is not None else None
        return Analyzer(setup.files, g.config, g.rule_ids, setup.time_limit, setup.hashes, texts_here, setup.max_file_bytes,
                        mentions, in_scan=setup.in_scan, repo=setup.repo, summaries=store)

    _WORKER = _Analyzers(setup.groups, make)


def _summarise(items: list[tuple[int, Path]]) -> _Summarised:
    """First phase: the summaries of these files (see :meth:`Analyzer.summarise`)."""
    assert _WORKER is not None
    values: list[tuple[int, str, Path, object]] = []
    for group, path in items:
        analyzer = _WORKER.of(group)
        complete = analyzer.summarise(path)
        values.extend((group, kind, where, value) for (kind, where), value in analyzer.summaries.kept.items())
        analyzer.summaries.kept.clear()
        if not complete:
            del _WORKER.built[group]  # its memos rest on a partial project: the next file starts afresh
    return _Summarised(values, os.getpid())


def _work(chunk: _Chunk) -> _Analysed:
    assert _WORKER is not None
    for group, values in chunk.shared.items():
        _WORKER.shared.setdefault(group, {}).update(values)
    results: list[FileResult] = []
    mentions: dict[str, list[str]] = {}
    for group, path in chunk.items:
        result = _WORKER.analyse(group, path)
        results.append(result)
        mentions.update((word, _WORKER.of(group).mentions(word)) for word in result.mention_words)
    return _Analysed(results, mentions)


def _work_claimed(claim: _Claim) -> _Analysed:
    """Second phase, for a :class:`_Claim`: take a chunk (under the shared table's lock) and analyse it."""
    assert _TAKEN is not None
    me = os.getpid()
    with _TAKEN.get_lock():
        taken = _TAKEN.get_obj()
        free = [i for i in range(len(claim.chunks)) if not taken[i]]
        index = next((i for i in free if claim.summarised_by[i] == me), free[0])
        taken[index] = 1
    return _work(_Chunk(claim.chunks[index], claim.shared))


def _chunks(items: list[tuple[int, Path]], n: int) -> list[list[tuple[int, Path]]]:
    size = max(1, -(-len(items) // (n * 4)))
    return [items[i : i + size] for i in range(0, len(items), size)]


# -- the scan -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Group:
    """The files analysed under one configuration: its rules and its cache key part."""

    index: int
    config: Config
    rule_ids: tuple[str, ...]

    @property
    def rule_types(self) -> tuple[RuleInfo, ...]:
        """The group's rules as the pre-filter takes them (their classes are not needed to read files)."""
        return tuple(r for r in static_rules() if r.id in self.rule_ids)


class Groups:
    """The configuration groups of one scan, in the order their first file was met."""

    def __init__(self, source: ConfigSource) -> None:
        self.source = source
        self.all: list[Group] = []
        self._by_config: dict[int, Group] = {}
        self._by_dir: dict[str, Group] = {}
        self._by_spelling: dict[str, Group] = {}

    def of(self, path: Path) -> Group:
        """The group of the file at ``path`` (the configuration of the folder it sits in)."""
        # by the folder as the path spells it first: a walk hands over a folder's files one after
        # another, and ``abspath`` (the working directory, normalising) costs more than the lookup
        spelled = os.path.dirname(path)
        group = self._by_spelling.get(spelled)
        if group is None:
            folder = os.path.dirname(os.path.abspath(path))
            group = self._by_spelling[spelled] = self._by_dir.get(folder) or self.of_dir(Path(folder))
        return group

    def of_dir(self, directory: Path) -> Group:
        folder = os.path.abspath(directory)
        group = self._by_dir.get(folder)
        if group is None:
            config = self.source.for_dir(Path(folder))
            group = self._by_config.get(id(config))
            if group is None:
                group = Group(len(self.all), config, tuple(r.id for r in active_rule_infos(config)))
                self.all.append(group)
                self._by_config[id(config)] = group
            self._by_dir[folder] = group
        return group

    def rule_ids(self) -> list[str]:
        """Every rule some group runs, in catalog order."""
        wanted = {i for g in self.all for i in g.rule_ids}
        return [r.id for r in static_rules() if r.id in wanted]


@contextlib.contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """Run a scan with the cyclic garbage collector off, as it was before afterwards.

    A scan builds hundreds of thousands of objects (syntax trees, indexes) that live until it
    ends: every automatic full collection walks them all again and finds nothing to free, 8-10 %
    of a cold scan of 5,000 files. Reference counting still frees everything outside a cycle
    (peak memory 177 -> 180 MB on that tree); what is left in cycles is collected once, after
    the scan. Forked pool workers inherit the setting."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _preload_analysis() -> None:
    """Import the analysis and every rule (LibCST with them): what a worker's first file would
    import, ~0.3 s of every forked worker's start otherwise."""
    import importlib

    from resume_audit.rules import all_rules

    all_rules()
    for name in ("resume_audit.analysis.configs", "resume_audit.analysis.effects", "resume_audit.analysis.project",
                 "resume_audit.facts.parse", "resume_audit.frameworks.langchain_tools",
                 "libcst.native"):  # (LibCST's parser: imported on its first parse)
        importlib.import_module(name)


@_cyclic_gc_paused()
def scan(
    paths: Sequence[Path],
    config: Config | ConfigSource,
    root: Path,
    *,
    jobs: int | None = None,
    cache_dir: Path | None = None,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    follow_symlinks: bool = False,
    progress: Callable[[str, int, int | None], None] | None = None,
    exclude: Sequence[str] = (),
    respect_gitignore: bool = True,
    force_exclude: bool = False,
    repo: RepoPaths | None = None,
) -> ScanResult:
    """Scan ``paths`` and return findings and notifications (never raises for bad files).

    ``config``: one configuration for every file, or a source giving each folder its own
    (:class:`~resume_audit.config.tree.ConfigTree`).
    ``jobs``: worker processes (None: one per CPU; 1: in this process).
    ``cache_dir``: where per-file results are cached (None: no cache).
    ``progress``: told ``(phase, done, total)`` as files are read and analysed (see :mod:`resume_audit.reporters.progress`).
    ``exclude`` (relative to ``root``), ``respect_gitignore``, ``force_exclude``: which files are
    left out (:func:`~resume_audit.discovery.walk.discover`).
    ``repo``: the repository root fingerprints name files relative to (default: found from ``root``
    and the root configuration, see :mod:`resume_audit.discovery.repo_root`).
    """
    tell = progress or (lambda phase, done, total: None)
    source: ConfigSource = FixedConfig(config) if isinstance(config, Config) else config
    repo = repo or RepoPaths.for_scan(root, root_config(source, list(paths)).base_dir)
    # a tree where nothing changed since the last scan: its result, from stat calls alone
    replay = _replay_for(cache_dir, paths, source, root, repo, time_limit, max_file_bytes, follow_symlinks, exclude,
                         respect_gitignore, force_exclude)
    check = replay.check() if replay is not None else ReplayCheck()
    if check.result is not None:
        return check.result
    # the files the last scan found, when no folder changed since (only some files' contents):
    # taken as they are, not walked again
    walk = check.walk or (WalkRecord() if replay is not None else None)
    notifications: list[Notification] = []
    groups = Groups(source)
    # files are read as the walk finds them (their bytes are what is analysed), before every
    # group is known: one configuration's rules, or -- when folders may have their own -- all
    # rules, narrowed to each file's group's when deciding what to parse
    fixed = source.config if isinstance(source, FixedConfig) else None
    rule_infos = static_rules(cache_dir)  # from the cache when it has them: no rule module is imported
    prefilter = prefilter_of(active_rule_infos(fixed) if fixed is not None else list(rule_infos))
    read_rule_ids = [r.id for r in prefilter.rules]
    group_of: dict[Path, Group] = {}
    discovered = 0
    files: list[SourceFile] = []
    hashes: dict[str, str] = {}
    sizes: dict[Path, int] = {}
    #: the bytes of every file read, once: project-wide text questions and the analysis reuse them
    corpus = Corpus()
    #: and, whole, those of the files the pre-filter matched (the ones likely to be parsed)
    raw_texts: dict[Path, bytes] = {}
    matches: dict[Path, FileMatch] = {}
    # what the last scan learned per file: an unchanged file is only stat-ed, never read
    table = FileTable(cache_dir, [__version__, tool_fingerprint(), ",".join(read_rule_ids)]) if cache_dir else None
    workers = jobs if jobs is not None else (os.cpu_count() or 1)
    walked: list[tuple[SourcePath, FileState | None]] = []
    #: every file's signature as it was before it was read (or found unchanged): what a replay checks
    signatures: dict[str, Signature | None] = {}
    found_paths = check.paths if check.paths is not None else discover(
        paths, root, exclude, follow_symlinks=follow_symlinks, problems=notifications, configs=source,
        respect_gitignore=respect_gitignore, force_exclude=force_exclude, record=walk)
    for source_path in found_paths:
        group_of[source_path.resolved] = groups.of(source_path.path)
        state = None
        if table is not None:
            with contextlib.suppress(OSError):
                state = table.known(str(source_path.resolved), os.stat(source_path.path))
        walked.append((source_path, state))
    # the files the table cannot vouch for are read (by reader processes when there are many), in
    # the order they were found; closed on the way out, not when collected: Ctrl-C or SIGTERM between
    # two files stops the readers now (a suspended generator lives on in the exception's traceback)
    # readers also say which files hold the words every scan searches the whole tree for: the
    # answers then come from them, once, not from a search of the text by every analysis worker
    presearched: dict[str, list[str]] | None = {word: [] for word in WHOLE_TREE_WORDS}
    preloaded = False
    with contextlib.closing(read_files([(sp.path, sp.resolved, sp.display) for sp, state in walked if state is None],
                                       prefilter, workers, WHOLE_TREE_WORDS)) as reads:
        for source_path, state in walked:
            discovered += 1
            if discovered % 256 == 0:
                tell("reading files", discovered, len(walked))
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
                        _preload_analysis()
                        preloaded = True
                if table is not None:
                    table.record(key, read.info, digest, raw, found, problem)
                corpus.add(source_path.resolved, raw)
                if not found.empty:
                    raw_texts[source_path.resolved] = raw
                size = len(raw)
            else:
                digest, found, size = state.hash, state.match, state.size
                signatures[key] = state.signature
                problem = state.notification(source_path.display)
                presearched = None  # a file not read: the readers' answers miss it
            module = check.modules.get(key) if check.modules is not None else None
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
    if not groups.all:  # nothing to scan: report the rules the configuration would have run
        groups.of_dir(common_dir(paths) if paths else root)
    rule_ids = groups.rule_ids()
    # a trigger bound to a framework counts only when some file uses it: known once all are read
    in_scan = frameworks_in_scan(matches.values())
    candidates: list[Path] = []
    for entry in files:
        match = matches.get(entry.path)
        if match is None or not prefilter.is_candidate(match, in_scan):
            continue
        group = group_of[entry.path]
        if len(group.rule_ids) < len(read_rule_ids) and not prefilter.is_candidate_for(group.rule_types, match, in_scan):
            continue  # worth parsing for another package's rules, not for its own
        size = sizes[entry.path]
        if size > max_file_bytes:
            notifications.append(
                Notification(
                    NotificationKind.SKIPPED,
                    f"{size / 1048576:.1f} MB is over the {max_file_bytes / 1048576:.1f} MB limit "
                    f"(generated code?); file skipped (raise it with --max-file-size)",
                    entry.display,
                )
            )
            continue
        candidates.append(entry.path)

    # everything a cached result depends on beyond its file and dependencies: the analysing code,
    # the rules, the configuration, which modules exist, the size limit (an oversized dependency is
    # not parsed), the report root (findings carry paths relative to it), the repository root
    # (fingerprints hash paths relative to it) and whether links are followed;
    # the configuration is the group's: a file's entry is keyed on the settings that applied to it
    module_set = _module_set(files)
    caches = [ResultCache(cache_dir, key_parts=[
        __version__, tool_fingerprint(), ",".join(g.rule_ids), g.config.fingerprint(), module_set,
        str(max_file_bytes), str(root.resolve()), str(follow_symlinks), ",".join(sorted(in_scan)), repo.anchor,
    ]) for g in groups.all] if cache_dir else None
    results: dict[Path, FileResult] = {}
    todo: list[tuple[int, Path]] = []
    texts = SourceBytes(raw_texts, hashes, corpus)
    mentions = Mentions(files, texts, table)
    if presearched is not None and candidates:
        mentions.remember({word: sorted(holding) for word, holding in presearched.items()})
    displays = {f.path: f.display for f in files}

    stores = {g.index: SummaryStore(cache_dir, caches[g.index].key, hashes, mentions)
              for g in groups.all} if cache_dir and caches else {}

    def make_analyzer(g: Group) -> Analyzer:
        return Analyzer(files, g.config, list(g.rule_ids), time_limit, hashes, texts, max_file_bytes, mentions,
                        in_scan=in_scan, repo=repo, summaries=stores.get(g.index))

    # built on first need: checking a cached result's summary dependencies asks the group's project
    # (which reads the stored summaries, and parses only modules whose summaries are stale)
    analyzers = _Analyzers(groups.all, make_analyzer)
    # first from the stored summaries alone: a warm scan then imports no analysis at all
    stored = {index: StoredDigests(store, mentions) for index, store in stores.items()}
    for checked, path in enumerate(candidates, 1):
        if caches and checked % 256 == 0:
            tell("checking the cache", checked, len(candidates))
        index = group_of[path].index
        cached = caches[index].get(str(path), displays[path], hashes, mentions,
                                   functools.partial(_summary_digest, analyzers, stored.get(index), index)) if caches else None
        if cached is not None:
            results[path] = cached
        else:
            todo.append((index, path))
    todo.sort(key=lambda item: item[0])  # a worker's chunk then mostly needs one group's analyser

    if workers > 1 and len(todo) >= PARALLEL_THRESHOLD:
        from resume_audit.engine.processpool import pool_context, stop_pool

        context = pool_context()
        forked = context.get_start_method() == "fork"
        setup = _WorkerSetup(files, groups.all, time_limit, hashes, texts if forked else texts.loaded, max_file_bytes, in_scan,
                             repo, cache_dir, [c.key for c in caches] if caches else None, mentions if forked else None)
        import concurrent.futures

        chunks = _chunks(todo, workers)
        taken: SynchronizedArray[int] = context.Array("b", len(chunks))
        pool = concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_init_worker,
                                                      initargs=(setup, taken))
        try:
            by_display = {f.display: f.path for f in files}
            # first the per-module summaries every file's whole-project questions read, split
            # across the workers; then the files, each worker handed every summary and analysing
            # the files it summarised (it holds their parsed modules) before any other's
            shared: dict[int, dict[tuple[str, Path], object]] = {}
            summarised_by: list[int] = []
            summarised_files = 0
            for items, summarised in zip(chunks, pool.map(_summarise, chunks)):
                for index, kind, where, value in summarised.values:
                    shared.setdefault(index, {})[(kind, where)] = value
                summarised_by.append(summarised.worker)
                summarised_files += len(items)
                tell("summarising", summarised_files, len(todo))
            claim = _Claim(chunks, summarised_by, shared)
            for analysed in pool.map(_work_claimed, [claim] * len(chunks)):
                mentions.remember(analysed.mentions)
                for r in analysed.results:
                    path = by_display[r.display]
                    results[path] = r
                    tell("analysing", len(results), len(candidates))
                    if caches:  # as it arrives: a scan killed half-way keeps what it did
                        caches[group_of[path].index].put(str(path), hashes[str(path)], r, mentions)
        except BaseException:
            # Ctrl-C, SIGTERM (the CLI raises it here), a failure: stop the workers now rather than
            # letting the executor's exit wait for every queued chunk
            stop_pool(pool)
            raise
        pool.shutdown()
    elif todo:
        for index, path in todo:
            results[path] = analyzers.analyse(index, path)
            tell("analysing", len(results), len(candidates))
            if caches:
                caches[index].put(str(path), hashes[str(path)], results[path], mentions)

    if table is not None:  # after the analysis: the words it searched for are learned by now
        table.save(hashes)
    findings: list[Finding] = []
    suppressed = 0
    comments: dict[tuple[str, ...], dict[str, list[SuppressionComment]]] = {}  # by the rules run on the file
    uses: set[SuppressionUse] = set()
    seen: set[tuple] = set()
    noted = {(n.kind, n.path, n.line, n.message) for n in notifications}
    for path in candidates:
        r = results[path]
        for f in r.findings:  # a finding in a shared helper can be reached from two files
            ident = (f.rule_id, f.span, f.fingerprint)
            if ident not in seen:
                seen.add(ident)
                findings.append(f)
        for n in r.notifications:  # a slow dependency's timeout can come with several files: once
            if (n.kind, n.path, n.line, n.message) not in noted:
                noted.add((n.kind, n.path, n.line, n.message))
                notifications.append(n)
        suppressed += r.suppressed
        uses.update(r.suppressions_used)
        if r.suppression_comments and not _failed(r):
            # a comment is judged against the rules its own folder's configuration runs
            comments.setdefault(tuple(group_of[path].rule_ids), {})[r.display] = r.suppression_comments
    known_ids = [rule.id for rule in rule_infos]
    for ran, in_files in comments.items():
        notifications.extend(unused_suppressions(in_files, uses, ran, known_ids))
    findings.sort(key=lambda f: f.sort_key)
    notifications, unresolved = summarise_unresolved(notifications)
    notifications.sort(key=lambda n: (n.path or "", n.line or 0, n.kind.value))
    result = ScanResult(
        category="scan/" + ",".join(sorted(_shown(p, root) for p in paths)),
        unresolved_imports=unresolved,
        findings=findings,
        notifications=notifications,
        files_scanned=discovered,
        root=str(root),
        rules_run=tuple(rule_ids),
        suppressed=suppressed,
        files_analysed=len(candidates),
    )
    if replay is not None and walk is not None and table is not None:
        modules = {str(f.path): (f.module_name, f.is_package) for f in files}
        replay.save(result, walk, [(sp, signatures.get(str(sp.resolved)), modules.get(str(sp.resolved))) for sp, _ in walked],
                    table.started, complete=all(r.complete for r in results.values()))
    return result


def _replay_for(cache_dir: Path | None, paths: Sequence[Path], source: ConfigSource, root: Path, repo: RepoPaths,
                *options: object) -> ScanReplay | None:
    """Where this scan's result is kept for a scan of the same, unchanged tree (None: no cache, or
    a configuration source whose inputs cannot be told unchanged)."""
    fingerprint = source_fingerprint(source) if cache_dir is not None else None
    if cache_dir is None or fingerprint is None:
        return None
    return ScanReplay(cache_dir, replay_key(__version__, tool_fingerprint(), paths, root, fingerprint, repo.anchor,
                                            [tuple(o) if isinstance(o, (list, tuple)) else o for o in options]))


def _summary_digest(analyzers: _Analyzers, stored: StoredDigests | None, group: int, key: str) -> str | None:
    """The current digest of a summary part a cached result of ``group`` depended on: from the
    stored summaries when they are all still valid, else from the group's analysis. Computing a
    stale summary parses the modules it rests on: on the per-file time limit, and a module that
    is too slow, or a bug, makes the result a miss (its analysis then reports the problem)."""
    if group in analyzers.unsure:
        return None
    if stored is not None:
        try:
            return stored.summary_digest(key)
        except Exception:  # StaleSummary, or a damaged entry: the analysis decides
            pass
    analyzer = analyzers.of(group)
    known = analyzer.project.known_digest(key)
    if known is not None:
        return known[0]  # most parts are asked by every cached result: no timer for a memo hit
    analyzer._incomplete = False
    try:
        with _Alarm(analyzer.time_limit):
            digest = analyzer.project.summary_digest(key)
    except (_TimeLimit, RecursionError, Exception):
        digest = None
        analyzer._incomplete = True
    finally:
        analyzer._dependency_notes = []
    if analyzer._incomplete:
        # the project now holds answers computed without that module: no later check of this
        # group's cached results may rest on them
        analyzers.unsure.add(group)
        return None
    return digest


def _failed(result: FileResult) -> bool:
    """Whether the file's own analysis timed out or hit a bug: its comments are not judged (the
    findings they suppress may be the ones that were lost)."""
    return any(n.path == result.display and n.kind in (NotificationKind.TIMEOUT, NotificationKind.INTERNAL_ERROR)
               for n in result.notifications)


def _shown(path: Path, root: Path) -> str:
    """A scanned path as the category names it: relative to the root when under it."""
    try:
        rel = path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()
    return rel or "."


def summarise_unresolved(notifications: list[Notification]) -> tuple[list[Notification], int]:
    """Fold the per-file unresolved-import notes (cached with each file's result) into one
    notification per scan: a count and two examples, so a user knows tracing was incomplete
    without a line per import."""
    per_file = [n for n in notifications if n.kind is NotificationKind.UNRESOLVED_IMPORTS]
    if not per_file:
        return notifications, 0
    rest = [n for n in notifications if n.kind is not NotificationKind.UNRESOLVED_IMPORTS]
    pairs = sorted((n.path or "", name) for n in per_file for name in n.message.split())
    examples = "; ".join(f"`{name}` in {path}" for path, name in pairs[:2])
    files = len({path for path, _ in pairs})
    rest.append(
        Notification(
            NotificationKind.UNRESOLVED_IMPORTS,
            f"{len(pairs)} project import(s) in {files} file(s) matched no file of the scan (e.g. {examples}): "
            "effects and graphs behind them were not traced. Scan the folder the app is run from, "
            "or include the missing modules.",
            None,
            level=Severity.WARNING,
        )
    )
    return rest, len(pairs)


def _module_set(files: Sequence[SourceFile]) -> str:
    """Fingerprint of which module names exist: a new module can resolve an import that
    did not resolve before, which must invalidate cached results."""
    return hashlib.blake2b("\n".join(sorted({f.module_name for f in files})).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
