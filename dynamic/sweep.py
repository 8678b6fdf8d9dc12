"""``crash_sweep``: the dynamic stage's Python API.

Orchestrates the cells of :mod:`auditor.dynamic.cells` over child processes
(:mod:`auditor.dynamic.runner`): one uninterrupted run first (the reference
and the list of kill points), then every other cell in parallel on a thread
pool, each cell in its own temporary directory with its own store and ledger.
The parent never imports the user's code.
"""

from __future__ import annotations

import os
import re
import secrets
import sys
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from functools import partial
from importlib import metadata
from typing import Any, Callable

from auditor.findings import Notification, NotificationKind, Severity

from .adapters.base import StoreSettings
from .adapters import REGISTRY, adapter_for, installed, sniff
from .build import Locator, build_findings
from .cells import (
    ERROR,
    NOT_APPLICABLE,
    PASS,
    Cell,
    Gate,
    Reference,
    completed,
    concurrent_name,
    failure_text,
    judge_concurrent,
    judge_fork,
    judge_interrupt_path,
    judge_recovery,
    judge_stray,
    judge_validity,
    judge_write_order,
)
from .effects import NO_STUB, EffectSpec, EffectSpecError
from .llm_stub import LlmScript, LlmScriptError
from .request import Shard, SweepRequest
from . import lifetime
from .killpoints import CRASH_MODES, DURABLE_KINDS, Event
from .ledger import Ledger
from .report import SweepReport
from .sharding import ShardPart
from .runner import ChildRun, kill_all, run_child, run_racers
from .spec import ChildSpec, RunSpec
from .target import TargetError, TargetSpec
from .values import derive_fork_value, to_jsonable

__all__ = ["crash_sweep", "NO_STUB", "SweepRequest", "Shard", "SweepUsageError", "TargetError", "CELL_KINDS", "BACKENDS"]

BACKENDS = ("sqlite", "postgres", "memory", "custom")
CELL_KINDS = ("interrupt", "crash", "parked", "write-order", "fork", "stray", "concurrent", "validity")
PG_DSN_ENV = "RESUME_AUDIT_PG_DSN"

#: progress(done, total, label)
Progress = Callable[[int, int, str], None]


class SweepUsageError(ValueError):
    """Bad arguments to the sweep (the CLI's exit code 2)."""


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


class SweepCancelled(Exception):
    """Raised in cell workers once the sweep has been abandoned."""


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


def preload_for(framework: str | None) -> list[str]:
    """Modules the fork server imports: the framework's, or every installed framework's when unknown."""
    if framework is not None:
        return adapter_for(framework).preload_modules()
    out: list[str] = []
    for name in REGISTRY:
        if installed(name):
            out.extend(adapter_for(name).preload_modules())
    return out


