"""``resume-audit audit``: scan, find the entry points, sweep each, judge every finding.

The parent never imports user code: entry points are found by reading it
(:mod:`.entrypoints`), and each sweep imports the program only in its
sandboxed children (:func:`resume_audit.dynamic.crash_sweep`).
"""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from resume_audit.api import ScanRequest, default_root, run_scan
from resume_audit.audit.confirm import SweptEntry, judge
from resume_audit.audit.entrypoints import EntryPoint, discover
from resume_audit.audit.forks import fork_sites
from resume_audit.audit.modules import Modules
from resume_audit.audit.needs import explain
from resume_audit.audit.plan import (
    ANSWER_CANDIDATES,
    MAX_PARKS,
    Effect,
    TargetConfig,
    effect_of,
    effects_for,
    load_config,
)
from resume_audit.audit.sinks import effect_sinks, sink_analyzer
from resume_audit.discovery.walk import discover as discover_files
from resume_audit.findings import Confirmation, Finding, Notification, NotificationKind, ScanResult

if TYPE_CHECKING:
    from resume_audit.dynamic.report import SweepReport

#: progress(done, total, what): told before each entry point's sweep
Progress = Callable[[int, int, str], None]
#: finished(done, total, swept): told after each entry point's sweep (the CLI prints a line per entry point)
Finished = Callable[[int, int, SweptEntry], None]


@dataclass
class AuditRequest:
    paths: list[Path]
    select: list[str] | None = None
    ignore: list[str] | None = None
    exclude: list[str] = field(default_factory=list)
    #: seconds per child process of a sweep
    timeout: float = 60.0
    #: run the effects for real instead of recording stubs
    live_effects: bool = False
    #: restrict every sweep's probes (crash-sweep's ``--cells``)
    cells: list[str] | None = None
    jobs: int | None = None
    root: Path | None = None
    #: sweep only the entry points dealt to this slice (``resume-audit merge`` joins the slices)
    shard: Any = None
    #: ``--target module:attr``: sweep these instead of what discovery finds (and the config's ``targets``)
    targets: list[str] = field(default_factory=list)
    #: let the program open connections beyond loopback (its effects are still stubbed)
    allow_network: bool = False
    #: environment variables every sweep's children get beside the allow-list (with ``pass-env`` of the
    #: root ``[tool.resume-audit]`` table and of each entry point's audit table)
    pass_env: list[str] = field(default_factory=list)
    #: refuse to run any program when the kernel cannot confine the children here
    require_confinement: bool = False


class ConfinementUnavailableError(RuntimeError):
    """``--require-confinement`` and the kernel layers do not hold here: nothing was run (exit 2)."""


@dataclass
class AuditReport:
    entries: list[SweptEntry]
    findings: list[Finding]
    notifications: list[Notification]
    files_scanned: int
    seconds: float
    root: Path
    rules_run: tuple[str, ...] = ()
    shard: Any = None

    def count(self, confirmation: Confirmation) -> int:
        return sum(1 for f in self.findings if f.confirmation is confirmation)

    def to_scan_result(self) -> ScanResult:
        """The findings in the shape the shared reporters (text, JSON, SARIF, GitHub) take."""
        return ScanResult(
            findings=list(self.findings),
            notifications=list(self.notifications),
            files_scanned=self.files_scanned,
            root=str(self.root),
            rules_run=self.rules_run,
        )


