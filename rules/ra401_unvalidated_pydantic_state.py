"""RA401: pydantic-model graph state persisted by a checkpointer, node outputs never validated."""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from auditor.analysis.facts import ClassInfo, FunctionInfo
from auditor.analysis.syntax import keyword
from auditor.findings import Finding, Related, Severity
from auditor.frameworks import langgraph, pydantic

from .base import Example, Rule, RuleContext


def pydantic_model(expr: cst.BaseExpression | None, scope: FunctionInfo | None, ctx: RuleContext) -> ClassInfo | None:
    """The project class ``expr`` names if it is a pydantic model (directly or through project bases)."""
    if expr is None:
        return None
    for name in ctx.resolver.names(expr, scope):
        cls = ctx.project.lookup(name, near=ctx.module)
        if isinstance(cls, ClassInfo) and _is_pydantic(cls, ctx, 0):
            return cls
    return None


def _is_pydantic(cls: ClassInfo, ctx: RuleContext, depth: int) -> bool:
    if depth > 5:
        return False
    resolver = ctx.project.resolver(cls.module)
    for dec in cls.node.decorators:
        target = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
        if resolver.names(target, None) & pydantic.DATACLASS:
            return True
    for base in cls.node.bases:
        names = resolver.names(base.value, None)
        if names & pydantic.BASE_MODEL:
            return True
        for n in names:
            parent = ctx.project.lookup(n, near=cls.module)
            if isinstance(parent, ClassInfo) and _is_pydantic(parent, ctx, depth + 1):
                return True
    return False


def _returns_validated(fn: FunctionInfo, state: ClassInfo, ctx: RuleContext) -> bool:
    """Every ``return`` of the node builds the state model (constructor or model_validate)."""
    if not fn.returns:
        return False
    resolver = ctx.project.resolver(fn.module)
    for ret in fn.returns:
        value = ret.value
        if not isinstance(value, cst.Call):
            return False
        names = resolver.call_names(value, fn)
        ok = state.full_name in names or any(
            n == f"{state.full_name}.{m}" for n in names for m in pydantic.VALIDATING_CONSTRUCTORS
        )
        if not ok:
            return False
    return True


