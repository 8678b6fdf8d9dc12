"""RA401: pydantic-model graph state persisted by a checkpointer, node outputs never validated."""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from resume_audit.facts.model import ClassInfo, FunctionInfo
from resume_audit.facts.syntax import keyword, string_value
from resume_audit.findings import Finding, Related, Severity
from resume_audit.frameworks import pydantic
from resume_audit.frameworks.langgraph import names as langgraph
from resume_audit.rules.base import Example, Rule, RuleContext


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
    """Every ``return`` of the node hands LangGraph a validated value: the state model itself
    (constructor or ``model_validate``), or an update dict each of whose values is validated
    already (see :func:`_validated_value`)."""
    if not fn.returns:
        return False
    return all(ret.value is not None and _validated_value(ret.value, fn, state, ctx, 0) for ret in fn.returns)


_PLAIN_LITERALS = (cst.SimpleString, cst.ConcatenatedString, cst.Integer, cst.Float)


def _validated_value(
    value: cst.BaseExpression, fn: FunctionInfo, state: ClassInfo, ctx: RuleContext, depth: int
) -> bool:
    """A value pydantic has already checked, or one that cannot be wrong for a typed field:

    * an instance of a pydantic model -- the state model or any other (``Plan(...)``,
      ``Review.model_validate(raw)``), directly, through a local name, or as a parameter
      annotated with the model (a tool's arguments are parsed into it);
    * a field of such an instance (``plan.steps``): it carries the model's type;
    * a string or number literal for a field annotated with that very type (``"done"`` for
      ``status: str``; ``"urgent"`` for ``priority: int`` is exactly the invalid write);
    * a LangChain message (``ToolMessage(...)``: a pydantic model too), and a list of such values;
    * an update dict (or ``Command(update=...)``) whose every value is one of these.

    Anything else -- ``state.items + [x]``, a model's raw JSON, a value from a tool call -- is
    saved unchecked."""
    if depth > 4:
        return False
    resolver = ctx.project.resolver(fn.module)
    if isinstance(value, cst.Dict):
        for el in value.elements:
            if not isinstance(el, cst.DictElement):
                return False
            if isinstance(el.value, _PLAIN_LITERALS):
                if not _literal_fits(el.key, el.value, state):
                    return False
            elif not _validated_value(el.value, fn, state, ctx, depth + 1):
                return False
        return True
    if isinstance(value, (cst.List, cst.Tuple)):
        return all(
            isinstance(el, cst.Element) and _validated_value(el.value, fn, state, ctx, depth + 1)
            for el in value.elements
        )
    if isinstance(value, cst.Call):
        names = resolver.call_names(value, fn)
        if names & langgraph.COMMAND:
            update = keyword(value, "update")
            return update is None or _validated_value(update.value, fn, state, ctx, depth + 1)
        if any(n.startswith(pydantic.LIBRARY_MODEL_PREFIXES) for n in names):
            return True
        for name in names:
            owner = name.rsplit(".", 1)[0] if name.rsplit(".", 1)[-1] in pydantic.VALIDATING_CONSTRUCTORS else name
            cls = ctx.project.lookup(owner, near=fn.module)
            if isinstance(cls, ClassInfo) and _is_pydantic(cls, ctx, 0):
                return True
        return False
    if isinstance(value, cst.Name):
        found = resolver.binding_value(value.value, fn, fn.module.order(value))
        if found is None or found[1] is not fn:
            return False
        if found[0].kind == "param-annotation":
            # ``def record(progress: Progress)``: a tool's arguments are parsed into the model
            return any(
                isinstance(cls := ctx.project.lookup(n, near=fn.module), ClassInfo) and _is_pydantic(cls, ctx, 0)
                for n in resolver.names(found[0].value, fn.parent)
            )
        if found[0].kind != "assign":
            return False
        return _validated_value(found[0].value, fn, state, ctx, depth + 1)
    if isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name):
        # a field of a validated model bound in this node (``plan.steps``); not the incoming state
        param_names = fn.param_names()
        if param_names and value.value.value == param_names[0]:
            return False
        return _validated_value(value.value, fn, state, ctx, depth + 1)
    return False


_LITERAL_TYPES = {cst.SimpleString: "str", cst.ConcatenatedString: "str", cst.Integer: "int", cst.Float: "float"}