def run_audit(request: AuditRequest, progress: Progress | None = None, finished: Finished | None = None) -> AuditReport:
    started = time.monotonic()
    if request.require_confinement:  # before anything of the user's runs: fail closed, with the reason
        from resume_audit.dynamic.confinement import ConfinementPolicy
        from resume_audit.dynamic.parent.doctor import probe

        state = probe(ConfinementPolicy.from_environ(os.environ, require=True))
        if not state.sufficient:
            raise ConfinementUnavailableError(f"--require-confinement: no program was run: {state.shortfall()}")
    root = (request.root or default_root(request.paths)).resolve()
    scanned = run_scan(
        ScanRequest(
            paths=list(request.paths),
            select=request.select,
            ignore=request.ignore,
            exclude=list(request.exclude),
            root=root,
            jobs=request.jobs,
            fail_on="never",
        )
    )
    static = scanned.result.findings
    sources = list(discover_files(request.paths, root, request.exclude))
    # one parse of each file for everything below: the effect model's project loads them, the rest reads them
    analyzer = sink_analyzer(sources, scanned.config)
    modules = Modules(analyzer.project.load)
    config = load_config(request.paths)
    entries = discover([(sp.path, sp.display) for sp in sources], root, modules, request.targets or config.targets)
    # `pass-env` of the project's [tool.resume-audit] table, then the command line's
    request = dataclasses.replace(request, pass_env=list(dict.fromkeys([*scanned.config.pass_env, *request.pass_env])))
    # every effect the plans may name, found once: the flagged ones, then the rest the effect model sees
    effects = [e for e in (effect_of(f, root, modules) for f in static) if e is not None]
    effects += effect_sinks(analyzer, sources, modules)
    swept: list[SweptEntry] = []
    sweepable = sorted(
        {e.framework for e in entries if e.framework and e.sweepable and not config.get(e.target, TargetConfig()).skip}
    )
    if sweepable:
        # one fork server for every sweep of the run, warm with each framework the project uses (the
        # first sweep's framework alone would leave the others to be imported in every child)
        from resume_audit.dynamic.adapters import installed
        from resume_audit.dynamic.parent.runner import context
        from resume_audit.dynamic.parent.workbench import preload_for

        context([m for fw in sweepable if installed(fw) for m in preload_for(fw)])
    for n, entry in enumerate(entries, start=1):
        if request.shard is not None and not request.shard.takes(n - 1):
            swept.append(SweptEntry(entry, why=f"swept by another shard than {request.shard}", elsewhere=True))
            continue
        if progress:
            progress(n, len(entries), entry.target)
        swept.append(_sweep_entry(entry, config.get(entry.target, TargetConfig()), effects, root, request, modules))
        if finished:
            finished(n, len(entries), swept[-1])
    from resume_audit.rules import all_rules

    confirmed_by = {r.id: r.confirmed_by for r in all_rules()}
    judged = judge(static, swept, confirmed_by, root, fork_sites(analyzer, sources, modules))
    findings = judged.findings
    notifications = list(scanned.result.notifications) + judged.notes
    for s in swept:
        if s.report is None and not s.elsewhere:
            notifications.append(
                Notification(
                    NotificationKind.SKIPPED, f"{s.entry.target} was not swept: {s.why}", s.entry.path, s.entry.line
                )
            )
    return AuditReport(
        swept,
        sorted(findings, key=lambda f: f.sort_key),
        notifications,
        scanned.result.files_scanned,
        time.monotonic() - started,
        root,
        tuple(sorted({*scanned.result.rules_run, *(f.rule_id for f in findings)})),
        request.shard,
    )


