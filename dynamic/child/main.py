"""The child process: confine, load the user's graph, play one role, write ``result.json``.

Roles (see :mod:`resume_audit.dynamic.cells` for how the parent combines them):

- ``dry``      the uninterrupted protocol (input, then one ``--resume`` value per
               interrupt), the list of named events, node locations, the stray
               resume after completion, and a validity audit;
- ``crash``    the same protocol, SIGKILLed right after the named kill point;
- ``recover``  a fresh interpreter continuing from whatever the crash left durable;
- ``fork``     two resumes at the interrupt checkpoint with different values;
- ``setup``    run to the first park (for the concurrent probe);
- ``racer``    one of k processes resuming that park from a shared barrier.

Every outcome -- including the user's code raising, calling ``sys.exit`` or
being refused by the sandbox -- ends in a ``result.json`` the parent reads;
only a kill (ours or a timeout) leaves none. The process leaves through
``os._exit`` so a stray non-daemon thread of the user's cannot keep it alive.
"""

from __future__ import annotations

import os
import sys
import traceback
from typing import Any, Callable

from resume_audit.dynamic.adapters.base import Instruments, Outcome, Session, ShapeError, SourceLocation, function_location, module_source_lines
from resume_audit.dynamic.adapters import adapter_for, detect
from resume_audit.dynamic.child import llm_stub
from resume_audit.dynamic.child_result import ChildError, ChildResult, DurableFound, ForkBranch, ParkRecord, StrayDelivery
from resume_audit.dynamic.child.effects import EffectSpecError, install_effects
from resume_audit.dynamic.killpoints import EventLog
from resume_audit.dynamic.ledger import Ledger
from resume_audit.dynamic.child.sandbox import Sandbox
from resume_audit.dynamic.spec import AUTO_INPUT, ChildSpec
from resume_audit.dynamic.target import TargetError, import_target
from resume_audit.dynamic.values import to_jsonable

BARRIER_TIMEOUT_S = 30.0


class ProtocolError(RuntimeError):
    """The graph parked more often than there are ``--resume`` values."""


class Context:
    """What a role function works with."""

    def __init__(self, spec: ChildSpec, session: Session, ledger: Ledger, events: EventLog, instruments: Instruments,
                 result: ChildResult) -> None:
        self.spec = spec
        self.session = session
        self.ledger = ledger
        self.events = events
        self.instruments = instruments
        self.resume = list(spec.run.resume)
        #: what the role reports; what it learned before a failure is kept
        self.result = result
        self.module: Any = None
        self.target: Any = None
        #: where ``drive(until_gate=...)`` stopped: the pending outcome and its park record
        self.stopped_at: tuple[Outcome, ParkRecord] | None = None
        #: the kind of the last park answered ("interrupt", or a static breakpoint's "before"/"after")
        self.last_park_kind = "interrupt"

    @property
    def input(self) -> Any:
        """The protocol's input: as given, or synthesised from the program's input schema."""
        if self.spec.run.input is not AUTO_INPUT:
            return self.spec.run.input
        if self.result.input_used is None:
            example = self.session.example_input()
            self.result.input_used = example if example is not None else {}
        return self.result.input_used

    def set_leg(self, leg: int) -> None:
        self.events.leg = leg
        self.ledger.leg = leg

    def answers_for(self, outcome: Outcome) -> tuple[list, list[int]]:
        """Each pending park's answer, and its gate index (its place among every park of the protocol).

        A dynamic interrupt takes the next ``--resume`` value; a static
        breakpoint takes none (it is continued with ``invoke(None)``).
        """
        idxs = [self.ledger.interrupt_index(i.id) for i in outcome.interrupts]
        answers = []
        for intr in outcome.interrupts:
            if not intr.takes_value:
                answers.append((intr, None))
                continue
            vi = self.ledger.value_index(intr.id)
            if vi >= len(self.resume):
                raise ProtocolError(
                    f"the graph parked at interrupt #{vi + 1} ({intr.describe()}, value {intr.value!r}) "
                    f"but only {len(self.resume)} --resume value(s) were given"
                )
            answers.append((intr, self.resume[vi]))
        return answers, idxs

    def park_record(self, outcome: Outcome, idxs: list[int]) -> ParkRecord:
        first = outcome.interrupts[0]
        if first.kind != "interrupt":
            return ParkRecord(min(idxs), first.node, first.value, kind=first.kind)
        return ParkRecord(min(idxs), first.node, first.value, value_index=self.ledger.value_index(first.id))

    def drive(self, outcome: Outcome, *, until_gate: int | None = None) -> list[ParkRecord]:
        """Answer every park with its ``--resume`` value until the run completes.

        With ``until_gate`` stop (parked) at the park whose gate index is that
        number; the caller probes it.
        """
        parks: list[ParkRecord] = []
        while outcome.parked:
            answers, idxs = self.answers_for(outcome)
            record = self.park_record(outcome, idxs)
            if until_gate is not None and record.index >= until_gate:
                self.stopped_at = (outcome, record)
                return parks
            parks.append(record)
            self.last_park_kind = record.kind
            first = outcome.interrupts[0]
            where = (f"interrupt {record.index} in node {first.node}" if first.takes_value
                     else f"static breakpoint {record.index} ({first.kind} node {first.node})")
            self.events.emit("park", f"parking at {where}", node=first.node)
            self.set_leg(max(idxs) + 1)
            outcome = self.session.answer(answers)
        return parks

    def finish(self) -> None:
        self.result.final_state, self.result.final_step = self.session.final_state()
        self.result.checkpoints = self.session.checkpoint_count()

    def audit(self) -> None:
        self.result.invalid = list(self.session.audit_checkpoints())