class _Sweep:
    """State of one sweep: where cells live, how children are started."""

    def __init__(self, run: RunSpec, backend: str, dsn: str | None, timeout: float, root: str) -> None:
        self.run = run
        self.backend = backend
        self.dsn = dsn
        self.timeout = timeout
        self.root = root
        self.token = secrets.token_hex(4)
        self.schemas: list[str] = []
        self.preload = preload_for(run.framework)
        self._n = 0
        self._lock = threading.Lock()
        #: set when the sweep is abandoned (Ctrl-C): no further child is started
        self.cancelled = threading.Event()

    def cell_dir(self, label: str) -> str:
        with self._lock:
            self._n += 1
            n = self._n
        slug = re.sub(r"[^A-Za-z0-9]+", "-", label).strip("-")[:60]
        path = os.path.join(self.root, f"{n:03d}-{slug}")
        os.makedirs(path, exist_ok=True)
        return path

    def store(self, cell_dir: str, write_order: str = "natural") -> StoreSettings:
        directory = os.path.join(cell_dir, "store")
        if self.backend == "sqlite":
            return StoreSettings("sqlite", os.path.join(cell_dir, "checkpoints.sqlite"), None, write_order, directory)
        if self.backend == "postgres":
            schema = f"ra_{self.token}_{os.path.basename(cell_dir)[:3]}"
            self.schemas.append(schema)
            return StoreSettings("postgres", self.dsn or "", schema, write_order, directory)
        if self.backend == "custom":
            return StoreSettings("custom", self.dsn or "", None, write_order, directory)
        return StoreSettings("memory", "", None, write_order, directory)

    def spec(self, role: str, cell_dir: str, store: StoreSettings, phase: str, n: int, **kw: Any) -> ChildSpec:
        return ChildSpec(role=role, run=self.run, cell_dir=cell_dir, workdir=os.path.join(cell_dir, f"p{n}-{role}"),
                         store=store, phase=phase, **kw)

    def child(self, spec: ChildSpec) -> ChildRun:
        if self.cancelled.is_set():
            raise SweepCancelled()
        return run_child(spec, self.preload, self.timeout)

    def racers(self, specs: list[ChildSpec]) -> list[ChildRun]:
        if self.cancelled.is_set():
            raise SweepCancelled()
        return run_racers(specs, self.preload, self.timeout)

    def drop_schemas(self) -> None:
        if not self.schemas or not self.dsn:
            return
        try:
            import psycopg

            with psycopg.connect(self.dsn, autocommit=True, connect_timeout=10) as conn:
                for schema in sorted(set(self.schemas)):
                    conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        except Exception:
            pass


def _crash_cell(sw: _Sweep, kind: str, point: Event, ref: Reference, write_order: str = "natural",
                mode: str = "sigkill", stray: bool = False) -> tuple[Cell, list[ChildRun], str]:
    """Crash at ``point`` (SIGKILL or an injected exception), recover in a fresh interpreter, judge.

    With ``stray``, the recovering process then delivers the restore once more
    (the stray probe of frameworks without parks); the judged cell is then the
    stray one.
    """
    cell_dir = sw.cell_dir(f"{kind}-{mode}-{point.name}" + ("-stray" if stray else ""))
    store = sw.store(cell_dir, write_order)
    crash = sw.child(sw.spec("crash", cell_dir, store, "crash", 1, kill_at=point.name, extra={"crash_mode": mode}))
    runs = [crash]
    recover = None
    if crash.crashed:
        recover = sw.child(sw.spec("recover", cell_dir, store, "recover", 2, extra={"stray": stray}))
        runs.append(recover)
    ledger = Ledger(os.path.join(cell_dir, "ledger.sqlite"))
    try:
        if stray:
            if recover is None or not completed(recover):
                why = failure_text(recover) if recover is not None else "the kill point was not reached"
                cell = Cell("stray", "restore again after a successful restore", ERROR, detail=f"no successful restore to repeat: {why}")
            else:
                cell = judge_stray(recover.result or {}, ledger, ref, name="restore again after a successful restore")
                cell.witness["after_kill_point"] = point.name
        else:
            cell = judge_recovery(kind, point, crash, recover, ledger, ref)
    finally:
        ledger.close()
    return cell, runs, cell_dir


def _fork_cell(sw: _Sweep, form: str, gate: Gate) -> tuple[Cell, list[ChildRun], str]:
    cell_dir = sw.cell_dir(f"fork-{form}-gate{gate.index}")
    extra: dict[str, Any] = {"gate": gate.index}
    if gate.fork_value is not None:
        extra["fork_value"] = gate.fork_value
    run = sw.child(sw.spec("fork", cell_dir, sw.store(cell_dir), "fork-setup", 1, form=form, extra=extra))
    ledger = Ledger(os.path.join(cell_dir, "ledger.sqlite"))
    try:
        return judge_fork(form, run, ledger, gate), [run], cell_dir
    finally:
        ledger.close()


#: how often the concurrent probe is run when its racers did not overlap (each found the park consumed)
RACE_ATTEMPTS = 3