def _sweep_entry(
    entry: EntryPoint, cfg: TargetConfig, effects: list[Effect], root: Path, request: AuditRequest, modules: Modules
) -> SweptEntry:
    from resume_audit.dynamic.effect_spec import NO_STUB, TYPED_STUB
    from resume_audit.dynamic.parent.sweep import SweepUsageError, TargetError, crash_sweep
    from resume_audit.dynamic.spec import AUTO_INPUT

    if cfg.skip:
        return SweptEntry(entry, why=f"skipped by configuration: {cfg.skip}")
    if not entry.sweepable:
        return SweptEntry(entry, why=entry.why_not)
    started = time.monotonic()
    run_config = dict(cfg.config)
    for key, value in entry.run_config:  # what discovery read off the code (pydantic-graph: the first node)
        run_config.setdefault(key, value)
    options: dict[str, Any] = dict(
        effects=tuple(dict.fromkeys([*effects_for(entry, effects, root, modules), *cfg.effects])),
        input=cfg.input if cfg.input is not None else AUTO_INPUT,
        fork_resume=cfg.fork_resume,
        config=run_config,
        stub=NO_STUB if request.live_effects else TYPED_STUB,
        stubs=cfg.stubs or None,
        stub_reads=tuple(cfg.stub_reads),
        env=cfg.env or None,
        stub_llm=cfg.stub_llm or "plain",
        timeout=request.timeout,
        cwd=entry.root,
        framework=entry.framework or None,
        factory_kwargs=dict(entry.factory_kwargs) or None,
        allow_network=request.allow_network,
        pass_env=tuple(dict.fromkeys([*request.pass_env, *cfg.pass_env])),
        require_confinement=request.require_confinement,
    )
    try:
        if cfg.resume is not None:
            answers: tuple[Any, ...] = tuple(cfg.resume)
        else:
            answers, trial = _choose_answers(entry.target, options)
            if trial is not None and not trial.complete:  # the uninterrupted run itself fails: no sweep would do better
                why = explain(
                    trial.dry_run.detail if trial.dry_run is not None else "the uninterrupted run failed", entry.target
                )
                return SweptEntry(entry, trial, why, time.monotonic() - started, answers)
        report = crash_sweep(entry.target, resume=answers, cells=request.cells, **options)
    except (TargetError, SweepUsageError) as exc:
        why = explain(str(exc), entry.target)
        if "No module named" in why:
            why += " (audit runs the program: install its dependencies in the environment resume-audit runs in)"
        return SweptEntry(entry, why=why, seconds=time.monotonic() - started)
    why = "" if report.complete or report.dry_run is None else explain(report.dry_run.detail, entry.target)
    if cfg.resume is None and answers:
        _drop_guess_artefacts(report, answers)
    return SweptEntry(entry, report, why, time.monotonic() - started, answers)


def _drop_guess_artefacts(report: SweepReport, answers: tuple[Any, ...]) -> None:
    """An answer the audit guessed can break the state schema by itself (``True`` where the node stores a
    ``str``): an RA706 whose invalid value is one of the guessed answers says nothing about the program."""
    kept = [f for f in report.findings if not (f.rule_id == "RA706" and f.witness.get("value") in answers)]
    if len(kept) != len(report.findings):
        report.findings = kept
        report.notifications.append(
            Notification(
                NotificationKind.INFO,
                "schema violations caused by the guessed interrupt answers were left out; "
                "give the real answers in [tool.resume-audit.audit] to check them",
            )
        )


def _choose_answers(target: str, options: dict[str, Any]) -> tuple[tuple[Any, ...], SweepReport | None]:
    """The interrupt answers for a program nobody configured, and the trial run that decided them: none if it
    never parks, else the candidate whose uninterrupted run completes and runs the most effects (the approving
    branch). A trial that fails before any park is returned as it is: no answer changes it."""
    from resume_audit.dynamic.cells import DryRunWitness
    from resume_audit.dynamic.parent.sweep import SweepUsageError, TooFewAnswers, crash_sweep

    def dry(answers: tuple[Any, ...]) -> SweepReport:
        return crash_sweep(target, resume=answers, cells=[], **options)

    try:
        return (), dry(())
    except TooFewAnswers:
        pass  # it parks: try the usual answers
    best: tuple[tuple[int, int, int], tuple[Any, ...], SweepReport] | None = None
    for candidate in ANSWER_CANDIDATES:
        answers = (candidate,) * MAX_PARKS
        try:
            report = dry(answers)
        except SweepUsageError:
            continue
        cell = report.dry_run
        fired = sum(o for _e, o in cell.effects.values()) if cell is not None else 0
        ran = sum(o for _e, o in cell.nodes.values()) if cell is not None else 0
        score = (int(report.complete), fired, ran)
        if best is None or score > best[0]:
            # as many answers as the run took (static breakpoints take none)
            parks = cell.witness.parks if cell is not None and isinstance(cell.witness, DryRunWitness) else []
            taken = len({p.value_index for p in parks if not p.breakpoint}) if report.complete else MAX_PARKS
            best = (score, answers[:taken], report)
    return (best[1], best[2]) if best is not None else ((ANSWER_CANDIDATES[0],) * MAX_PARKS, None)
