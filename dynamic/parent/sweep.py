"""``crash_sweep``: the dynamic stage's Python API.

One uninterrupted run first (the reference, and the list of kill points);
then every probe of :mod:`resume_audit.dynamic.probes` lays out its cells, their
jobs run in parallel on a thread pool (each cell in its own temporary
directory with its own store and ledger, children started through
:mod:`resume_audit.dynamic.parent.workbench`), and the slots resolve in the report's
stable order. The parent never imports the user's code.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Callable

from resume_audit.dynamic import lifetime
from resume_audit.dynamic.adapters import REGISTRY, adapter_for, installed, sniff
from resume_audit.dynamic.cells import DRY_RUN, ERROR, PASS, Cell, CellKind, DryRunWitness, Gate, Reference
from resume_audit.dynamic.child_result import ChildResult
from resume_audit.dynamic.confinement import ConfinementPolicy
from resume_audit.dynamic.effect_spec import NO_STUB, TYPED_STUB, EffectSpec, EffectSpecError
from resume_audit.dynamic.environment import ChildEnvironment
from resume_audit.dynamic.killpoints import CRASH_MODES, Event
from resume_audit.dynamic.ledger import Ledger
from resume_audit.dynamic.llm_script import LlmScript, LlmScriptError
from resume_audit.dynamic.parent.build import Locator, build_findings
from resume_audit.dynamic.parent.doctor import probe
from resume_audit.dynamic.parent.notes import Note, collect_notes, notifications
from resume_audit.dynamic.parent.runner import ChildRun, kill_all
from resume_audit.dynamic.parent.stub_artefacts import drop_stub_artefacts
from resume_audit.dynamic.parent.workbench import SweepCancelled, Workbench
from resume_audit.dynamic.probes import CellOutcome, Planning, Slot, cell_kinds, registry, validity
from resume_audit.dynamic.protocol import SweepProtocol
from resume_audit.dynamic.report import SweepReport
from resume_audit.dynamic.request import Shard, SweepRequest
from resume_audit.dynamic.shard import DryFacts, ShardPart, SweepHeader
from resume_audit.dynamic.spec import AUTO_INPUT, RunSpec
from resume_audit.dynamic.target import TargetError, TargetSpec
from resume_audit.dynamic.values import derive_fork_value, to_jsonable
from resume_audit.findings import Notification, NotificationKind, Severity

__all__ = [
    "crash_sweep",
    "AUTO_INPUT",
    "NO_STUB",
    "SweepRequest",
    "Shard",
    "SweepCancelled",
    "SweepUsageError",
    "TooFewAnswers",
    "TargetError",
    "CELL_KINDS",
    "BACKENDS",
]

BACKENDS = ("sqlite", "postgres", "memory", "custom")


def __getattr__(name: str) -> Any:
    if name == "CELL_KINDS":  # the ``--cells`` names, read when asked: a probe registered later is among them
        return tuple(str(kind) for kind in cell_kinds())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


PG_DSN_ENV = "RESUME_AUDIT_PG_DSN"

#: progress(done, total, label)
Progress = Callable[[int, int, str], None]


class SweepUsageError(ValueError):
    """Bad arguments to the sweep (the CLI's exit code 2)."""


class ConfinementUnavailable(SweepUsageError):
    """``--require-confinement`` and the kernel cannot confine the children here (exit 2, with the reason)."""


class TooFewAnswers(SweepUsageError):
    """The program parked more often than there are ``--resume`` values (``audit`` then tries answers)."""


def llm_script_of(value: Any, cwd: str | None = None) -> LlmScript | None:
    """``stub_llm`` as given (a file relative to ``cwd``, ``"plain"``, a parsed script or its data) as a script."""
    if value is None or isinstance(value, LlmScript):
        return value
    if isinstance(value, (str, os.PathLike)):
        path = os.fspath(value)
        if cwd and not os.path.isabs(path) and os.path.exists(os.path.join(cwd, path)):
            path = os.path.join(cwd, path)
        return LlmScript.load(path)
    return LlmScript.parse(value)


def _versions(framework: str) -> dict[str, str]:
    out = {}
    for dist in adapter_for(framework).distributions:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    return out


def target_source(spec: TargetSpec) -> str:
    """The target module's source text, found without importing it (the parent never runs user code)."""
    path = spec.file
    if path is None:
        from importlib.machinery import PathFinder

        search = [spec.path_entry]
        found = None
        for i, part in enumerate(spec.module.split(".")):
            found = PathFinder.find_spec(part, search)
            if found is None:
                return ""
            search = list(found.submodule_search_locations or [])
        path = found.origin if found is not None else None
    try:
        with open(path or "", encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def resolve_framework(spec: TargetSpec, framework: str | None) -> str | None:
    """The framework to prepare children for: the given one, else the only one the target's source imports."""
    if framework is not None:
        if framework not in REGISTRY:
            raise SweepUsageError(f"unknown framework {framework!r}; choose one of {', '.join(REGISTRY)}")
        return framework
    found = sniff(target_source(spec))
    missing = [f for f in found if not installed(f)]
    if missing:
        raise TargetError(
            f"{spec.text} imports {' and '.join(missing)}, which is not installed in this environment "
            f"({sys.executable}); the sweep runs the program, so install it here: "
            f"pip install 'resume-audit[{','.join(missing)}]'"
        )
    return found[0] if len(found) == 1 else None


def crash_sweep(target: "str | SweepRequest", *, progress: Progress | None = None, **options: Any) -> SweepReport:
    """Crash-sweep the program ``target`` and check the resume contract.

    ``target`` is a :class:`SweepRequest`, or its ``target`` string with the
    request's other fields as keyword arguments (``effects``, ``input``,
    ``resume``, ``stub``, ``stubs``, ``stub_llm``, ``cells``, ``shard`` ...; see
    :class:`SweepRequest`). The target is ``path/to/file.py:attr`` or
    ``package.module:attr`` naming a LangGraph ``StateGraph`` builder, compiled
    graph or factory taking a checkpointer; a CrewAI ``Flow`` subclass or
    factory; a LlamaIndex ``Workflow`` subclass, instance or factory; or a
    pydantic-graph ``Graph`` with its start node (see
    :mod:`resume_audit.frameworks.pydantic_graph.adapter`). The framework is detected
    (``framework`` overrides). ``progress(done, total, label)`` is told of every
    finished cell.

    Raises :class:`TargetError` when the target does not load, is not a graph,
    or needs arguments it cannot get, and :class:`SweepUsageError` for bad
    arguments. A graph that hangs, raises, exits or spawns processes is
    reported in the returned :class:`SweepReport`, never raised.
    """
    if isinstance(target, SweepRequest):
        if options:
            raise SweepUsageError("pass either a SweepRequest or keyword options, not both")
        request = target
    else:
        try:
            request = SweepRequest(target, **options)
        except TypeError as exc:
            raise SweepUsageError(str(exc)) from None
        except ValueError as exc:
            raise SweepUsageError(str(exc)) from None
    return _sweep(request, progress)


@dataclass
class _Prepared:
    """A validated request: what every child runs, and the report's header."""

    request: SweepRequest
    run: RunSpec
    tspec: TargetSpec
    backend: str
    dsn: str | None
    wanted: frozenset[CellKind]
    modes: tuple[str, ...]
    protocol: SweepProtocol
    cwd: str


def _prepare(request: SweepRequest) -> _Prepared:
    """Every usage error, raised before a child starts."""
    backend, dsn, saver = request.backend, request.dsn, request.saver
    try:
        llm_script = llm_script_of(request.stub_llm, request.cwd)
    except LlmScriptError as exc:
        raise SweepUsageError(str(exc)) from None
    if backend not in BACKENDS:
        raise SweepUsageError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if request.racers < 2:
        raise SweepUsageError("--racers must be at least 2")
    if request.timeout <= 0:
        raise SweepUsageError("--timeout must be positive")
    if request.memory_limit < 0 or (0 < request.memory_limit < 512):
        raise SweepUsageError("--memory-limit must be 0 (none) or at least 512 MB: a framework alone needs about 450")
    if saver is not None:  # a user's BaseCheckpointSaver factory, "package.module:factory" (LangGraph)
        if ":" not in saver:
            raise SweepUsageError(f"--saver {saver!r}: expected package.module:factory")
        backend, dsn = "custom", saver
    modes = tuple(m for m in CRASH_MODES if m in set(request.crash_modes))
    if not modes or set(request.crash_modes) - set(CRASH_MODES):
        raise SweepUsageError(f"crash modes must be among {', '.join(CRASH_MODES)}")
    kinds = tuple(str(kind) for kind in cell_kinds())
    wanted = set(kinds if request.cells is None else request.cells)
    unknown = wanted - set(kinds)
    if unknown:
        raise SweepUsageError(f"unknown cell kind(s) {sorted(unknown)}; choose from {', '.join(kinds)}")
    if backend == "postgres":
        dsn = dsn or os.environ.get(PG_DSN_ENV)
        if not dsn:
            raise SweepUsageError(f"--backend postgres needs --dsn (or ${PG_DSN_ENV})")
        try:
            import psycopg

            psycopg.connect(dsn, connect_timeout=10).close()
        except Exception as exc:
            raise SweepUsageError(f"cannot connect to PostgreSQL at the given DSN: {exc}") from None
    cwd = os.path.abspath(os.fspath(request.cwd)) if request.cwd is not None else os.getcwd()
    if not os.path.isdir(cwd):
        raise SweepUsageError(f"cwd {cwd!r} is not a directory")
    tspec = TargetSpec.parse(request.target, cwd)
    hint = resolve_framework(tspec, request.framework)
    try:
        effect_specs = tuple(EffectSpec.parse(e) for e in request.effects)
        read_specs = tuple(EffectSpec.parse(e) for e in request.stub_reads)
    except EffectSpecError as exc:
        raise SweepUsageError(str(exc)) from None
    stubs = request.stubs or {}
    named = {f"{e.module}:{e.attr}" for e in effect_specs + read_specs} | {e.display for e in effect_specs + read_specs}
    stray_stubs = sorted(
        k for k in stubs if k not in named and f"{EffectSpec.parse(k).module}:{EffectSpec.parse(k).attr}" not in named
    )
    if stray_stubs:
        raise SweepUsageError(f"a stub is given for {', '.join(stray_stubs)}, which is not an --effect of this sweep")
    resume = tuple(request.resume)
    fork_value = (
        request.fork_resume if request.fork_resume is not None else (derive_fork_value(resume[0]) if resume else None)
    )
    per_effect = tuple((f"{EffectSpec.parse(k).module}:{EffectSpec.parse(k).attr}", v) for k, v in stubs.items())
    config = dict(request.config or {})
    bad_names = [n for n in request.pass_env if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n)]
    if bad_names:
        raise SweepUsageError(f"--pass-env takes a variable's name, e.g. --pass-env DATABASE_URL; got {bad_names[0]!r}")
    run = RunSpec(
        tspec,
        effect_specs,
        request.input,
        resume,
        fork_value,
        config,
        request.stub,
        request.allow_network,
        hint,
        per_effect,
        llm_script.to_data() if llm_script is not None else None,
        request.memory_limit,
        factory_kwargs=tuple((request.factory_kwargs or {}).items()),
        reads=read_specs,
        env=tuple(sorted((str(k), str(v)) for k, v in (request.env or {}).items())),
        environment=ChildEnvironment.build(os.environ, request.pass_env),
        confinement=ConfinementPolicy.from_environ(
            os.environ, allow_network=request.allow_network, require=request.require_confinement
        ),
    )
    if request.require_confinement:  # fail closed before any child runs the program, with the reason
        state = probe(run.confinement)
        if not state.sufficient:
            raise ConfinementUnavailable(f"--require-confinement: the program was not run: {state.shortfall()}")
    synthesised = request.input is AUTO_INPUT
    protocol = SweepProtocol(
        input=None
        if synthesised
        else to_jsonable(request.input),  # filled in from the uninterrupted run when synthesised
        resume=to_jsonable(list(resume)),
        fork_resume=to_jsonable(fork_value),
        effects=[e.display for e in effect_specs],
        stub=None if request.stub is NO_STUB else "typed" if request.stub is TYPED_STUB else to_jsonable(request.stub),
        stub_reads=[e.display for e in read_specs],
        stubs={k: to_jsonable(v) for k, v in per_effect},
        config=to_jsonable(config),
        cells=sorted(wanted),
        input_synthesised=synthesised,
        stub_llm=llm_script.to_data() if llm_script is not None else None,
        crash_modes=modes,
    )
    return _Prepared(request, run, tspec, backend, dsn, frozenset(CellKind(w) for w in wanted), modes, protocol, cwd)


def _run_jobs(
    bench: Workbench, slots: list[Slot], done: int, total: int, progress: Progress | None
) -> dict[str, CellOutcome]:
    """Every slot's job: the pooled ones in parallel, then the ``alone`` ones one at a time."""
    outcomes: dict[str, CellOutcome] = {}
    pool = ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2), thread_name_prefix="resume-audit-cell")

    def finished(label: str, outcome: CellOutcome) -> None:
        nonlocal done
        outcomes[label] = outcome
        done += 1
        if progress:
            progress(done, total, label.split(":", 1)[-1])

    try:
        futures = {pool.submit(s.job): s.label for s in slots if s.job is not None and not s.alone}
        for fut in as_completed(futures):
            finished(futures[fut], fut.result())
        for s in slots:
            if s.job is not None and s.alone:
                finished(s.label, pool.submit(s.job).result())
    except BaseException:
        # Ctrl-C or a failure in the parent: start nothing new, kill what runs, do not wait for it.
        bench.cancelled.set()
        kill_all(bench.root)
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return outcomes