def _concurrent_cell(sw: _Sweep, k: int, ref: Reference, gate: Gate) -> tuple[Cell, list[ChildRun], str]:
    """k racers on one park. A race that did not happen -- one racer consumed the park, the others
    found it consumed, none raised -- says nothing, so it is run again (a busy machine serialises
    racers); a pass after that says the racers never overlapped."""
    runs: list[ChildRun] = []
    for attempt in range(1, RACE_ATTEMPTS + 1):
        cell, attempt_runs, cell_dir = _concurrent_attempt(sw, k, ref, gate, attempt)
        runs += attempt_runs
        overlapped = cell.witness.get("consumed", 0) > 1 or cell.witness.get("racer_errors")
        if cell.verdict != PASS or overlapped:
            return cell, runs, cell_dir
    cell.detail += (f"; in {RACE_ATTEMPTS} attempts the racers never overlapped (each later racer found the park "
                    "already consumed), so concurrent consumption was not observed either way")
    return cell, runs, cell_dir


def _concurrent_attempt(sw: _Sweep, k: int, ref: Reference, gate: Gate, attempt: int) -> tuple[Cell, list[ChildRun], str]:
    cell_dir = sw.cell_dir(f"concurrent-{k}-gate{gate.index}" + (f"-try{attempt}" if attempt > 1 else ""))
    store = sw.store(cell_dir)
    extra = {"gate": gate.index, "value_index": gate.value_index, "breakpoint": gate.breakpoint}
    setup = sw.child(sw.spec("setup", cell_dir, store, "setup", 0, extra=extra))
    runs = [setup]
    racers: list[ChildRun] = []
    if completed(setup) and (setup.result or {}).get("parked"):
        racers = sw.racers([sw.spec("racer", cell_dir, store, "race", i + 1, extra=extra) for i in range(k)])
        runs.extend(racers)
    ledger = Ledger(os.path.join(cell_dir, "ledger.sqlite"))
    try:
        return judge_concurrent(k, setup, racers, ledger, ref, gate), runs, cell_dir
    finally:
        ledger.close()


def _shard_jobs(jobs: list[tuple[str, Any]], shard: Shard) -> list[tuple[str, Any]]:
    """This shard's jobs: whole groups (a write-order cell goes with the natural-order crash cell it
    is compared with), dealt round-robin over the sweep's stable job order."""

    def group(label: str) -> str:
        return "crash:" + label.split(":", 1)[1] if label.startswith("write-order:") else label

    keys = list(dict.fromkeys(group(label) for label, _fn in jobs))
    taken = {key for position, key in enumerate(keys) if shard.takes(position)}
    return [(label, fn) for label, fn in jobs if group(label) in taken]


def _notes_from(runs: list[ChildRun], cell_dirs: list[str]) -> list[tuple[str, str]]:
    notes: set[tuple[str, str]] = set()
    for d in cell_dirs:
        path = os.path.join(d, "ledger.sqlite")
        if os.path.exists(path):
            ledger = Ledger(path)
            try:
                for _phase, kind, detail in ledger.notes():
                    notes.add((kind, detail))
            finally:
                ledger.close()
    for run in runs:
        if run.leftovers:
            notes.add(("leftovers", "processes the graph spawned were still running when its run ended; the sweep killed them"))
        if run.escaped:
            notes.add(lifetime.ESCAPED_NOTE)
        if run.timed_out:
            notes.add(("timeout", f"a {run.spec.role} process exceeded the {run.spec.phase!r} timeout and was killed with its process group"))
        if run.result and run.result.get("schedule_escaped"):
            notes.add(("schedule", "a node waited too long for pending checkpoint writes; that run's schedule was not controlled"))
    return sorted(notes)