def _literal_fits(key: cst.BaseExpression, value: cst.BaseExpression, state: ClassInfo) -> bool:
    """Is the literal ``value`` of the type the state model declares for field ``key``?"""
    field = string_value(key)
    if field is None:
        return False
    for stmt in state.node.body.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.target.value == field:
                annotation = small.annotation.annotation
                return isinstance(annotation, cst.Name) and annotation.value == _LITERAL_TYPES.get(type(value))
    return False


def _unvalidated_tools(
    add_call: cst.Call, graph: langgraph.CompiledGraph, state: ClassInfo, ctx: RuleContext
) -> list[FunctionInfo]:
    """Tools of a ``ToolNode`` added as a node that write the state by returning
    ``Command(update=...)`` with an unvalidated value. A tool returning anything else
    becomes a ToolMessage, which LangGraph builds itself."""
    scope = graph.module.enclosing_function(add_call)
    positional = [a.value for a in add_call.args if a.keyword is None]
    target = keyword(add_call, "action")
    expr = target.value if target is not None else (positional[1] if len(positional) > 1 else None)
    out = []
    for tool in langgraph.tool_functions(expr, scope, graph.module, ctx.project):
        resolver = ctx.project.resolver(tool.module)
        commands = [
            r.value
            for r in tool.returns
            if isinstance(r.value, cst.Call) and resolver.call_names(r.value, tool) & langgraph.COMMAND
        ]
        if any(not _validated_value(c, tool, state, ctx, 0) for c in commands):
            out.append(tool)
    return out


class UnvalidatedPydanticState(Rule):
    id = "RA401"
    confirmed_by = ("RA706",)
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
    no_autofix = """
Validating node outputs changes when the run fails (at the node, not
later), and which model validates is the program's choice.
"""
    not_flagged = """
- TypedDict and dataclass states (no validation is promised);
- graphs compiled without a checkpointer (nothing is persisted);
- graphs whose checkpointer is `remit.wrap(..., validator=...)`;
- graphs whose every node (resolvable in the project) returns a validated value: the state
  model itself, or an update dict whose values are pydantic models (`Plan(...)`,
  `Review.model_validate(raw)`, a model from `with_structured_output`... bound in the node),
  fields of such models (`plan.steps`), or literals of the field's declared type;
- graphs whose nodes cannot be found (a builder filled in elsewhere): unknown, not clean and
  not a hazard.
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
        Example(
            """
            from pydantic import BaseModel
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.graph import StateGraph

            class Plan(BaseModel):
                steps: list[str]

            class Job(BaseModel):
                plan: Plan | None = None
                steps: list[str] = []
                status: str = "new"

            def plan(state: Job, raw: dict):
                parsed = Plan.model_validate(raw)
                return {"plan": parsed, "steps": parsed.steps, "status": "planned"}

            builder = StateGraph(Job)
            builder.add_node("plan", plan)
            graph = builder.compile(checkpointer=InMemorySaver())
            """,
            note="The update's values are a validated model, one of its fields, and a literal of the field's type.",
        ),
        Example(
            """
            from pydantic import BaseModel
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.graph import StateGraph

            from .nodes import register_nodes

            class Job(BaseModel):
                status: str = "new"

            builder = StateGraph(Job)
            register_nodes(builder)
            graph = builder.compile(checkpointer=InMemorySaver())
            """,
            note="The nodes are added elsewhere and cannot be seen: unknown, not reported.",
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
            nodes = langgraph.all_node_functions(graph, ctx.project)
            # a node whose function cannot be found is unknown, not unvalidated; no nodes found
            # at all (a builder filled elsewhere) says nothing either way
            unvalidated = [(fn, "node") for _, fn in nodes if fn is not None and not _returns_validated(fn, state, ctx)]
            unvalidated += [
                (tool, "tool")
                for call, fn in nodes
                if fn is None
                for tool in _unvalidated_tools(call, graph, state, ctx)
            ]
            if not unvalidated:
                continue
            related = [
                Related(ctx.span(state.node.name, state.module), f"state schema {state.name} is a pydantic model")
            ]
            for fn, kind in unvalidated[:3]:
                related.append(
                    Related(ctx.span(fn.node.name, fn.module), f"{kind} {fn.qualname} returns an unvalidated update")
                )
            yield ctx.finding(
                info.node,
                f"The graph's state {state.name} is a pydantic model and this graph is persisted by a checkpointer, "
                f"but node outputs are never validated: LangGraph saves a schema-invalid update silently (#6491), "
                f"and the thread's reads fail later, far from the faulting node.",
                related=related,
            )
