"""The child's built-in roles: the uninterrupted run, the run to a kill point, and the recovery.

- ``dry``      the uninterrupted protocol (input, then one ``--resume`` value per
               interrupt), the list of named events, node locations, the stray
               resume after completion, and a validity audit;
- ``crash``    the same protocol, SIGKILLed right after the named kill point;
- ``recover``  a fresh interpreter continuing from whatever the crash left durable.

A probe that needs a child to do something else brings its own role
(:attr:`resume_audit.dynamic.spec.ChildSpec.role_entry`): the fork probe's two
answers at one park, the concurrent probe's setup and racers.
"""

from __future__ import annotations

import inspect
import re
from typing import Any, Callable

from resume_audit.dynamic.adapters.base import Outcome, SourceLocation, function_location, module_source_lines
from resume_audit.dynamic.child.context import Context
from resume_audit.dynamic.child_result import DurableFound, StrayDelivery
from resume_audit.dynamic.values import to_jsonable

__all__ = ["ROLES", "target_location"]


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
    if inspect.isfunction(obj) or inspect.ismethod(obj):
        loc = function_location(obj)
        if loc is not None:
            return loc
    source = module_source_lines(module)
    if source is None:
        return None
    file, lines = source
    name = attr.split(".")[0]
    pattern = re.compile(
        rf"^(\s*)(?:{re.escape(name)}\b\s*(?::[^=]*)?=|def\s+{re.escape(name)}\b|class\s+{re.escape(name)}\b)"
    )
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
    durable_done: set[tuple[str, int | None]] = set()
    for run in ctx.ledger.node_runs(phases=["crash"]):
        if run.task in state.completed_tasks or (
            state.step is not None
            and run.step is not None
            and run.step <= state.step
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
            f"Command(resume=...) for pending interrupt {min(idxs)}"
            if first.takes_value
            else f"invoke(None) at pending {first.describe()}"
        )
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
        {
            (r.node, r.step)
            for r in ctx.ledger.node_runs(phases=["recover"])
            if (r.node, r.step) in durable_done or (r.step is None and r.node in {n for n, _ in durable_done})
        },
        key=lambda x: (x[1] if x[1] is not None else -1, x[0]),
    )
    r = ctx.result
    r.how = how
    r.durable = DurableFound(
        state.exists,
        state.step,
        len(state.interrupts),
        list(state.next),
        sorted(state.completed_tasks) if ctx.session.stray_after_restore else [],
    )
    r.reran_completed = reran
    r.parks = parks
    ctx.finish()
    ctx.audit()
    if ctx.spec.stray:
        r.stray = stray(ctx)


#: role name -> the function a child of that role runs
ROLES: dict[str, Callable[[Context], None]] = {
    "dry": role_dry,
    "crash": role_crash,
    "recover": role_recover,
}