def role_dry(ctx: Context) -> None:
    r = ctx.result
    r.nodes = dict(ctx.session.node_locations(ctx.module))
    r.schema = ctx.session.schema_kind()
    r.fork_forms = list(ctx.session.fork_forms)
    r.stray_after_restore = ctx.session.stray_after_restore
    r.target_location = target_location(ctx.module, ctx.target, ctx.spec.run.target.attr)
    ctx.set_leg(0)
    try:
        r.parks = ctx.drive(ctx.session.start(ctx.input))
    except BaseException:
        # A run that dies on its own state (a mid-graph invalid write) has still persisted it.
        try:
            ctx.audit()
        except Exception:
            pass
        raise
    ctx.finish()
    r.events = list(ctx.events.events)
    ctx.audit()
    if r.parks:
        r.stray = stray(ctx)


def target_location(module: Any, obj: Any, attr: str) -> SourceLocation | None:
    """Where the target is defined: a factory's ``def``, or the line assigning the attribute."""
    import inspect
    import re

    if inspect.isfunction(obj) or inspect.ismethod(obj):
        loc = function_location(obj)
        if loc is not None:
            return loc
    source = module_source_lines(module)
    if source is None:
        return None
    file, lines = source
    name = attr.split(".")[0]
    pattern = re.compile(rf"^(\s*)(?:{re.escape(name)}\b\s*(?::[^=]*)?=|def\s+{re.escape(name)}\b|class\s+{re.escape(name)}\b)")
    for i, line in enumerate(lines, start=1):
        m = pattern.match(line)
        if m:
            return SourceLocation(file, i, len(m.group(1)) + 1, i, len(line) + 1)
    return SourceLocation(file, 1, 1, 1, 1)


def stray(ctx: Context) -> StrayDelivery:
    """One more resume after completion (or, without parks, one more restore of the same state): it must be inert."""
    ctx.ledger.phase = "stray"
    ctx.set_leg(len(ctx.resume) + 1)
    breakpoint = ctx.last_park_kind != "interrupt"
    value = None if breakpoint else (ctx.resume[-1] if ctx.resume else None)
    before, before_step = ctx.session.final_state()
    count = ctx.session.checkpoint_count()
    error = None
    parked = False
    try:
        # a graph paused by static breakpoints is resumed with invoke(None): that is its stray delivery
        parked = (ctx.session.proceed() if breakpoint else ctx.session.resume_raw(value)).parked
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
    after, after_step = ctx.session.final_state()
    return StrayDelivery(
        sent=to_jsonable(value),
        delivery="invoke(None)" if breakpoint else None,
        error=error,
        parked=parked,
        state_changed=before != after,
        state_before=before,
        state_after=after,
        step_before=before_step,
        step_after=after_step,
        checkpoints_added=ctx.session.checkpoint_count() - count,
    )


def role_crash(ctx: Context) -> None:
    r = ctx.result
    ctx.set_leg(0)
    try:
        parks = ctx.drive(ctx.session.start(ctx.input))
    except Exception as exc:  # the injected crash, possibly wrapped by the framework
        if not ctx.events.killed:
            raise
        r.crashed, r.message = "exception", f"{type(exc).__name__}: {exc}"[:300]
        return
    if ctx.events.killed:  # raised where the framework swallowed it, and never re-raised on the main path
        r.crashed, r.message = "exception", "the injected exception was swallowed by the framework"
        return
    # Reaching this line means the kill point never occurred in this run.
    r.reached, r.parks, r.events = False, parks, list(ctx.events.events)


