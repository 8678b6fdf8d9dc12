"""RA201: ``Command(resume=...)`` sent to a ``checkpoint_id`` with no fork discriminator."""

from __future__ import annotations

from typing import Iterable, Iterator

import libcst as cst

from resume_audit.facts.model import CallInfo, FunctionInfo
from resume_audit.facts.syntax import argument, bool_value, keyword, receiver
from resume_audit.findings import Finding, Related, Severity
from resume_audit.frameworks.langgraph import names as langgraph
from resume_audit.frameworks.langgraph.resume_plane import resume_command
from resume_audit.rules.base import Example, Rule, RuleContext


def run_calls(ctx: RuleContext) -> Iterator[CallInfo]:
    """Every ``<graph>.invoke/stream/...(input, config)`` call in the module, with its function."""
    for info in ctx.module.all_calls:
        f = info.node.func
        if isinstance(f, cst.Attribute) and f.attr.value in langgraph.RUN_METHODS:
            yield info


class ForkWithoutDiscriminator(Rule):
    id = "RA201"
    confirmed_by = ("RA703",)
    name = "fork-without-discriminator"
    properties = ("FD", "FI")
    severity = Severity.ERROR
    frameworks = ("langgraph",)
    summary = "Command(resume=...) addressed to a checkpoint_id with no fork discriminator: a second answer is served the first."
    description = """
A resume is sent with a config that names a `checkpoint_id` -- inline,
through a variable, a helper that returns the config, or a state
snapshot's `.config` -- as time travel or "let the human change their
answer" code does, and nothing tells the checkpointer that this is a fork
rather than a retry. Both `Command(resume=value)` and the interrupt-id map
form `Command(resume={interrupt_id: value})` are covered.
"""
    runtime = """
LangGraph records the first resume value as a pending write on the
interrupt checkpoint. A later `invoke(Command(resume=other), {thread_id,
checkpoint_id})` addressed to the same checkpoint is **served the recorded
first value**; the new value is durably written and never consulted
(LangGraph #6663). Measured on langgraph 1.2.24 with InMemorySaver and
SqliteSaver, in both invocation forms: resume `True`, then `False` -- both
runs see `True`. A human who changes their answer gets the first answer's
outcome, silently. The wire has no bit that says "fork, not retry" (FI), so
no saver can tell the two apart without one.
"""
    fix = """
Give the fork an explicit discriminator the saver honours: wrap the saver
with remit (`saver = remit.wrap(SqliteSaver, conn)`, which treats an
explicit `checkpoint_id` as a fork, or `remit.wrap(..., fork_on_explicit_checkpoint=False)`
plus `"remit_fork": True` in `configurable`). Without remit, do not re-answer
a consumed interrupt: fork from the checkpoint *before* the interrupting
node with `graph.update_state(...)` and resume the new branch at its own
interrupt.
"""
    no_autofix = """
A fork discriminator is a change to the wire protocol between the caller
and the graph (what a second answer looks like), not to one call.
"""
    not_flagged = """
- resumes addressed by `thread_id` only (the ordinary path: a repeated resume there is a retry and is inert, which is CO working);
- configs whose `checkpoint_id` cannot be established statically (a parameter passed in from elsewhere);
- configs that carry a fork discriminator key (`remit_fork`, or any `configurable` key naming a fork);
- graphs compiled with a `remit.wrap(...)` checkpointer in the same module (explicit checkpoint ids are forks there).
"""

    INVALID = (
        Example(
            """
            from langgraph.types import Command

            def change_answer(graph, thread_id, checkpoint_id, new_answer):
                config = {"configurable": {"thread_id": thread_id, "checkpoint_id": checkpoint_id}}
                return graph.invoke(Command(resume=new_answer), config)  # expect: RA201
            """,
            note="The config is built in a variable.",
        ),
        Example(
            """
            from langgraph.types import Command

            def re_answer(graph, thread_id, answer):
                snapshot = graph.get_state({"configurable": {"thread_id": thread_id}})
                interrupt_id = snapshot.interrupts[0].id
                return graph.invoke(Command(resume={interrupt_id: answer}), snapshot.config)  # expect: RA201
            """,
            note="A snapshot's .config always names its checkpoint; interrupt-id map form.",
        ),
        Example(
            """
            import langgraph.types as lgt

            def at_checkpoint(thread_id, checkpoint_id):
                return {"configurable": {"thread_id": thread_id, "checkpoint_id": checkpoint_id}}

            async def fork(graph, thread_id, checkpoint_id, value):
                cmd = lgt.Command(resume=value)  # expect: RA201
                async for _ in graph.astream(cmd, at_checkpoint(thread_id, checkpoint_id)):
                    pass
            """,
            note="The config comes from a helper; the command from a variable; async streaming.",
        ),
    )
    VALID = (
        Example(
            """
            from langgraph.types import Command

            def answer(graph, thread_id, value):
                return graph.invoke(Command(resume=value), {"configurable": {"thread_id": thread_id}})
            """,
            note="Ordinary resume by thread only.",
        ),
        Example(
            """
            import remit
            from langgraph.checkpoint.sqlite import SqliteSaver
            from langgraph.graph import StateGraph
            from langgraph.types import Command

            def build(conn, State, node):
                builder = StateGraph(State)
                builder.add_node("ask", node)
                builder.set_entry_point("ask")
                return builder.compile(checkpointer=remit.wrap(SqliteSaver, conn))

            def fork(conn, State, node, thread_id, checkpoint_id, value):
                graph = build(conn, State, node)
                cfg = {"configurable": {"thread_id": thread_id, "checkpoint_id": checkpoint_id, "remit_fork": True}}
                return graph.invoke(Command(resume=value), cfg)
            """,
            note="The config carries remit's explicit fork flag.",
        ),
        Example(
            """
            from langgraph.types import Command

            def replay(graph, thread_id, checkpoint_id):
                cfg = {"configurable": {"thread_id": thread_id, "checkpoint_id": checkpoint_id}}
                return graph.invoke(None, cfg)
            """,
            note="Time-travel replay without a new resume value is not a fork of an answer.",
        ),
        Example(
            """
            import remit
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.graph import StateGraph
            from langgraph.types import Command

            def build(State, node):
                builder = StateGraph(State)
                builder.add_node("ask", node)
                return builder.compile(checkpointer=remit.wrap(InMemorySaver))

            def fork(State, node, thread_id, checkpoint_id, value):
                graph = build(State, node)
                cfg = {"configurable": {"thread_id": thread_id, "checkpoint_id": checkpoint_id}}
                return graph.invoke(Command(resume=value), cfg)
            """,
            note="remit.wrap treats an explicit checkpoint_id as a fork (the graph comes from a factory).",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        if not _project_uses_langgraph(ctx):
            return
        for info in run_calls(ctx):
            fn = info.function
            command = resume_command(argument(info.node, 0, "input"), fn, ctx)
            if command is None:
                continue
            config = argument(info.node, 1, "config")
            if config is None:
                continue
            shape = ctx.configs.shape(config, fn, ctx.module)
            if "checkpoint_id" not in shape.keys:
                continue
            if any(langgraph.is_fork_discriminator(k) for k in shape.keys):
                continue
            if _remit_forks_explicit_checkpoints(info.node, fn, ctx):
                continue
            origin = shape.origins.get("checkpoint_id")
            related = [Related(ctx.span(info.node), f"resumed here with {ctx.describe_call(info.node)}")]
            if origin is not None:
                node, where = origin
                if where is not ctx.module or where.line(node) != info.line:
                    related.append(Related(ctx.span(node, where), "the config names a checkpoint_id here"))
            resume_value = keyword(command, "resume").value  # type: ignore[union-attr]
            form = "interrupt-id map" if isinstance(resume_value, cst.Dict) else "bare"
            yield ctx.finding(
                command,
                f"Command(resume=...) ({form} form) is sent to an explicit checkpoint_id with no fork discriminator. "
                f"If that interrupt was already answered, LangGraph serves the first recorded answer and silently "
                f"ignores this one (#6663): a changed human decision runs the old decision's branch.",
                related=related,
            )


def _project_uses_langgraph(ctx: RuleContext) -> bool:
    return ctx.module.uses_any(langgraph.PACKAGES)


def _remit_forks_explicit_checkpoints(call: cst.Call, fn: FunctionInfo | None, ctx: RuleContext) -> bool:
    """Is the receiver a graph compiled with ``remit.wrap(...)`` that treats explicit checkpoint ids as forks?"""
    obj = receiver(call)
    graph = langgraph.graph_of(obj, fn, ctx.module, ctx.project) if obj is not None else None
    if graph is None:
        return False
    wrap = langgraph.remit_wrap_call(graph.checkpointer, graph.scope, graph.module, ctx.project)
    if wrap is None:
        return False
    explicit = keyword(wrap, "fork_on_explicit_checkpoint")
    return explicit is None or bool_value(explicit.value) is not False