def _shard_slots(slots: list[Slot], shard: Shard) -> list[Slot]:
    """This shard's jobs: whole groups, dealt round-robin over the sweep's stable job order."""
    keys = list(dict.fromkeys(s.group for s in slots if s.job is not None))
    taken = {key for position, key in enumerate(keys) if shard.takes(position)}
    return [s for s in slots if s.job is None or s.group in taken]


def _dry_failed(
    report: SweepReport, prep: _Prepared, dry: ChildRun, notes: list[Note], progress: Progress | None
) -> SweepReport:
    """The uninterrupted run did not complete: nothing to compare with, report why (and any invalid state it left)."""
    result = dry.result or ChildResult("dry", "run")
    report.complete = False
    why = dry.failure_text()
    report.cells.append(Cell(DRY_RUN, "uninterrupted run", ERROR, detail=why, seconds=dry.seconds))
    notes = list(notes)
    if validity.kind in prep.wanted and result.invalid:
        # what the failed run persisted is still worth reporting (a mid-graph invalid write)
        report.cells.append(validity.judge([("uninterrupted run", list(result.invalid))], False, result.schema))
        notes = sorted({*notes, *drop_stub_artefacts(report.cells, notes)})
        report.findings = build_findings(
            report.cells, Locator(result.nodes, result.target_location, prep.cwd), prep.tspec.text
        )
    kind = NotificationKind.TIMEOUT if dry.timed_out else NotificationKind.SKIPPED
    report.notifications = notifications(notes) + [
        Notification(
            kind,
            f"the uninterrupted run of {prep.tspec.text} did not complete ({why}); nothing was swept",
            level=Severity.ERROR,
        )
    ]
    if progress:
        progress(1, 1, "uninterrupted run failed")
    return report