def role_recover(ctx: Context) -> None:
    ctx.set_leg(-1)
    state = ctx.session.durable_state()
    durable_done = set()
    for run in ctx.ledger.node_runs(phases=["crash"]):
        if run.task in state.completed_tasks or (
            state.step is not None and run.step is not None and run.step <= state.step
            and ctx.session.step_on_thread_clock(run.node)
        ):
            durable_done.add((run.node, run.step))
    if not state.exists:
        how = "restart from input (nothing durable survived)"
        ctx.ledger.reset_interrupts()
        ctx.set_leg(0)
        outcome = ctx.session.start(ctx.input)
    elif state.interrupts:
        answers, idxs = ctx.answers_for(Outcome(state.interrupts))
        first = state.interrupts[0]
        how = ctx.session.recovery_label(state) or (
            f"Command(resume=...) for pending interrupt {min(idxs)}" if first.takes_value
            else f"invoke(None) at pending {first.describe()}")
        ctx.set_leg(max(idxs) + 1)
        outcome = ctx.session.answer(answers)
    else:
        # get_state().next leaves out tasks whose writes are already durable, so an
        # empty `next` does not mean the run completed: always continue with invoke(None).
        label = ctx.session.recovery_label(state)
        if label:
            how = label
        elif state.next:
            how = "invoke(None) from the durable checkpoint"
        elif state.completed_tasks:
            how = "invoke(None) from the durable checkpoint (get_state().next was empty: the step's writes were durable, its checkpoint was not)"
        else:
            how = "invoke(None) on a thread that had already completed"
        outcome = ctx.session.proceed()
    parks = ctx.drive(outcome)
    reran = sorted(
        {(r.node, r.step) for r in ctx.ledger.node_runs(phases=["recover"])
         if (r.node, r.step) in durable_done or (r.step is None and r.node in {n for n, _ in durable_done})},
        key=lambda x: (x[1] if x[1] is not None else -1, x[0]),
    )
    r = ctx.result
    r.how = how
    r.durable = DurableFound(state.exists, state.step, len(state.interrupts), list(state.next),
                             sorted(state.completed_tasks) if ctx.session.stray_after_restore else [])
    r.reran_completed = reran
    r.parks = parks
    ctx.finish()
    ctx.audit()
    if ctx.spec.stray:
        r.stray = stray(ctx)


def _park_at_gate(ctx: Context) -> tuple[Any, ParkRecord] | None:
    """Run from the input to the park the spec's ``gate`` names, answering the parks before it."""
    gate = ctx.spec.gate
    ctx.set_leg(0)
    ctx.drive(ctx.session.start(ctx.input), until_gate=gate)
    if ctx.stopped_at is None or ctx.stopped_at[1].index != gate:
        return None
    outcome, record = ctx.stopped_at
    ctx.set_leg(gate + 1)
    return outcome.interrupts[0], record


def role_fork(ctx: Context) -> None:
    r = ctx.result
    ctx.ledger.phase = "fork-setup"
    found = _park_at_gate(ctx)
    if found is None:
        return
    intr, record = found
    r.node, r.gate = intr.node, record
    if not intr.takes_value:
        r.why = f"the run pauses at a {intr.describe()}, which is continued without a value: there is no answer to discriminate"
        return
    at = ctx.session.fork_point()
    vi = record.value_index or 0
    second = ctx.spec.fork_value if ctx.spec.fork_value is not None else ctx.spec.run.fork_resume
    for n, value in enumerate([ctx.resume[vi], second], start=1):
        ctx.ledger.phase = f"fork-{n}"
        error = None
        try:
            ctx.session.answer([(intr, value)], at=at, form=ctx.spec.form or ctx.session.fork_forms[0])
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
        r.branches.append(ForkBranch(to_jsonable(value), error))
    r.applicable = True
    ctx.audit()


def role_setup(ctx: Context) -> None:
    r = ctx.result
    r.shared = ctx.session.uses_sweep_store()
    found = _park_at_gate(ctx)
    if found is not None:
        intr, r.gate = found
        r.parked, r.node = True, intr.node


def role_racer(ctx: Context, barrier: Any) -> None:
    """Resume the park the setup process left: its value for an interrupt, ``invoke(None)`` for a breakpoint."""
    r = ctx.result
    ctx.set_leg(ctx.spec.gate + 1)
    barrier.wait(BARRIER_TIMEOUT_S)
    try:
        if ctx.spec.breakpoint:
            r.parked = ctx.session.proceed().parked
        else:
            r.parked = ctx.session.resume_raw(ctx.resume[ctx.spec.value_index]).parked
    except Exception as exc:
        r.resume_error = f"{type(exc).__name__}: {exc}"
    ctx.audit()


