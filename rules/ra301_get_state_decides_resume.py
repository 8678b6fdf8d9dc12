"""RA301: ``get_state`` on a possibly parked thread decides whether to resume (check-then-act)."""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from resume_audit.facts.model import CallInfo, FunctionInfo
from resume_audit.facts.syntax import argument, bool_value, keyword, receiver
from resume_audit.findings import Finding, Related, Severity
from resume_audit.frameworks.langgraph import names as langgraph
from resume_audit.frameworks.langgraph.resume_plane import (
    decided_resume,
    decided_through_helper,
    delegated_resume_calls,
    resume_calls,
)
from resume_audit.frameworks.langgraph.units import project_uses_langgraph
from resume_audit.rules.base import Example, Rule, RuleContext


class GetStateDecidesResume(Rule):
    id = "RA301"
    confirmed_by = ("RA705",)
    name = "get-state-decides-resume"
    properties = ("CO",)
    severity = Severity.WARNING
    frameworks = ("langgraph",)
    summary = (
        "get_state() on a possibly parked thread decides whether to resume: concurrent deliveries all pass the check."
    )
    description = """
Code reads a thread's state with `get_state()` / `aget_state()` -- "is it
still waiting at the interrupt?" -- and resumes only if so. Also flagged: a
`get_state()` on a graph whose saver is remit's cross-process consume gate
(`remit.wrap(..., cross_process_gate=True)`) without the `remit_inspect`
opt-out, where the read itself takes the claim.
"""
    runtime = """
The check and the resume are two steps with nothing atomic between them.
Two deliveries of one approval -- a double-clicked button, a retried
webhook, two workers on one queue -- both read the parked interrupt, both
pass the check, and both resume. LangGraph guards interrupt consumption
with no compare-and-swap on any saver: measured on langgraph 1.2.24, two
processes resuming one parked interrupt on one SqliteSaver both run the
gated node (the effect fires twice, each served its own value); the paper
measured every racer winning up to k=16 on SQLite and PostgreSQL. Under
remit's gate a bare `get_state` through another saver instance consumes
the claim, so the real resume is then refused.
"""
    fix = """
Make consumption atomic instead of checking first: claim the interrupt
with an `INSERT` into a table with a unique key on `(thread_id,
interrupt_id)` (or `SELECT ... FOR UPDATE`, or an advisory lock) and resume
only if the insert succeeded; or compile with `remit.wrap(SqliteSaver,
conn, cross_process_gate=True)`, which refuses the losing racer with
`RemitConsumeConflict` before any node runs. Under that gate, pass
`{"configurable": {..., "remit_inspect": True}}` to every inspection.
"""
    no_autofix = """
Replacing check-then-act with an atomic claim needs a store that can do
one (a database row, a lock service); the choice is the deployment's.
"""
    not_flagged = """
- `get_state` whose result is only displayed or returned, not used to decide a resume;
- `get_state` after a resume to read the outcome;
- resumes guarded by a lock or a claim the code takes first (the rule looks only at `get_state`-based decisions);
- inspections that pass `remit_inspect` under remit's gate;
- checks that read only `.values` or `.config` (does the thread exist? what did it decide?), not whether it is parked (`.next`, `.interrupts`, `.tasks`);
- a function that started the run itself before checking (an auto-approval loop driving its own thread: no outside delivery can race it).
"""

    INVALID = (
        Example(
            """
            from langgraph.types import Command

            def approve(graph, thread_id):
                config = {"configurable": {"thread_id": thread_id}}
                snapshot = graph.get_state(config)  # expect: RA301
                if snapshot.next:
                    graph.invoke(Command(resume="approved"), config)
            """,
            note="Check-then-act on the snapshot.",
        ),
        Example(
            """
            from langgraph.types import Command

            async def on_webhook(graph, thread_id, decision):
                cfg = {"configurable": {"thread_id": thread_id}}
                state = await graph.aget_state(cfg)  # expect: RA301
                waiting = bool(state.interrupts)
                if not waiting:
                    return "already handled"
                await graph.ainvoke(Command(resume=decision), cfg)
                return "resumed"
            """,
            note="A guard clause on a derived flag; async API.",
        ),
        Example(
            """
            import remit
            from langgraph.checkpoint.sqlite import SqliteSaver
            from langgraph.graph import StateGraph

            def status(conn, State, node, thread_id):
                builder = StateGraph(State)
                builder.add_node("gate", node)
                graph = builder.compile(checkpointer=remit.wrap(SqliteSaver, conn, cross_process_gate=True))
                return graph.get_state({"configurable": {"thread_id": thread_id}}).values  # expect: RA301
            """,
            note="Under remit's consume gate a bare inspection takes the claim.",
        ),
    )
    VALID = (
        Example(
            """
            from langgraph.types import Command

            def approve(graph, thread_id):
                config = {"configurable": {"thread_id": thread_id}}
                result = graph.invoke(Command(resume="approved"), config)
                snapshot = graph.get_state(config)
                print(snapshot.values)
                return result
            """,
            note="get_state reads the outcome after the resume.",
        ),
        Example(
            """
            def show(graph, thread_id):
                snapshot = graph.get_state({"configurable": {"thread_id": thread_id}})
                if snapshot.next:
                    return {"status": "waiting", "question": snapshot.interrupts[0].value}
                return {"status": "done", "values": snapshot.values}
            """,
            note="A status endpoint that never resumes.",
        ),
        Example(
            """
            import remit
            from langgraph.checkpoint.sqlite import SqliteSaver
            from langgraph.graph import StateGraph

            def status(conn, State, node, thread_id):
                builder = StateGraph(State)
                builder.add_node("gate", node)
                graph = builder.compile(checkpointer=remit.wrap(SqliteSaver, conn, cross_process_gate=True))
                cfg = {"configurable": {"thread_id": thread_id, "remit_inspect": True}}
                return graph.get_state(cfg).values
            """,
            note="The inspection opts out of the consume gate.",
        ),
        Example(
            """
            from fastapi import HTTPException
            from langgraph.types import Command

            def answer(graph, thread_id, decision):
                cfg = {"configurable": {"thread_id": thread_id}}
                snapshot = graph.get_state(cfg)
                if not snapshot.values:
                    raise HTTPException(status_code=404, detail="no such thread")
                return graph.invoke(Command(resume=decision), cfg)
            """,
            note="An existence check on .values does not read whether the thread is parked (RA302 covers the unguarded resume).",
        ),
        Example(
            """
            from langgraph.types import Command

            def run_with_auto_approval(graph, thread_id, inputs):
                cfg = {"configurable": {"thread_id": thread_id}}
                graph.invoke(inputs, cfg)
                while True:
                    snapshot = graph.get_state(cfg)
                    if not snapshot.next:
                        return snapshot.values
                    graph.invoke(Command(resume="approve"), cfg)
            """,
            note="The function started the run and drives its own thread: no outside delivery races it.",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        if not ctx.module.uses_any(langgraph.PACKAGES) and not ctx.module.uses_any(("remit",)):
            # a controller that imports the compiled graph from a project module need not import langgraph
            if not (
                project_uses_langgraph(ctx.project) and any(w in ctx.module.source for w in langgraph.GET_STATE_METHODS)
            ):
                return
        for fn in [*ctx.module.functions, ctx.module.script_body]:
            resumes = None
            for call in fn.calls:
                f = call.node.func
                if not (isinstance(f, cst.Attribute) and f.attr.value in langgraph.GET_STATE_METHODS):
                    continue
                gated = self._gate_without_opt_out(call, fn, ctx)
                if gated is not None:
                    yield gated
                    continue
                if resumes is None:
                    resumes = resume_calls(fn, ctx) + delegated_resume_calls(fn, ctx)
                decided = decided_resume(call, fn, resumes, ctx) if resumes else None
                if decided is None:
                    through = decided_through_helper(fn, ctx)
                    if through is None:
                        continue
                    decision, resume_info, where = through
                    yield ctx.finding(
                        call.node,
                        f"{ctx.describe_call(call.node)} tells '{fn.qualname}' whether the thread is parked, and "
                        f"{where.display_path}:{where.line(resume_info.node)} resumes only if it says so. The check "
                        f"and the resume are not atomic: two deliveries of the same approval both see the parked "
                        f"interrupt and both resume, firing the gated effect twice (LangGraph has no compare-and-swap "
                        f"on interrupt consumption).",
                        related=(
                            Related(ctx.span(decision, where), "the decision asks the helper"),
                            Related(ctx.span(resume_info.node, where), "the resume it gates"),
                        ),
                    )
                    continue
                decision, resume = decided
                yield ctx.finding(
                    call.node,
                    f"{ctx.describe_call(call.node)} checks whether the thread is parked and the run at line "
                    f"{resume.line} {'sends a resume' if isinstance(decision, cst.IfExp) else 'resumes'} only if so. The check and the resume are not atomic: two deliveries of "
                    f"the same approval both see the parked interrupt and both resume, firing the gated effect twice "
                    f"(LangGraph has no compare-and-swap on interrupt consumption).",
                    related=(
                        Related(ctx.span(decision), "the decision reads the snapshot"),
                        Related(ctx.span(resume.node), "the resume it gates"),
                    ),
                )

    def _gate_without_opt_out(self, call: CallInfo, fn: FunctionInfo, ctx: RuleContext) -> Finding | None:
        obj = receiver(call.node)
        graph = langgraph.graph_of(obj, fn, ctx.module, ctx.project) if obj is not None else None
        if graph is None:
            return None
        wrap = langgraph.remit_wrap_call(graph.checkpointer, graph.scope, graph.module, ctx.project)
        gate = keyword(wrap, "cross_process_gate") if wrap is not None else None
        if wrap is None or gate is None or bool_value(gate.value) is not True:
            return None
        config = argument(call.node, 0, "config")
        if config is None:
            return None
        shape = ctx.configs.shape(config, fn, ctx.module)
        if langgraph.REMIT_INSPECT_KEY in shape.keys or shape.partial:
            return None
        return ctx.finding(
            call.node,
            f"{ctx.describe_call(call.node)} reads a thread whose saver is remit's cross-process consume gate, "
            f"without the remit_inspect opt-out: if the thread is parked, this read takes the consume claim and "
            f"the real resume is then refused with RemitConsumeConflict.",
            related=(Related(ctx.span(wrap, graph.module), "remit.wrap(..., cross_process_gate=True)"),),
            fix='Pass {"configurable": {..., "remit_inspect": True}} to inspections under the consume gate.',
        )
