"""RA106: ``durability="exit"`` on an effectful checkpointed LangGraph graph."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

import libcst as cst

from resume_audit.facts.model import FunctionInfo, ModuleFacts
from resume_audit.facts.syntax import argument, bool_value, keyword, receiver, string_value
from resume_audit.findings import Edit, Finding, Related, Severity
from resume_audit.frameworks.langgraph import names as langgraph
from resume_audit.frameworks.langgraph.units import graph_anywhere, project_uses_langgraph
from resume_audit.rules.base import Example, FixExample, Rule, RuleContext

if TYPE_CHECKING:
    from resume_audit.analysis.effects import Effect
    from resume_audit.analysis.queries import Reached

#: what the fix puts in place of "exit": every step's checkpoint and writes stored before the next
#: step starts (langgraph 1.2.24 ``pregel/_loop.py``), so a crash resumes after the last finished node
SYNC = '"sync"'


def _literal(
    expr: cst.BaseExpression | None, scope: FunctionInfo | None, ctx: RuleContext, depth: int = 0
) -> str | bool | None:
    """A string / bool literal, directly or through a local or module variable."""
    if expr is None or depth > 4:
        return None
    s = string_value(expr)
    if s is not None:
        return s
    b = bool_value(expr)
    if b is not None:
        return b
    if isinstance(expr, cst.Name):
        found = ctx.resolver.binding_value(expr.value, scope, ctx.module.order(expr))
        if found is not None and found[0].kind == "assign":
            return _literal(found[0].value, found[1], ctx, depth + 1)
    return None


class DurabilityExit(Rule):
    id = "RA106"
    confirmed_by = ("RA701", "RA708")
    name = "durability-exit"
    properties = ("EO",)
    severity = Severity.ERROR
    frameworks = ("langgraph",)
    #: the mode or the resume can sit in a module that never imports langgraph itself
    triggers = ("durability",)
    summary = 'durability="exit" on an effectful checkpointed LangGraph graph: a crash loses all progress and every completed effect re-fires.'
    description = """
A checkpointed graph (or `@entrypoint` workflow) whose nodes perform side
effects is run with `durability="exit"` -- as an `invoke` / `stream` /
`ainvoke` / `astream` / `batch` keyword, through the deprecated
`checkpoint_during=False`, or through the run config's
`configurable["__pregel_durability"]` (inline, in a config variable, or in
`graph.with_config(...)`). The value may come from a variable.
"""
    runtime = """
With `durability="exit"` LangGraph writes nothing while the run is in
progress: no per-step checkpoint and no `put_writes` (the loop skips them
when `durability == "exit"`, langgraph 1.2.24 `pregel/_loop.py`); the state
is saved once, when the run ends or parks at an interrupt. Measured on
langgraph 1.2.24: a two-node graph run with `durability="exit"` performs one
`put` instead of seven operations, and `durability="exit"` + SIGKILL leaves
no checkpoint at all -- resuming fails with `EmptyInputError`, so the run
starts over and every effect that had already completed fires again. The
default, `durability="async"`, is not this rule (see RA103 for its window).
"""
    fix = """
`resume-audit fix` (a safe fix) writes `durability="sync"` in place of the
exit mode: each step's checkpoint and writes are stored before the next step
starts, so a crash resumes after the last finished node. By hand: drop the
argument (the default `durability="async"` records every step) or
use `durability="sync"` for effectful graphs; keep `"exit"` for graphs
whose nodes have no side effects. Key the effects by an idempotency key
either way.
"""
    not_flagged = """