class UnvalidatedPydanticState(Rule):
    id = "RA401"
    name = "unvalidated-pydantic-state"
    properties = ("CV",)
    severity = Severity.WARNING
    frameworks = ("langgraph",)
    summary = "Pydantic-model graph state persisted by a checkpointer with node outputs never validated: invalid state is saved silently."
    description = """
A `StateGraph` whose state schema is a pydantic model -- so it *looks*
validated -- is compiled with a checkpointer, and its nodes return plain
dict updates that nothing validates before they are persisted.
"""
    runtime = """
LangGraph validates a pydantic state when it builds a node's *input*, not
when it persists a node's *output*. Measured on langgraph 1.2.24 with state
`items: list[str]` and a node appending `None`: a terminal write is
persisted and nothing raises -- not `invoke`, not `get_state`, not
`get_state_history` (the #6491 class, now silent). A mid-graph invalid
write is persisted, then the next node never runs and every read of the
thread raises `ValidationError`; the checkpointer still returns the invalid
value. The corrupt record is durable before anyone hears about it.
TypedDict and dataclass states promise no validation and are not flagged.
"""
    fix = """
Validate before persisting: have every node return the model
(`return State(**{**state.model_dump(), "items": items})` or
`State.model_validate(...)`), so an invalid update raises inside the node
and nothing is saved; or wrap the saver with a validating saver, e.g.
`remit.wrap(SqliteSaver, conn, validator=lambda cp: State.model_validate(cp["channel_values"]))`,
which raises `RemitValidityError` before anything is persisted.
"""
    not_flagged = """
- TypedDict and dataclass states (no validation is promised);
- graphs compiled without a checkpointer (nothing is persisted);
- graphs whose checkpointer is `remit.wrap(..., validator=...)`;
- graphs whose every node (resolvable in the project) returns a constructed or `model_validate`d state.
"""

    INVALID = (
        Example(
            """
            from pydantic import BaseModel
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.graph import StateGraph, START, END

            class Cart(BaseModel):
                items: list[str] = []

            def add_item(state: Cart):
                return {"items": state.items + [None]}

            builder = StateGraph(Cart)
            builder.add_node("add", add_item)
            builder.add_edge(START, "add")
            builder.add_edge("add", END)
            graph = builder.compile(checkpointer=InMemorySaver())  # expect: RA401
            """,
            note="A node's dict update is persisted without validation.",
        ),
        Example(
            {
                "app/state.py": """
                    import pydantic

                    class Base(pydantic.BaseModel):
                        trace_id: str = ""

                    class Ticket(Base):
                        priority: int = 0
                    """,
                "app/graph.py": """
                    from langgraph.checkpoint.sqlite import SqliteSaver
                    from langgraph.graph.state import StateGraph as Builder
                    from .state import Ticket

                    def triage(state):
                        return {"priority": "urgent"}

                    def build(conn):
                        g = Builder(state_schema=Ticket)
                        g.add_node("triage", triage)
                        g.set_entry_point("triage")
                        saver = SqliteSaver(conn)
                        return g.compile(checkpointer=saver)  # expect: RA401
                    """,
                "app/__init__.py": "",
            },
            note="The model inherits BaseModel through a project base class in another module.",
        ),
    )
    VALID = (
        Example(
            """
            from typing import TypedDict
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.graph import StateGraph

            class Cart(TypedDict):
                items: list[str]

            def add_item(state: Cart):
                return {"items": state["items"] + ["x"]}

            builder = StateGraph(Cart)
            builder.add_node("add", add_item)
            graph = builder.compile(checkpointer=InMemorySaver())
            """,
            note="TypedDict promises no validation.",
        ),
        Example(
            """
            from pydantic import BaseModel
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.graph import StateGraph

            class Cart(BaseModel):
                items: list[str] = []

            def add_item(state: Cart):
                return Cart(items=state.items + ["x"])

            def checkout(state: Cart):
                return Cart.model_validate({"items": []})

            builder = StateGraph(Cart)
            builder.add_node("add", add_item)
            builder.add_node("checkout", checkout)
            graph = builder.compile(checkpointer=InMemorySaver())
            """,
            note="Every node returns a validated model.",
        ),
        Example(
            """
            from pydantic import BaseModel
            from langgraph.graph import StateGraph

            class Cart(BaseModel):
                items: list[str] = []

            def add_item(state: Cart):
                return {"items": state.items + [None]}

            builder = StateGraph(Cart)
            builder.add_node("add", add_item)
            graph = builder.compile()
            """,
            note="No checkpointer: nothing is persisted.",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        if not ctx.module.uses_any(langgraph.PACKAGES):
            return
        for info in ctx.module.all_calls:
            graph = langgraph.compiled_graph(info.node, info.function, ctx.module, ctx.project)
            if graph is None or not graph.persisted:
                continue
            state = pydantic_model(graph.state_schema, graph.scope, ctx)
            if state is None:
                continue
            wrap = langgraph.remit_wrap_call(graph.checkpointer, graph.scope, graph.module, ctx.project)
            if wrap is not None and keyword(wrap, "validator") is not None:
                continue
            nodes = langgraph.node_functions(graph, ctx.project)
            unvalidated = [(call, fn) for call, fn in nodes if fn is None or not _returns_validated(fn, state, ctx)]
            if nodes and not unvalidated:
                continue
            related = [Related(ctx.span(state.node.name, state.module), f"state schema {state.name} is a pydantic model")]
            for call, fn in unvalidated[:3]:
                if fn is not None:
                    related.append(Related(ctx.span(fn.node.name, fn.module), f"node {fn.qualname} returns an unvalidated update"))
                else:
                    related.append(Related(ctx.span(call), "node whose output is not validated"))
            yield ctx.finding(
                info.node,
                f"The graph's state {state.name} is a pydantic model and this graph is persisted by a checkpointer, "
                f"but node outputs are never validated: LangGraph saves a schema-invalid update silently (#6491), "
                f"and the thread's reads fail later, far from the faulting node.",
                related=related,
            )