def _notifications(notes: list[tuple[str, str]]) -> list[Notification]:
    out = []
    for kind, detail in notes:
        if kind == "spawn":
            out.append(Notification(NotificationKind.INFO, f"the graph spawned a child process ({detail}); the sweep killed "
                                                           "whatever of it was still running when the cell ended"))
        elif kind.startswith("refused-"):
            out.append(Notification(NotificationKind.INFO, f"sandbox refused an operation of the graph: {detail}"))
        elif kind == "timeout":
            out.append(Notification(NotificationKind.TIMEOUT, detail))
        else:
            out.append(Notification(NotificationKind.INFO, detail))
    return out


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
    :mod:`auditor.dynamic.adapters.pydantic_graph`). The framework is detected
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


def _sweep(request: SweepRequest, progress: Progress | None) -> SweepReport:
    target, effects, input, resume = request.target, list(request.effects), request.input, list(request.resume)
    fork_resume, config, backend, dsn = request.fork_resume, request.config, request.backend, request.dsn
    racers, timeout, stub, stubs = request.racers, request.timeout, request.stub, request.stubs
    allow_network, keep_artifacts, cells = request.allow_network, request.keep_artifacts, request.cells
    framework, crash_modes, saver, cwd = request.framework, request.crash_modes, request.saver, request.cwd
    try:
        llm_script = llm_script_of(request.stub_llm, request.cwd)
    except LlmScriptError as exc:
        raise SweepUsageError(str(exc)) from None
    started = time.monotonic()
    if backend not in BACKENDS:
        raise SweepUsageError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if racers < 2:
        raise SweepUsageError("--racers must be at least 2")
    if timeout <= 0:
        raise SweepUsageError("--timeout must be positive")
    if request.memory_limit < 0 or (0 < request.memory_limit < 512):
        raise SweepUsageError("--memory-limit must be 0 (none) or at least 512 MB: a framework alone needs about 450")
    if saver is not None:  # a user's BaseCheckpointSaver factory, "package.module:factory" (LangGraph)
        if ":" not in saver:
            raise SweepUsageError(f"--saver {saver!r}: expected package.module:factory")
        backend, dsn = "custom", saver
    modes = tuple(m for m in CRASH_MODES if m in set(crash_modes))
    if not modes or set(crash_modes) - set(CRASH_MODES):
        raise SweepUsageError(f"crash modes must be among {', '.join(CRASH_MODES)}")
    wanted = set(CELL_KINDS if cells is None else cells)
    unknown = wanted - set(CELL_KINDS)
    if unknown:
        raise SweepUsageError(f"unknown cell kind(s) {sorted(unknown)}; choose from {', '.join(CELL_KINDS)}")
    if backend == "postgres":
        dsn = dsn or os.environ.get(PG_DSN_ENV)
        if not dsn:
            raise SweepUsageError(f"--backend postgres needs --dsn (or ${PG_DSN_ENV})")
        try:
            import psycopg

            psycopg.connect(dsn, connect_timeout=10).close()
        except Exception as exc:
            raise SweepUsageError(f"cannot connect to PostgreSQL at the given DSN: {exc}") from None
    cwd = os.path.abspath(os.fspath(cwd)) if cwd is not None else os.getcwd()
    if not os.path.isdir(cwd):
        raise SweepUsageError(f"cwd {cwd!r} is not a directory")
    tspec = TargetSpec.parse(target, cwd)
    hint = resolve_framework(tspec, framework)
    try:
        effect_specs = tuple(EffectSpec.parse(e) for e in effects)
    except EffectSpecError as exc:
        raise SweepUsageError(str(exc)) from None
    named = {f"{e.module}:{e.attr}" for e in effect_specs} | {e.display for e in effect_specs}
    stray_stubs = sorted(k for k in (stubs or {}) if k not in named and f"{EffectSpec.parse(k).module}:{EffectSpec.parse(k).attr}" not in named)
    if stray_stubs:
        raise SweepUsageError(f"a stub is given for {', '.join(stray_stubs)}, which is not an --effect of this sweep")
    resume_t = tuple(resume)
    fork_value = fork_resume if fork_resume is not None else (derive_fork_value(resume_t[0]) if resume_t else None)
    per_effect = tuple((f"{EffectSpec.parse(k).module}:{EffectSpec.parse(k).attr}", v) for k, v in (stubs or {}).items())
    run = RunSpec(tspec, effect_specs, input, resume_t, fork_value, dict(config or {}), stub, allow_network, hint, per_effect,
                  llm_script.to_data() if llm_script is not None else None, request.memory_limit)
    root = lifetime.new_root()
    sw = _Sweep(run, backend, dsn, timeout, root)
    protocol = {
        "input": to_jsonable(input),
        "resume": to_jsonable(list(resume_t)),
        "fork_resume": to_jsonable(fork_value),
        "effects": [e.display for e in effect_specs],
        "stub": None if stub is NO_STUB else to_jsonable(stub),
        **({"stubs": {k: to_jsonable(v) for k, v in per_effect}} if per_effect else {}),
        "config": to_jsonable(dict(config or {})),
        "cells": sorted(wanted),
    }
    if llm_script is not None:
        protocol["stub_llm"] = llm_script.to_data()
    if modes != ("sigkill",):
        protocol["crash_modes"] = list(modes)
    report = SweepReport(target=tspec.text, backend=backend, framework=hint or "unknown",
                         versions=_versions(hint) if hint else {}, protocol=protocol, cells=[], findings=[], cwd=cwd)
    all_runs: list[ChildRun] = []
    cell_dirs: list[str] = []
    try:
        dry_dir = sw.cell_dir("dry-run")
        cell_dirs.append(dry_dir)
        dry = sw.child(sw.spec("dry", dry_dir, sw.store(dry_dir), "run", 0))
        all_runs.append(dry)
        result = dry.result or {}
        if result.get("target_error"):
            raise TargetError(result["target_error"])
        if result.get("framework") and result["framework"] != report.framework:
            report.framework = result["framework"]
            report.versions = _versions(result["framework"])
        report.plane = dict(result.get("describe") or {})
        if result.get("protocol_error"):
            raise SweepUsageError(result["protocol_error"])
        ledger = Ledger(os.path.join(dry_dir, "ledger.sqlite"))
        try:
            if not completed(dry):
                report.complete = False
                why = failure_text(dry)
                report.cells.append(Cell("dry-run", "uninterrupted run", ERROR, detail=why, seconds=dry.seconds))
                if "validity" in wanted and result.get("invalid"):
                    # what the failed run persisted is still worth reporting (a mid-graph invalid write)
                    report.cells.append(judge_validity([("uninterrupted run", result)], False, result.get("schema")))
                    locator = Locator(result.get("nodes", {}), result.get("target_location"), cwd)
                    report.findings = build_findings(report.cells, locator, tspec.text)
                kind = NotificationKind.TIMEOUT if dry.timed_out else NotificationKind.SKIPPED
                report.notifications = _notifications(_notes_from(all_runs, cell_dirs)) + [
                    Notification(kind, f"the uninterrupted run of {tspec.text} did not complete ({why}); nothing was swept",
                                 level=Severity.ERROR)
                ]
                if progress:
                    progress(1, 1, "uninterrupted run failed")
                return report
            ref = Reference.from_dry(result, ledger, resume_t)
            dry_cell = Cell("dry-run", "uninterrupted run", PASS, seconds=dry.seconds,
                            effects={k: (v, v) for k, v in sorted(ref.effects.items())},
                            nodes={k: (v, v) for k, v in sorted(ref.nodes.items())}, final_state_match=True)
            points = sorted((e for e in ref.events if e.kind != "park"), key=Event.sort_key)
            parks = sorted((e for e in ref.events if e.kind == "park"), key=Event.sort_key)
            dry_cell.detail = f"{len(points)} kill points, {len(parks)} park(s), final step {ref.final_step}"
            dry_cell.witness = {"final_state": ref.final_state, "parks": ref.parks}
            stray_cell = judge_stray(result, ledger, ref) if "stray" in wanted else None
            interrupt_cell = judge_interrupt_path(ledger, ref) if "interrupt" in wanted else None
        finally:
            ledger.close()
        if not result.get("store_used"):
            report.notifications.append(Notification(
                NotificationKind.INFO,
                f"the graph did not persist through the sweep's {backend} checkpointer ({result.get('graph_how')}); "
                "checkpointer kill points are unavailable and a crash loses whatever the graph's own saver kept in memory"))
        report.kill_points = len(points)

        jobs: list[tuple[str, Callable[[], tuple[Cell, list[ChildRun], str]]]] = []
        if "crash" in wanted or "write-order" in wanted:
            for p in points:
                jobs.append((f"crash:{p.name}", partial(_crash_cell, sw, "crash", p, ref)))
        if "crash" in wanted and "exception" in modes:
            for p in points:
                jobs.append((f"crash-exception:{p.name}", partial(_crash_cell, sw, "crash", p, ref, mode="exception")))
        if "parked" in wanted:
            for p in parks:
                jobs.append((f"parked:{p.name}", partial(_crash_cell, sw, "parked", p, ref)))
        stray_point = None
        if "stray" in wanted and not parks and result.get("stray_after_restore"):
            # no park to resume again: the stray delivery is a second restore of the state a recovery restored
            stray_point = next((p for p in points if p.kind in DURABLE_KINDS), None)
            if stray_point is not None:
                jobs.append(("stray-restore", lambda: _crash_cell(sw, "crash", stray_point, ref, stray=True)))
            else:
                stray_cell = Cell("stray", "restore again after a successful restore", NOT_APPLICABLE,
                                  detail="the program persists nothing, so there is no state to restore twice")
        if "write-order" in wanted:
            for p in points:
                if p.kind in ("put", "put_writes"):
                    jobs.append((f"write-order:{p.name}", partial(_crash_cell, sw, "crash", p, ref, "deferred")))
        forms = tuple(result.get("fork_forms") or ("bare", "map"))
        # every pause point of the protocol is probed, not only the first (a graph that parks
        # nowhere still gets one cell per probe, which says so)
        gates = Gate.of_protocol(ref.parks, resume_t, fork_resume) or [Gate.first()]
        if "fork" in wanted:
            for gate in gates:
                for form in forms:
                    jobs.append((f"fork:{form}:{gate.index}", partial(_fork_cell, sw, form, gate)))
        ks = sorted({racers, 4})
        concurrent_na = []
        if "concurrent" in wanted:
            for gate in gates:
                for k in ks:
                    if backend == "memory":
                        concurrent_na.append(Cell("concurrent", concurrent_name(k, gate), NOT_APPLICABLE,
                                                  detail="an in-memory checkpointer is private to each process: there is no shared store to race on"))
                    else:
                        jobs.append((f"concurrent:{k}:{gate.index}", partial(_concurrent_cell, sw, k, ref, gate)))
        if request.shard is not None:
            jobs = _shard_jobs(jobs, request.shard)
        total = len(jobs) + 1
        if progress:
            progress(1, total, "uninterrupted run")
        outcomes: dict[str, tuple[Cell, list[ChildRun], str]] = {}
        workers = max(2, os.cpu_count() or 2)
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="resume-audit-cell")
        # Racers run alone, after every other cell: k processes released together overlap only
        # when no other cell competes for the cores (on two cores, 4 racers beside the pool's
        # cells resumed one after another often enough to undercount the duplicates).
        pooled = [(label, fn) for label, fn in jobs if not label.startswith("concurrent:")]
        alone = [(label, fn) for label, fn in jobs if label.startswith("concurrent:")]
        try:
            futures = {pool.submit(fn): label for label, fn in pooled}
            done = 1
            for fut in as_completed(futures):
                label = futures[fut]
                outcomes[label] = fut.result()
                done += 1
                if progress:
                    progress(done, total, label.split(":", 1)[-1])
            for label, fn in alone:
                outcomes[label] = pool.submit(fn).result()
                done += 1
                if progress:
                    progress(done, total, label.split(":", 1)[-1])
        except BaseException:
            # Ctrl-C or a failure in the parent: start nothing new, kill what runs, do not wait for it.
            sw.cancelled.set()
            kill_all(root)
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
        for cell, runs, d in outcomes.values():
            all_runs.extend(runs)
            cell_dirs.append(d)

        # -- assemble in the stable order: every planned slot, filled where this run swept it --------
        def swept(label: str) -> Cell | None:
            return outcomes[label][0] if label in outcomes else None

        slots: list[tuple[str, Cell | None]] = [("dry-run", dry_cell)]
        if interrupt_cell is not None:
            slots.append(("interrupt", interrupt_cell))
        if "crash" in wanted:
            slots += [(f"crash:{p.name}", swept(f"crash:{p.name}")) for p in points]
            if "exception" in modes:
                slots += [(f"crash-exception:{p.name}", swept(f"crash-exception:{p.name}")) for p in points]
        if "parked" in wanted:
            slots += [(f"parked:{p.name}", swept(f"parked:{p.name}")) for p in parks]
        if "write-order" in wanted:
            for p in points:
                if p.kind in ("put", "put_writes"):
                    natural, deferred = swept(f"crash:{p.name}"), swept(f"write-order:{p.name}")
                    slots.append((f"write-order:{p.name}",
                                  judge_write_order(natural, deferred, p) if natural and deferred else None))
        if "fork" in wanted:
            slots += [(f"fork:{form}:{gate.index}", swept(f"fork:{form}:{gate.index}")) for gate in gates for form in forms]
        if stray_point is not None:
            slots.append(("stray-restore", swept("stray-restore")))
        elif stray_cell is not None:
            slots.append(("stray", stray_cell))
        if "concurrent" in wanted:
            slots += [(f"na:{c.name}", c) for c in concurrent_na]
            slots += [(f"concurrent:{k}:{gate.index}", swept(f"concurrent:{k}:{gate.index}")) for gate in gates for k in ks
                      if backend != "memory"]
        validity_sources: list[tuple[str, dict[str, Any]]] = []
        if "validity" in wanted:
            for label, (_c, runs, _d) in sorted(outcomes.items()):
                for r in runs:
                    if r.result and r.result.get("invalid"):
                        validity_sources.append((label, {"invalid": r.result["invalid"]}))
            sources: list[tuple[str, dict[str, Any] | None]] = [("uninterrupted run", result), *validity_sources]
            slots.append(("validity", judge_validity(sources, True, result.get("schema"))))
        cells_out = [c for _label, c in slots if c is not None]
        notes = _notes_from(all_runs, cell_dirs)
        if request.shard is not None:
            report.shard = ShardPart(
                shard=request.shard,
                order=[label for label, _c in slots],
                cells=[(label, c) for label, c in slots if c is not None],
                validity_sources=validity_sources,
                dry_result={"invalid": result.get("invalid") or [], "schema": result.get("schema"),
                            "nodes": result.get("nodes", {}), "target_location": result.get("target_location")},
                notes=notes,
                notifications=list(report.notifications),
                cwd=cwd,
            )
        report.cells = cells_out
        locator = Locator(result.get("nodes", {}), result.get("target_location"), cwd)
        report.findings = build_findings(cells_out, locator, tspec.text)
        report.notifications = _notifications(notes) + report.notifications
        return report
    finally:
        kill_all(root)  # on success a no-op; on Ctrl-C or a parent error, no child outlives the sweep
        report.timings = {"total_s": time.monotonic() - started,
                          "children": float(len(all_runs)),
                          "child_s": sum(r.seconds for r in all_runs)}
        sw.drop_schemas()
        if keep_artifacts:
            report.artifacts = root
        else:
            shutil.rmtree(root, ignore_errors=True)