ROLE_FUNCS: dict[str, Callable[[Context], None]] = {
    "dry": role_dry,
    "crash": role_crash,
    "recover": role_recover,
    "fork": role_fork,
    "setup": role_setup,
}


def _user_frame(exc: BaseException, roots: tuple[str, ...]) -> str | None:
    """``file:line`` of the innermost traceback frame inside the user's code."""
    where = None
    for frame in traceback.extract_tb(exc.__traceback__):
        path = os.path.realpath(frame.filename)
        if any(path.startswith(r + os.sep) for r in roots) and "site-packages" not in path:
            where = f"{frame.filename}:{frame.lineno}"
    return where


def main(spec: ChildSpec, barrier: Any = None) -> None:
    """Entry point of every sweep child (runs in a fork of the fork server)."""
    from resume_audit.dynamic import lifetime
    from resume_audit.dynamic.child import env as childenv

    childenv.apply()
    lifetime.bind_to_parent(spec.workdir)  # descendants carry the tag; die with the fork server
    if spec.run.memory_limit_mb:
        import resource

        limit = spec.run.memory_limit_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    _capture_output(spec.workdir)
    result = ChildResult(spec.role, spec.phase)
    instruments: Instruments | None = None
    try:
        sandbox = Sandbox(root=spec.cell_dir, workdir=spec.workdir, allow_network=spec.run.allow_network, cwd=spec.program_dir)
        sandbox.install()
        ledger = Ledger(spec.ledger_path)
        ledger.phase = spec.phase
        sandbox.report = ledger.note
        events = EventLog(kill_at=spec.kill_at, mode=spec.crash_mode)
        events.on_kill = lambda: lifetime.reap_descendants(ledger.note)  # nothing the graph started survives the kill
        instruments = Instruments(ledger, events)
        hint = spec.run.framework
        adapter = adapter_for(hint) if hint else None
        if adapter is not None:  # before the user's module runs: import-time framework calls are seen
            adapter.prepare_process(instruments, spec.store)
        if spec.run.llm_script is not None:  # before the user's module builds its models
            llm_stub.install(llm_stub.LlmScript.parse(spec.run.llm_script), ledger.note)
        try:
            _module, obj = import_target(spec.run.target)
            detected, program = detect(obj, hint)
            if detected is not adapter:
                adapter = detected
                adapter.prepare_process(instruments, spec.store)
            result.framework = adapter.name
            install_effects(list(spec.run.effects), ledger, events, adapter.effect_context, spec.run.stub, dict(spec.run.stubs))
            session = adapter.open(program, spec.store, instruments, spec.thread_id, dict(spec.run.config))
        except (TargetError, ShapeError, EffectSpecError) as exc:
            result.target_error = str(exc)
            return
        ctx = Context(spec, session, ledger, events, instruments, result)
        ctx.module, ctx.target = _module, obj
        try:
            if spec.role == "racer":
                role_racer(ctx, barrier)
            else:
                ROLE_FUNCS[spec.role](ctx)
            result.ok = True
        finally:
            result.store_used = session.uses_sweep_store()
            result.graph_how = getattr(session, "how", "")
            result.saver_ops = instruments.saver_ops
            result.describe = session.describe()
            result.schedule_escaped = adapter.schedule_escaped()
            try:
                session.close()
            except Exception:
                pass
    except ProtocolError as exc:
        result.protocol_error = str(exc)
    except SystemExit as exc:
        result.error = ChildError("exit", f"sys.exit({exc.code!r})", _user_frame(exc, _roots(spec)))
    except BaseException as exc:  # the user's graph raised: that is a result, not a sweep failure
        result.error = ChildError("raised", str(exc)[:800], _user_frame(exc, _roots(spec)), type(exc).__name__)
    finally:
        if instruments is not None:
            last = list(instruments.task_nodes.values())
            result.last_node = last[-1][0] if last else None
        try:
            result.reaped = lifetime.reap_descendants(instruments.ledger.note if instruments is not None else None)
        except Exception:
            pass
        result.write(spec.result_path)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(0)


def _capture_output(workdir: str) -> None:
    """Send the program's stdout/stderr to ``output.log`` in its workdir, not the parent's terminal.

    A sweep's own report goes to stdout (``--format json``/``sarif``); banners
    a framework prints in every child (CrewAI's flow panels) must not mix in.
    """
    os.makedirs(workdir, exist_ok=True)
    fd = os.open(os.path.join(workdir, "output.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    for stream, target in ((sys.stdout, 1), (sys.stderr, 2)):
        try:
            stream.flush()
        except Exception:
            pass
        os.dup2(fd, target)
    os.close(fd)


def _roots(spec: ChildSpec) -> tuple[str, ...]:
    return (os.path.realpath(spec.run.target.path_entry),)