def _sweep(request: SweepRequest, progress: Progress | None) -> SweepReport:
    started = time.monotonic()
    prep = _prepare(request)
    root = lifetime.new_root()
    bench = Workbench(prep.run, prep.backend, prep.dsn, request.timeout, root)
    framework = prep.run.framework
    report = SweepReport(
        target=prep.tspec.text,
        backend=prep.backend,
        framework=framework or "unknown",
        versions=_versions(framework) if framework else {},
        protocol=prep.protocol,
        cells=[],
        findings=[],
        cwd=prep.cwd,
    )
    all_runs: list[ChildRun] = []
    cell_dirs: list[str] = []
    try:
        # -- the reference: one uninterrupted run, its events are the kill points ---------------
        dry_dir = bench.cell_dir("dry-run")
        cell_dirs.append(dry_dir)
        dry = bench.child(bench.spec("dry", dry_dir, bench.store(dry_dir), "run", 0))
        all_runs.append(dry)
        result = dry.result or ChildResult("dry", "run")
        if result.target_error:
            hint = prep.run.environment.hint(result.target_error)  # imported fine but for a withheld variable
            raise TargetError(result.target_error + (f" ({hint})" if hint else ""))
        if result.framework and result.framework != report.framework:
            report.framework = result.framework
            report.versions = _versions(result.framework)
        report.plane = result.describe
        if result.confinement is not None:
            report.confinement = result.confinement.summary()
        if prep.protocol.input_synthesised:
            report.protocol = dataclasses.replace(report.protocol, input=to_jsonable(result.input_used))
        if result.protocol_error:
            raise TooFewAnswers(result.protocol_error)
        if not dry.completed:
            return _dry_failed(report, prep, dry, collect_notes(all_runs, cell_dirs), progress)
        ledger = Ledger(os.path.join(dry_dir, "ledger.sqlite"))
        try:
            ref = Reference.from_dry(result, ledger, prep.run.resume)
            report.effect_sites = frozenset(r.site for r in ledger.effects(phases=["run"]) if r.site)
            points = sorted((e for e in ref.events if e.kind != "park"), key=Event.sort_key)
            parks = sorted((e for e in ref.events if e.kind == "park"), key=Event.sort_key)
            planning = Planning(
                bench,
                ref,
                result,
                ledger,
                prep.wanted,
                prep.modes,
                tuple(sorted({request.racers, 4})),
                prep.backend,
                points,
                parks,
                # every pause point is probed, not only the first (a graph that parks nowhere
                # still gets one cell per probe, which says so)
                Gate.of_protocol(ref.parks, prep.run.resume, request.fork_resume) or [Gate.first()],
            )
            dry_cell = Cell(
                DRY_RUN,
                "uninterrupted run",
                PASS,
                seconds=dry.seconds,
                effects={k: (v, v) for k, v in sorted(ref.effects.items())},
                nodes={k: (v, v) for k, v in sorted(ref.nodes.items())},
                final_state_match=True,
                detail=f"{len(points)} kill points, {len(parks)} park(s), final step {ref.final_step}",
                witness=DryRunWitness(ref.final_state, ref.parks),
            )
            # -- plan: every probe lays out its slots, in the report's stable order -------------
            slots = [Slot("dry-run", cell=dry_cell)]
            for probe in registry():
                if any(kind in prep.wanted for kind in probe.kinds):
                    slots += probe.plan(planning)
        finally:
            ledger.close()
        if not result.store_used:
            report.notifications.append(
                Notification(
                    NotificationKind.INFO,
                    f"the graph did not persist through the sweep's {prep.backend} checkpointer ({result.graph_how}); "
                    "checkpointer kill points are unavailable and a crash loses whatever the graph's own saver kept in memory",
                )
            )
        report.kill_points = len(points)
        # -- run: each job once (a slot another probe also planned is not run twice) -----------
        jobs = list({s.label: s for s in slots if s.job is not None}.values())
        if request.shard is not None:
            jobs = _shard_slots(jobs, request.shard)
        if progress:
            progress(1, len(jobs) + 1, "uninterrupted run")
        outcomes = _run_jobs(bench, jobs, 1, len(jobs) + 1, progress)
        for outcome in outcomes.values():
            all_runs.extend(outcome.runs)
            cell_dirs.append(outcome.cell_dir)
        # -- resolve every shown slot, in order: filled where this run swept it ---------------
        filled = [(s.label, s.resolve(outcomes)) for s in slots if s.shown]
        report.cells = [c for _label, c in filled if c is not None]
        notes = collect_notes(all_runs, cell_dirs)
        notes = sorted({*notes, *drop_stub_artefacts(report.cells, notes)})
        if request.shard is not None:
            report.shard = ShardPart(
                shard=request.shard,
                header=SweepHeader(
                    report.target,
                    report.framework,
                    report.backend,
                    report.versions,
                    report.protocol,
                    report.plane,
                    report.complete,
                    report.kill_points,
                ),
                order=[label for label, _c in filled],
                cells=[(label, c) for label, c in filled if c is not None],
                validity_sources=validity.sources(outcomes) if validity.kind in prep.wanted else [],
                dry=DryFacts(list(result.invalid), result.schema, dict(result.nodes), result.target_location),
                notes=notes,
                notifications=list(report.notifications),
                cwd=prep.cwd,
            )
        report.findings = build_findings(
            report.cells, Locator(result.nodes, result.target_location, prep.cwd), prep.tspec.text
        )
        report.nodes = dict(result.nodes)
        report.notifications = notifications(notes) + report.notifications
        return report
    finally:
        kill_all(root)  # on success a no-op; on Ctrl-C or a parent error, no child outlives the sweep
        report.timings = {
            "total_s": time.monotonic() - started,
            "children": float(len(all_runs)),
            "child_s": sum(r.seconds for r in all_runs),
        }
        bench.drop_schemas()
        if request.keep_artifacts:
            report.artifacts = root
        else:
            shutil.rmtree(root, ignore_errors=True)