- `durability="async"` (the default) and `"sync"`;
- graphs with no checkpointer (LangGraph warns that durability has no effect there) and graphs none of whose nodes reach an effect;
- runs whose graph cannot be traced to its `compile(...)` or `@entrypoint` (a graph passed in as a parameter);
- `compile(durability=...)`: `StateGraph.compile` has no such parameter in langgraph 1.2.24 (it raises `TypeError`);
- `graph.with_config(durability="exit")`: it sets a top-level config key that the loop never reads -- measured, the run still checkpoints every step (only `configurable["__pregel_durability"]` reaches the loop).
"""

    INVALID = (
        Example(
            """
            import sqlite3

            import requests
            from langgraph.checkpoint.sqlite import SqliteSaver
            from langgraph.graph import StateGraph

            def ship(state: dict) -> dict:
                requests.post("https://warehouse.example.com/shipments", json=state)
                return {"shipped": True}

            builder = StateGraph(dict)
            builder.add_node("ship", ship)
            builder.set_entry_point("ship")
            graph = builder.compile(checkpointer=SqliteSaver(sqlite3.connect("runs.db")))

            def run(order: dict, thread_id: str) -> dict:
                return graph.invoke(order, {"configurable": {"thread_id": thread_id}}, durability="exit")  # expect: RA106
            """,
            note="Inline keyword.",
        ),
        Example(
            {
                "app/graph.py": """
                    import stripe
                    from langgraph.checkpoint.memory import InMemorySaver
                    from langgraph.graph import StateGraph

                    def charge(state: dict) -> dict:
                        stripe.PaymentIntent.create(amount=state["cents"], currency="eur")
                        return {}

                    def build_graph():
                        builder = StateGraph(dict)
                        builder.add_node("charge", charge)
                        builder.set_entry_point("charge")
                        return builder.compile(checkpointer=InMemorySaver())
                    """,
                "app/runner.py": """
                    from .graph import build_graph

                    FAST = "exit"

                    async def run(order: dict, thread_id: str) -> list:
                        graph = build_graph()
                        cfg = {"configurable": {"thread_id": thread_id}}
                        return [c async for c in graph.astream(order, cfg, durability=FAST)]  # expect: RA106
                    """,
                "app/__init__.py": "",
            },
            note="The graph comes from a factory in a sibling module; the mode from a constant; async streaming.",
        ),
        Example(
            """
            import smtplib

            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.graph import StateGraph

            def mail(state: dict) -> dict:
                with smtplib.SMTP("localhost") as smtp:
                    smtp.sendmail("a@example.com", [state["to"]], "hello")
                return {}

            builder = StateGraph(dict)
            builder.add_node("mail", mail)
            builder.set_entry_point("mail")
            graph = builder.compile(checkpointer=InMemorySaver())

            def run_fast(state: dict, thread_id: str):
                config = {"configurable": {"thread_id": thread_id}}
                config["configurable"]["__pregel_durability"] = "exit"  # expect: RA106
                return graph.invoke(state, config)

            def run_legacy(state: dict, thread_id: str):
                return graph.invoke(state, {"configurable": {"thread_id": thread_id}}, checkpoint_during=False)  # expect: RA106
            """,
            note="The configurable key set on a config variable, and the deprecated checkpoint_during=False.",
        ),
    )
    VALID = (
        Example(
            """
            import requests
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.graph import StateGraph

            def ship(state: dict) -> dict:
                requests.post("https://warehouse.example.com/shipments", json=state)
                return {}

            builder = StateGraph(dict)
            builder.add_node("ship", ship)
            builder.set_entry_point("ship")
            graph = builder.compile(checkpointer=InMemorySaver())

            def run(order: dict, thread_id: str):
                return graph.invoke(order, {"configurable": {"thread_id": thread_id}}, durability="async")
            """,
            note='"async" is the default and records every step.',
        ),
        Example(
            """
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.graph import StateGraph

            def summarize(state: dict) -> dict:
                return {"summary": state["text"][:100]}

            builder = StateGraph(dict)
            builder.add_node("summarize", summarize)
            builder.set_entry_point("summarize")
            graph = builder.compile(checkpointer=InMemorySaver())

            def run(text: str, thread_id: str):
                return graph.invoke({"text": text}, {"configurable": {"thread_id": thread_id}}, durability="exit")
            """,
            note="No node has a side effect: re-running it after a crash is harmless.",
        ),
        Example(
            """
            import requests
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.graph import StateGraph

            def ship(state: dict) -> dict:
                requests.post("https://warehouse.example.com/shipments", json=state)
                return {}

            builder = StateGraph(dict)
            builder.add_node("ship", ship)
            builder.set_entry_point("ship")
            graph = builder.compile(checkpointer=InMemorySaver())
            fast = graph.with_config(durability="exit")

            def run(order: dict, thread_id: str):
                return fast.invoke(order, {"configurable": {"thread_id": thread_id}})
            """,
            note="with_config(durability=...) never reaches the loop (measured: every step is still checkpointed).",
        ),
        Example(
            """
            import requests
            from langgraph.graph import StateGraph

            def ship(state: dict) -> dict:
                requests.post("https://warehouse.example.com/shipments", json=state)
                return {}

            builder = StateGraph(dict)
            builder.add_node("ship", ship)
            builder.set_entry_point("ship")
            graph = builder.compile()

            def run(order: dict):
                return graph.invoke(order, durability="exit")
            """,
            note="No checkpointer: durability has no effect.",
        ),
    )

    FIXES = (
        FixExample(
            """
            import requests
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.graph import StateGraph

            def ship(state: dict) -> dict:
                requests.post("https://warehouse.example.com/shipments", json=state)
                return {}

            builder = StateGraph(dict)
            builder.add_node("ship", ship)
            builder.set_entry_point("ship")
            graph = builder.compile(checkpointer=InMemorySaver())

            def run(order: dict, thread_id: str):
                return graph.invoke(
                    order,
                    {"configurable": {"thread_id": thread_id}},
                    # faster, we thought
                    durability = "exit",  # keep: see ADR-12
                )
            """,
            """
            import requests
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.graph import StateGraph

            def ship(state: dict) -> dict:
                requests.post("https://warehouse.example.com/shipments", json=state)
                return {}

            builder = StateGraph(dict)
            builder.add_node("ship", ship)
            builder.set_entry_point("ship")
            graph = builder.compile(checkpointer=InMemorySaver())

            def run(order: dict, thread_id: str):
                return graph.invoke(
                    order,
                    {"configurable": {"thread_id": thread_id}},
                    # faster, we thought
                    durability = "sync",  # keep: see ADR-12
                )
            """,
            note="Only the value changes: the comments and the spacing inside the call stay.",
        ),
        FixExample(
            """
            import requests
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.graph import StateGraph

            FAST = "exit"

            def ship(state: dict) -> dict:
                requests.post("https://warehouse.example.com/shipments", json=state)
                return {}

            builder = StateGraph(dict)
            builder.add_node("ship", ship)
            builder.set_entry_point("ship")
            graph = builder.compile(checkpointer=InMemorySaver())

            def run(order: dict, thread_id: str):
                config = {"configurable": {"thread_id": thread_id}}
                config["configurable"]["__pregel_durability"] = "exit"
                graph.invoke(order, config)
                return graph.invoke(order, {"configurable": {"thread_id": thread_id}}, durability=FAST)

            def legacy(order: dict, thread_id: str):
                return graph.invoke(order, {"configurable": {"thread_id": thread_id}}, checkpoint_during=False)
            """,
            """
            import requests
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.graph import StateGraph

            FAST = "exit"

            def ship(state: dict) -> dict:
                requests.post("https://warehouse.example.com/shipments", json=state)
                return {}

            builder = StateGraph(dict)
            builder.add_node("ship", ship)
            builder.set_entry_point("ship")
            graph = builder.compile(checkpointer=InMemorySaver())

            def run(order: dict, thread_id: str):
                config = {"configurable": {"thread_id": thread_id}}
                config["configurable"]["__pregel_durability"] = "sync"
                graph.invoke(order, config)
                return graph.invoke(order, {"configurable": {"thread_id": thread_id}}, durability="sync")

            def legacy(order: dict, thread_id: str):
                return graph.invoke(order, {"configurable": {"thread_id": thread_id}}, durability="sync")
            """,
            note="The configurable key, a constant (replaced at the call: other users of the constant keep it) "
            "and the deprecated checkpoint_during=False, which becomes the current keyword.",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        if not ctx.module.uses_any(langgraph.PACKAGES) and not project_uses_langgraph(ctx.project):
            return
        for info in ctx.module.all_calls:
            f = info.node.func
            if not isinstance(f, cst.Attribute):
                continue
            method = f.attr.value
            hits: list[tuple[cst.CSTNode, str, tuple[Edit, ...]]] = []
            if method in langgraph.DURABILITY_RUN_METHODS:
                arg = keyword(info.node, langgraph.DURABILITY_KWARG)
                if arg is not None and _literal(arg.value, info.function, ctx) == langgraph.DURABILITY_EXIT:
                    hits.append((arg, 'durability="exit"', (ctx.replace(arg.value, SYNC),)))
                during = keyword(info.node, langgraph.CHECKPOINT_DURING_KWARG)
                if during is not None and _literal(during.value, info.function, ctx) is False:
                    # the deprecated keyword becomes the current one; not when both are spelled out
                    rename = (
                        ()
                        if arg is not None or during.keyword is None
                        else (ctx.replace(during.keyword, langgraph.DURABILITY_KWARG), ctx.replace(during.value, SYNC))
                    )
                    hits.append(
                        (during, 'checkpoint_during=False (the deprecated spelling of durability="exit")', rename)
                    )
                config = argument(info.node, 1, "config")
                hits.extend(self._config_hits(config, info.function, ctx))
            elif method == "with_config":
                hits.extend(self._config_hits(argument(info.node, 0, "config"), info.function, ctx))
                cfg_kw = keyword(info.node, "configurable")
                if cfg_kw is not None:
                    hits.extend(
                        self._config_hits(
                            cst.Dict([cst.DictElement(cst.SimpleString('"configurable"'), cfg_kw.value)]),
                            info.function,
                            ctx,
                            cfg_kw,
                        )
                    )
            if not hits:
                continue
            graph = self._graph(f.value, info.function, ctx)
            if graph is None:
                continue
            effect = self._graph_effect(graph, ctx)
            if effect is None:
                continue
            anchor, anchor_module, node_fn, reached = effect
            for node, spelled, edits in hits:
                yield ctx.finding(
                    node,
                    f"{spelled} runs a checkpointed graph whose {node_fn} performs {reached.hit.label} "
                    f"({reached.hit.kind}). In exit mode LangGraph saves nothing until the run ends: a crash mid-run "
                    f"leaves no checkpoint (resume fails with EmptyInputError), the run starts over, and every "
                    f"effect that had already completed fires again.",
                    related=(
                        Related(ctx.span(anchor, anchor_module), "the graph, persisted by a checkpointer"),
                        Related(
                            ctx.span(reached.calls[-1].node, reached.modules[-1]),
                            f"the {reached.hit.kind} effect that re-fires",
                        ),
                    ),
                    autofix=ctx.autofix('durability="sync": every step is saved before the next starts', *edits)
                    if edits
                    else None,
                )

    def _config_hits(
        self,
        config: cst.BaseExpression | None,
        scope: FunctionInfo | None,
        ctx: RuleContext,
        node_override: cst.CSTNode | None = None,
    ) -> list[tuple[cst.CSTNode, str, tuple[Edit, ...]]]:
        if config is None:
            return []
        shape = ctx.configs.shape(config, scope, ctx.module)
        if langgraph.DURABILITY_CONFIG_KEY not in shape.keys:
            return []
        origin = shape.origins.get(langgraph.DURABILITY_CONFIG_KEY)
        if origin is None:
            return []
        node, where = origin
        value: Any = node
        if isinstance(node, cst.AssignTarget):
            assign = where.parent(node)
            value = assign.value if isinstance(assign, cst.Assign) else None
        if isinstance(value, cst.Arg):
            value = value.value
        if value is None or _literal(value, scope, ctx) != langgraph.DURABILITY_EXIT:
            return []
        if where is not ctx.module:
            return []
        target = (
            node_override
            if node_override is not None
            else (node if not isinstance(node, cst.AssignTarget) else where.parent(node))
        )
        if target is None:
            return []
        return [(target, f'configurable["{langgraph.DURABILITY_CONFIG_KEY}"] = "exit"', (ctx.replace(value, SYNC),))]

    def _graph(
        self, receiver: cst.BaseExpression, scope: FunctionInfo | None, ctx: RuleContext, depth: int = 0
    ) -> langgraph.CompiledGraph | langgraph.Entrypoint | None:
        if depth > 4:
            return None
        expr = receiver
        if isinstance(expr, cst.Name):
            found = ctx.resolver.binding_value(expr.value, scope, ctx.module.order(expr))
            configured = _with_config_of(found[0].value) if found is not None and found[0].kind == "assign" else None
            if found is not None and configured is not None:
                return self._graph(configured, found[1], ctx, depth + 1)
        configured = _with_config_of(expr)
        if configured is not None:
            return self._graph(configured, scope, ctx, depth + 1)
        return graph_anywhere(expr, scope, ctx.module, ctx.project)

    def _graph_effect(
        self, graph: langgraph.CompiledGraph | langgraph.Entrypoint, ctx: RuleContext
    ) -> tuple[cst.CSTNode, ModuleFacts, str, Reached[Effect]] | None:
        """(anchor, its module, "node X", Reached) for the graph's first effectful node, if persisted."""
        if not graph.persisted:
            return None
        project = ctx.project
        if isinstance(graph, langgraph.Entrypoint):
            fns = [graph.function]
            anchor, anchor_module = graph.node, graph.function.module
        else:
            fns = [fn for _, fn in langgraph.all_node_functions(graph, project) if fn is not None]
            anchor, anchor_module = graph.compile_call, graph.module
        for fn in fns:
            for call in fn.calls:
                reached = ctx.effect_reached(call, fn.module)
                if reached is not None:
                    kind = "entrypoint" if isinstance(graph, langgraph.Entrypoint) else "node"
                    return anchor, anchor_module, f"{kind} '{fn.qualname}'", reached
        return None


def _with_config_of(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """``graph`` for ``graph.with_config(...)``, else None."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "with_config":
        return receiver(expr)
    return None
