"""RA303: a ``thread_id`` (or CrewAI persisted id) that is a constant or comes from non-durable state."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Iterator

import libcst as cst

from resume_audit.analysis.flow.engine import flow_of
from resume_audit.analysis.flow.values import Constant, Instance
from resume_audit.facts.model import FunctionInfo, ModuleFacts
from resume_audit.facts.syntax import argument, dict_items, keyword, receiver, string_value
from resume_audit.facts.walk import visit_fast
from resume_audit.findings import Finding, Related, Severity
from resume_audit.frameworks.classes import instance_class, module_constant
from resume_audit.frameworks.crewai import names as crewai
from resume_audit.frameworks.langgraph import names as langgraph
from resume_audit.handlers import web
from resume_audit.handlers.streamlit import session_state_values
from resume_audit.rules.base import Example, Rule, RuleContext

if TYPE_CHECKING:
    from resume_audit.analysis.project import Project

#: Packages whose decorators mark a function as serving many callers where the handler catalog
#: (:mod:`resume_audit.handlers.web`, asked first) does not know the registration.
_SERVING_ROOTS = frozenset(
    {
        "fastapi",
        "flask",
        "starlette",
        "quart",
        "sanic",
        "aiohttp",
        "litestar",
        "django",
        "ninja",
        "celery",
        "dramatiq",
        "rq",
        "huey",
        "faststream",
        "kombu",
        "socketio",
        "slack_bolt",
        "telegram",
        "aiogram",
        "discord",
        "chainlit",
        "functions_framework",
        "azure",
        "modal",
    }
)
#: Modules whose top level re-runs per user session (Streamlit reruns the script; Gradio/Chainlit callbacks).
_SESSION_SCRIPT_ROOTS = ("streamlit", "gradio", "chainlit")
_IDENTITY_PARAM = re.compile(
    r"(^|_)(user|users|session|conversation|convo|chat|customer|tenant|account|thread|request|req|ws|websocket|sender|caller|member)(_?id|_?key|_?name)?$",
    re.IGNORECASE,
)
_TEST_PATH = re.compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*\.py$|_test\.py$|(^|/)conftest\.py$")

_CONSTANT_KINDS = (cst.SimpleString, cst.ConcatenatedString, cst.Integer)


@dataclass(frozen=True)
class Site:
    """One place a run id is given: the value node and what it addresses."""

    value: cst.BaseExpression
    scope: FunctionInfo | None
    #: "langgraph" (configurable.thread_id) or "crewai" (kickoff inputs id)
    kind: str
    #: the config / kickoff expression, for finding the run it addresses
    anchor: cst.CSTNode


# -- where ids are given ----------------------------------------------------------


def _thread_id_sites(module: ModuleFacts) -> Iterator[tuple[cst.BaseExpression, cst.CSTNode]]:
    """``{"configurable": {"thread_id": X}}``, ``configurable={"thread_id": X}``,
    ``{"configurable": dict(thread_id=X)}``, ``cfg["configurable"]["thread_id"] = X``."""
    found: list[tuple[cst.BaseExpression, cst.CSTNode]] = []

    def configurable_value(value: cst.BaseExpression, anchor: cst.CSTNode) -> None:
        if isinstance(value, cst.Dict):
            for key, v in dict_items(value):
                if key == "thread_id":
                    found.append((v, anchor))
        elif isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "dict":
            arg = keyword(value, "thread_id")
            if arg is not None:
                found.append((arg.value, anchor))

    class _V(cst.CSTVisitor):
        def visit_Dict(self, node: cst.Dict) -> None:
            for key, value in dict_items(node):
                if key == "configurable":
                    configurable_value(value, node)

        def visit_Call(self, node: cst.Call) -> None:
            arg = keyword(node, "configurable")
            if arg is not None:
                configurable_value(arg.value, node)

        def visit_Assign(self, node: cst.Assign) -> None:
            for t in node.targets:
                tgt = t.target
                if _subscript_key(tgt) == "thread_id" and _subscript_key(getattr(tgt, "value", None)) == "configurable":
                    found.append((node.value, node))

    visit_fast(module.tree, _V())
    return iter(found)


def _thread_id_params(fn: FunctionInfo, project: Project) -> frozenset[str]:
    """Parameters of ``fn`` it puts in a run config as the ``thread_id`` itself."""

    def find() -> frozenset[str]:
        if "thread_id" not in fn.module.source:
            return frozenset()
        return frozenset(
            value.value
            for value, _ in _thread_id_sites(fn.module)
            if isinstance(value, cst.Name)
            and fn.module.enclosing_function(value) is fn
            and fn.param(value.value) is not None
        )

    return project.cached("ra303-thread-id-params", id(fn), find)


def _subscript_key(expr: cst.BaseExpression | None) -> str | None:
    if isinstance(expr, cst.Subscript) and expr.slice:
        el = expr.slice[0].slice
        if isinstance(el, cst.Index):
            return string_value(el.value)
    return None


# -- what the id is ---------------------------------------------------------------


class _Classifier:
    """constant / non-durable / None (anything else: a parameter, a uuid, a request field...)."""

    def __init__(self, module: ModuleFacts, project: Project) -> None:
        self.module = module
        self.project = project
        #: module names rebound at run time (``global n`` in a function, ``n += 1`` anywhere)
        self.mutated = module.rebound_names
        #: where a constant id was minted when that is not at the site (a session-state default)
        self.origin: cst.CSTNode | None = None

    def classify(self, expr: cst.BaseExpression, scope: FunctionInfo | None, depth: int = 0) -> tuple[str, str] | None:
        """("constant" | "reused" | "non-durable", description) or None. "reused": values a process
        hands out again (``id()``, ``len()`` of a list that shrinks); "non-durable": counters that only
        repeat across processes."""
        if depth > 6:
            return None
        if isinstance(expr, _CONSTANT_KINDS):
            return "constant", self.module.code(expr)
        if isinstance(expr, cst.FormattedString):
            parts = [p for p in expr.parts if isinstance(p, cst.FormattedStringExpression)]
            kinds = [self.classify(p.expression, scope, depth + 1) for p in parts]
            if any(k is None for k in kinds):
                return None
            worst = _worst(kinds)  # type: ignore[arg-type]
            return worst if worst is not None else ("constant", self.module.code(expr))
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Modulo)):
            left, right = self.classify(expr.left, scope, depth + 1), self.classify(expr.right, scope, depth + 1)
            if left is None or right is None:
                return None
            worst = _worst([left, right])
            return worst if worst is not None else ("constant", self.module.code(expr))
        if isinstance(expr, cst.BooleanOperation) and isinstance(expr.operator, cst.Or):
            # ``request.thread_id or str(uuid4())`` where the field defaults to a non-empty constant: a
            # request that omits the field gets the default, and the fallback never runs
            default = self._field_default(expr.left, scope)
            if default is not None:
                return "constant", default
        if isinstance(expr, (cst.IfExp, cst.BooleanOperation)):
            # ``task.id if task.id is not None else str(len(store) + 1)``, ``body.id or next(counter)``:
            # the branch that mints the id decides whenever it runs, whatever the other branch is
            branches = [expr.body, expr.orelse] if isinstance(expr, cst.IfExp) else [expr.left, expr.right]
            known = [k for k in (self.classify(b, scope, depth + 1) for b in branches) if k is not None]
            worst = _worst(known)
            if worst is not None:
                return worst
            return ("constant", self.module.code(expr)) if len(known) == len(branches) else None
        if isinstance(expr, cst.Call):
            return self._call(expr, scope, depth)
        if isinstance(expr, cst.Name):
            return self._name(expr, scope, depth)
        if isinstance(expr, cst.Attribute):
            return self._attribute(expr, scope, depth)
        return None

    def _call(self, call: cst.Call, scope: FunctionInfo | None, depth: int) -> tuple[str, str] | None:
        names = self.project.resolver(self.module).call_names(call, scope)
        code = self.module.code(call)
        if names & {"builtins.len", "builtins.id"}:
            return "reused", code
        if names & {"os.getpid", "threading.get_ident"}:
            return "non-durable", code
        if names & {"builtins.next"} and call.args and self._is_module_counter(call.args[0].value, scope):
            return "non-durable", code
        if names & {"builtins.str", "builtins.int", "builtins.repr"} and len(call.args) == 1:
            return self.classify(call.args[0].value, scope, depth + 1)
        for name in names:
            helper = self.project.function(name, near=self.module)
            if helper is None or not helper.returns:
                continue
            # an id minted by a project helper (``def _next_thread_id(): ...; return f"t-{n}"``):
            # judged by what every return of the helper hands out
            other = self if helper.module is self.module else type(self)(helper.module, self.project)
            kinds = [other.classify(r.value, helper, depth + 1) for r in helper.returns if r.value is not None]
            if kinds and all(k is not None for k in kinds):
                worst = _worst(kinds)  # type: ignore[arg-type]
                return (worst[0], f"{code} ({worst[1]})") if worst is not None else ("constant", code)
            return None
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "format":
            base = self.classify(call.func.value, scope, depth + 1)
            args = [self.classify(a.value, scope, depth + 1) for a in call.args]
            if base is None or any(a is None for a in args):
                return None
            worst = _worst(args)  # type: ignore[arg-type]
            return worst if worst is not None else ("constant", code)
        return None

    def _is_module_counter(self, expr: cst.BaseExpression, scope: FunctionInfo | None) -> bool:
        if not isinstance(expr, cst.Name):
            return False
        found = self.project.resolver(self.module).binding_value(expr.value, scope, None)
        if found is None or found[1] is not None:
            return False
        names = self.project.resolver(self.module).names(found[0].value, None)
        return bool(names & {"itertools.count"})

    def _name(self, name: cst.Name, scope: FunctionInfo | None, depth: int) -> tuple[str, str] | None:
        resolver = self.project.resolver(self.module)
        found = resolver.binding_value(name.value, scope, self.module.order(name))
        if (
            scope is not None
            and (found is None or found[0].kind == "param-annotation")
            and scope.param(name.value) is not None
        ):
            return self._parameter(scope, name.value, depth)
        if found is None:
            # a constant from a project settings module
            for q in resolver.names(name, scope):
                value = module_constant(q, self.project)
                if value is not None and isinstance(value[0], _CONSTANT_KINDS):
                    return "constant", f"{name.value} = {value[1].code(value[0])}"
            return None
        binding, owner = found
        if binding.kind != "assign":
            return None
        if owner is None and name.value in self.mutated:
            return "non-durable", f"the module-level counter {name.value}"
        inner = self.classify(binding.value, owner, depth + 1)
        if inner is not None and inner[0] == "constant" and owner is None:
            return "constant", f"{name.value} = {inner[1]}"
        return inner

    def _parameter(self, fn: FunctionInfo, param: str, depth: int) -> tuple[str, str] | None:
        """A parameter holds what its callers pass (``background_tasks.add_task(run, task_id)``):
        the most hazardous argument any caller hands it, when one does."""
        kinds: list[tuple[str, str]] = []
        for arg in self.project.arguments_for(fn, param):
            other = self if arg.module is self.module else type(self)(arg.module, self.project)
            kind = other.classify(arg.value, arg.scope, depth + 1)
            if kind is not None and kind[0] != "constant":
                where = (
                    f" (passed by {arg.module.display_path}:{arg.module.line(arg.value)})"
                    if arg.call is not None
                    else ""
                )
                kinds.append((kind[0], f"{param}, which is {kind[1]}{where}"))
        return _worst(kinds)

    def _session_state(self, expr: cst.Attribute, depth: int) -> tuple[str, str] | None:
        """``st.session_state.thread_id`` only ever set to literals: the same id for every session."""
        if not (isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "session_state"):
            return None
        values = session_state_values(self.module, expr.attr.value)
        kinds = [self.classify(v, None, depth + 1) for v in values]
        if values and all(k is not None and k[0] == "constant" for k in kinds):
            self.origin = values[0]
            return "constant", f"st.session_state.{expr.attr.value} = {self.module.code(values[0])}"
        return None

    def _field_default(self, expr: cst.BaseExpression, scope: FunctionInfo | None) -> str | None:
        """``body.thread_id`` where ``body`` is a parameter typed with a project class (a request or
        message model) whose field ``thread_id`` defaults to a non-empty constant string, and nothing
        else reaches it: the id of every call that omits the field. Described, or None."""
        if not (
            isinstance(expr, cst.Attribute)
            and isinstance(expr.value, cst.Name)
            and scope is not None
            and scope.param(expr.value.value) is not None
        ):
            return None
        flow = flow_of(self.project)
        owners = flow.parameter(scope, expr.value.value)
        if not owners or not all(isinstance(o, Instance) for o in owners):
            return None
        values = flow.values(expr, scope, self.module)
        if len(values) != 1:
            return None
        (value,) = values
        if not (isinstance(value, Constant) and isinstance(value.value, str) and value.value):
            return None
        field = expr.attr.value
        for owner in owners:
            assert isinstance(owner, Instance)
            for binding in owner.cls.body_bindings:
                if binding.name == field and binding.value is not None:
                    where = f"{owner.cls.module.display_path}:{owner.cls.module.line(binding.value)}"
                    return (
                        f"{value.value!r}: {self.module.code(expr)} defaults to it ({owner.cls.name}.{field}, "
                        f"{where}) whenever a caller omits the field"
                    )
        return None

    def _attribute(self, expr: cst.Attribute, scope: FunctionInfo | None, depth: int) -> tuple[str, str] | None:
        default = self._field_default(expr, scope)
        if default is not None:
            return "constant", default
        # self.counter incremented elsewhere in the class: an in-memory counter
        if isinstance(expr.value, cst.Name) and expr.value.value == "self" and scope is not None:
            cls = scope.class_info
            if cls is not None and _augassigned_attr(cls.node, expr.attr.value):
                return "non-durable", f"the in-memory counter self.{expr.attr.value}"
            return None
        if self.module.uses_any(("streamlit",)):
            found = self._session_state(expr, depth)
            if found is not None:
                return found
        resolver = self.project.resolver(self.module)
        for q in resolver.names(expr, scope):
            value = module_constant(q, self.project)
            if value is not None and isinstance(value[0], _CONSTANT_KINDS):
                return "constant", f"{self.module.code(expr)} = {value[1].code(value[0])}"
        return None


def _worst(kinds: list[tuple[str, str]]) -> tuple[str, str] | None:
    """The most hazardous non-constant part of a composed id, or None when every part is constant."""
    for kind in ("reused", "non-durable"):
        for k in kinds:
            if k[0] == kind:
                return k
    return None


def _augassigned_attr(node: cst.ClassDef, attr: str) -> bool:
    hit = []

    class _V(cst.CSTVisitor):
        def visit_AugAssign(self, n: cst.AugAssign) -> None:
            t = n.target
            if (
                isinstance(t, cst.Attribute)
                and t.attr.value == attr
                and isinstance(t.value, cst.Name)
                and t.value.value == "self"
            ):
                hit.append(n)

    visit_fast(node, _V())
    return bool(hit)


# -- who shares it ----------------------------------------------------------------


def serving_reason(
    fn: FunctionInfo | None, module: ModuleFacts, project: Project
) -> tuple[str, cst.CSTNode, ModuleFacts] | None:
    """Why the code at this scope runs for many different callers (and where that shows), or None."""
    for root in _SESSION_SCRIPT_ROOTS:
        if module.uses_any((root,)):
            imp = next((m for m in module.tree.body if _imports(m, root)), module.tree.body[0])
            return f"this module runs per user session ({root})", imp, module
    if fn is not None and fn.name != "__init__":
        # the handler catalog: a function some framework runs once per delivery, or one it calls.
        # (Not a constructor: an id set in ``__init__`` is per object, and whether the object -- and the
        # store it may build beside it -- outlives one delivery is not what the handler says.)
        path = web.served_path(fn, project)
        if path is not None:
            handler = path.handler
            via = "" if handler.function is fn else f", which calls '{fn.qualname}'"
            return f"{handler.label} runs once per delivery{via}", handler.node, handler.module
    elif web.module_serves(module, project):
        own = next((h for h in web.handlers(project) if h.function.module is module), None)
        if own is not None:
            return f"this module serves ({own.label})", own.node, own.module
    cur = fn
    resolver = project.resolver(module)
    while cur is not None:
        for dec in cur.decorators:
            for name in resolver.names(dec.target, cur.parent):
                if name.split(".")[0] in _SERVING_ROOTS:
                    return f"'{cur.qualname}' serves requests (@{module.code(dec.target)})", dec.node, module
        for param in cur.param_names():
            if param not in ("self", "cls") and _IDENTITY_PARAM.search(param):
                return (
                    f"'{cur.qualname}' is called per caller (its parameter '{param}' is ignored here)",
                    cur.param(param) or cur.node,
                    module,
                )
        cur = cur.parent
    return None


def _imports(stmt: cst.CSTNode, root: str) -> bool:
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    for small in stmt.body:
        if isinstance(small, cst.Import) and any(
            cst.Module([]).code_for_node(a.name).split(".")[0] == root for a in small.names
        ):
            return True
        if isinstance(small, cst.ImportFrom) and small.module is not None:
            if cst.Module([]).code_for_node(small.module).split(".")[0] == root:
                return True
    return False


class SharedThreadId(Rule):
    id = "RA303"
    confirmed_by = ("RA705",)
    name = "shared-thread-id"
    properties = ("CO", "PC")
    severity = Severity.WARNING
    frameworks = ("langgraph", "crewai")
    # the id is often built where the run is started, in a module that imports neither framework:
    # the frameworks' markers (a run config, a kickoff) make such a module a candidate (resume_audit.reading.prefilter)
    summary = "thread_id (or CrewAI persisted id) is a constant or non-durable: different runs share one thread and its state."
    description = """
A run is addressed by a `thread_id` (LangGraph `{"configurable":
{"thread_id": ...}}`) or a CrewAI persisted id (`kickoff(inputs={"id":
...})` on a `@persist` flow) that is

- a **constant** (`"1"`, `"default"`, a module constant) in code that serves
  many callers -- a request handler, a queue consumer, a chat-UI callback,
  a function that receives the caller's `user_id`/`session_id` and ignores
  it; or
- **non-durable**: `len(...)` of an in-memory list, a module-level counter
  (`global n; n += 1`, `next(itertools.count())`), `id(obj)`, the process id
  -- values that restart from the same numbers with every process.
"""
    runtime = """
The checkpointer keys everything by the id: the parked interrupt, the
pending resume, the state. Two callers on one constant id share one
thread -- the second user's `Command(resume=...)` consumes the first
user's interrupt (and LangGraph serves a repeated resume the first
recorded answer, #6663), and each run sees the other's messages. A
counter that restarts at zero hands new runs the ids of runs parked
before the restart, so a durable checkpointer (SQLite, Postgres) restores
a stranger's state into them; for a `@persist` CrewAI flow
`kickoff(inputs={"id": ...})` reloads whatever state was saved under that
id.
"""
    fix = """
Derive the id from something unique and durable per run: a
`uuid.uuid4()` stored with the run, the conversation or ticket id from your
database, or the authenticated user's session
(`{"configurable": {"thread_id": f"{user.id}:{conversation.id}"}}`).
"""
    no_autofix = """
The right thread id is a durable identifier from the domain (an order,
a ticket, a conversation); no rewrite can know which.
"""
    not_flagged = """
- constant ids in scripts, notebooks, CLIs and `main()` functions that serve one person (a demo's `"thread_id": "1"`, a chat loop that continues one conversation on purpose);
- test files (`tests/`, `test_*.py`, `conftest.py`);
- configs passed to a graph traced to a `compile()` without a checkpointer (the id addresses nothing);
- a graph built per run by a factory that compiles it with a new in-memory saver (`make_graph().invoke(...)`): every run has its own store;
- process counters (`global n; n += 1`, `itertools.count()`, the pid) on a graph traced to an in-memory checkpointer: ids and state die together (`id()` and `len()` are still flagged: a process hands those values out again);
- ids from parameters, request fields (unless the field defaults to a constant: then every request that omits it shares that id), `uuid4()`, database rows or f-strings over them;
- CrewAI `restore_from_state_id=` (a fork source: reading one saved state from many runs is its purpose).
"""

    INVALID = (
        Example(
            """
            from fastapi import FastAPI
            from langgraph.types import Command

            from .graph import graph

            app = FastAPI()

            @app.post("/approve")
            async def approve(decision: str):
                config = {"configurable": {"thread_id": "default"}}  # expect: RA303
                return await graph.ainvoke(Command(resume=decision), config)
            """,
            note="A constant thread in a request handler: every caller resumes the same interrupt.",
        ),
        Example(
            """
            from langgraph.checkpoint.sqlite import SqliteSaver
            from langgraph.graph import StateGraph

            SESSIONS = []

            def build(State, node, conn):
                builder = StateGraph(State)
                builder.add_node("agent", node)
                builder.set_entry_point("agent")
                return builder.compile(checkpointer=SqliteSaver(conn))

            def start_run(graph, question):
                SESSIONS.append(question)
                cfg = {"configurable": {}}
                cfg["configurable"]["thread_id"] = f"run-{len(SESSIONS)}"  # expect: RA303
                return graph.invoke({"question": question}, cfg)
            """,
            note="len() of an in-memory list restarts at 1 after a restart; the config is filled by subscript.",
        ),
        Example(
            {
                "bot/settings.py": """
                    FLOW_ID = "support-flow"
                    """,
                "bot/flows.py": """
                    from crewai.flow.flow import Flow, start
                    from crewai.flow.persistence import persist

                    @persist()
                    class Support(Flow):
                        @start()
                        def answer(self):
                            return self.state.get("question")
                    """,
                "bot/handlers.py": """
                    from . import settings
                    from .flows import Support

                    def on_message(user_id, text):
                        return Support().kickoff(inputs={"id": settings.FLOW_ID, "question": text})  # expect: RA303
                    """,
                "bot/__init__.py": "",
            },
            note="A CrewAI persisted id from a settings module, in a function that ignores the caller's user_id.",
        ),
        Example(
            """
            import uuid

            from fastapi import FastAPI
            from langgraph.checkpoint.postgres import PostgresSaver
            from pydantic import BaseModel

            app = FastAPI()

            class ReviewRequest(BaseModel):
                topic: str
                thread_id: str = "default"

            def build(builder, conn):
                return builder.compile(checkpointer=PostgresSaver(conn))

            @app.post("/review")
            def review(request: ReviewRequest, builder, conn):
                graph = build(builder, conn)
                thread_id = request.thread_id or str(uuid.uuid4())
                config = {"configurable": {"thread_id": thread_id}}  # expect: RA303
                return graph.invoke({"topic": request.topic}, config)
            """,
            note="A request model's field defaults to a constant: the uuid fallback never runs, and every request "
            "that omits the field shares the thread 'default'.",
        ),
    )
    VALID = (
        Example(
            """
            import uuid

            from fastapi import FastAPI
            from langgraph.checkpoint.postgres import PostgresSaver
            from pydantic import BaseModel

            app = FastAPI()

            class ReviewRequest(BaseModel):
                topic: str
                thread_id: str | None = None

            def build(builder, conn):
                return builder.compile(checkpointer=PostgresSaver(conn))

            @app.post("/review")
            def review(request: ReviewRequest, builder, conn):
                graph = build(builder, conn)
                thread_id = request.thread_id or str(uuid.uuid4())
                config = {"configurable": {"thread_id": thread_id}}
                return graph.invoke({"topic": request.topic}, config)
            """,
            note="The field defaults to None: a request that omits it gets a fresh uuid.",
        ),
        Example(
            """
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.graph import StateGraph

            def main(State, node):
                builder = StateGraph(State)
                builder.add_node("agent", node)
                builder.set_entry_point("agent")
                graph = builder.compile(checkpointer=InMemorySaver())
                config = {"configurable": {"thread_id": "1"}}
                while True:
                    graph.invoke({"question": input("> ")}, config)
            """,
            note="A console chat continuing one conversation on purpose.",
        ),
        Example(
            """
            import uuid
            from fastapi import FastAPI

            from .graph import graph

            app = FastAPI()

            @app.post("/runs")
            async def start(question: str, session_id: str):
                config = {"configurable": {"thread_id": f"{session_id}:{uuid.uuid4()}"}}
                return await graph.ainvoke({"question": question}, config)
            """,
            note="Per-session, per-run id.",
        ),
        Example(
            """
            import itertools
            from langgraph.checkpoint.memory import MemorySaver
            from langgraph.graph import StateGraph

            _ids = itertools.count()

            def build(State, node):
                builder = StateGraph(State)
                builder.add_node("agent", node)
                builder.set_entry_point("agent")
                return builder.compile(checkpointer=MemorySaver())

            def run(State, node, question):
                graph = build(State, node)
                config = {"configurable": {"thread_id": str(next(_ids))}}
                return graph.invoke({"question": question}, config)
            """,
            note="A process counter on an in-memory checkpointer: ids and state die together.",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        module = ctx.module
        if _TEST_PATH.search(module.display_path.replace("\\", "/")):
            return
        classifier: _Classifier | None = None
        for site in self._sites(ctx):
            if classifier is None:
                classifier = _Classifier(module, ctx.project)
            classifier.origin = None
            verdict = classifier.classify(site.value, site.scope)
            if verdict is None:
                continue
            kind, what = verdict
            yield from self._judge(ctx, site, kind, what, classifier.origin)

    def _sites(self, ctx: RuleContext) -> Iterator[Site]:
        yield from self._own_sites(ctx)
        yield from self._passed_sites(ctx)

    def _passed_sites(self, ctx: RuleContext) -> Iterator[Site]:
        """A literal id a function here passes to a project function that puts that parameter in a run
        config as its ``thread_id`` (``agent.answer(text, "test_chat_id")``): the literal is the id."""
        flow = flow_of(ctx.project)
        for call in ctx.module.all_calls:
            literals = [a for a in call.node.args if isinstance(a.value, _CONSTANT_KINDS) and not a.star]
            if not literals:
                continue
            for callee in flow.callees(call):
                by_param = _thread_id_params(callee, ctx.project)
                if not by_param:
                    continue
                names = callee.param_names()
                if (
                    callee.class_info is not None
                    and callee.parent is None
                    and names[:1] in (["self"], ["cls"])
                    and isinstance(call.node.func, cst.Attribute)
                ):
                    names = names[1:]
                positional = [a for a in call.node.args if a.keyword is None and not a.star]
                for arg in literals:
                    param = (
                        arg.keyword.value
                        if arg.keyword is not None
                        else (
                            names[positional.index(arg)]
                            if arg in positional and positional.index(arg) < len(names)
                            else None
                        )
                    )
                    if param in by_param:
                        yield Site(arg.value, call.function, "langgraph", call.node)

    def _own_sites(self, ctx: RuleContext) -> Iterator[Site]:
        module = ctx.module
        text = module.source
        if "thread_id" in text and "configurable" in text:
            for value, anchor in _thread_id_sites(module):
                yield Site(value, module.enclosing_function(value), "langgraph", anchor)
        if module.uses_any(crewai.PACKAGES) or "kickoff" in text:
            for info in module.all_calls:
                if not crewai.is_kickoff(info.node):
                    continue
                carried = crewai.inputs_carry_id(argument(info.node, 0, "inputs"), info.function, module, ctx.project)
                if carried is None or not isinstance(carried, cst.BaseExpression):
                    continue
                value = carried
                flow = receiver(info.node)
                cls = instance_class(flow, info.function, module, ctx.project) if flow is not None else None
                if (
                    cls is None
                    or not crewai.is_flow_class(cls, ctx.project)
                    or not crewai.persistence_of(cls, ctx.project).any
                ):
                    continue
                yield Site(value, info.function, "crewai", info.node)

    def _judge(
        self, ctx: RuleContext, site: Site, kind: str, what: str, origin: cst.CSTNode | None = None
    ) -> Iterable[Finding]:
        module = ctx.module
        project = ctx.project
        id_name = "thread_id" if site.kind == "langgraph" else "persisted flow id"
        graph = self._graph_for(site, ctx) if site.kind == "langgraph" else None
        if graph is not None and not graph.persisted:
            return  # compiled without a checkpointer: the thread_id addresses nothing
        if graph is not None and self._fresh_store_per_run(graph, site, ctx):
            return  # a new in-memory store per run: the constant id is shared with nobody
        if kind == "constant":
            served = serving_reason(site.scope, module, project)
            if served is None:
                return
            reason, where, where_module = served
            related = [Related(ctx.span(where, where_module), reason)]
            if origin is not None:
                related.append(Related(ctx.span(site.value), "the config that uses it"))
            yield ctx.finding(
                origin if origin is not None else site.value,
                f"The {id_name} is the constant {what}, and {reason}: every caller shares one "
                f"{'thread' if site.kind == 'langgraph' else 'persisted state'} -- one caller's answer resumes "
                f"another's interrupt and each run reads the others' state.",
                related=related,
            )
            return
        # reused / non-durable
        related = []
        if site.kind == "langgraph":
            saver = langgraph.saver_kind(graph, project)
            if saver == "memory" and kind == "non-durable":
                return
            if graph is not None and graph.checkpointer is not None:
                related.append(
                    Related(ctx.span(graph.checkpointer, graph.saver_module), f"checkpointer ({saver or 'unknown'})")
                )
        if not related:
            related.append(Related(ctx.span(site.anchor), "the run this id addresses"))
        store = "checkpointer" if site.kind == "langgraph" else "flow persistence"
        if kind == "reused":
            why = (
                f"a value the process hands out again ({'id() of a freed object is reused' if 'id(' in what else 'len() repeats when the list shrinks'}) "
                f"and that starts over in every process: a later run can land on an earlier run's id, and the {store} "
                f"continues that run's state in it"
            )
        else:
            why = (
                f"a counter that restarts from the same values in every process: after a restart new runs get the ids "
                f"of runs parked before it, and the durable {store} restores a stranger's state into them"
            )
        yield ctx.finding(site.value, f"The {id_name} comes from {what}, {why}.", related=related)

    def _graph_for(self, site: Site, ctx: RuleContext) -> langgraph.CompiledGraph | None:
        """The compiled graph a config is passed to (same scope), when traceable."""
        module = ctx.module
        anchor = site.anchor
        var = None
        parent = module.parent(anchor)
        if isinstance(anchor, cst.Assign):  # cfg["configurable"]["thread_id"] = ...
            base: cst.BaseExpression = anchor.targets[0].target
            while isinstance(base, cst.Subscript):
                base = base.value
            var = base.value if isinstance(base, cst.Name) else None
        elif (
            isinstance(parent, cst.Assign)
            and len(parent.targets) == 1
            and isinstance(parent.targets[0].target, cst.Name)
        ):
            var = parent.targets[0].target.value
        calls = site.scope.calls if site.scope is not None else module.module_calls
        for info in calls:
            f = info.node.func
            if not (
                isinstance(f, cst.Attribute) and f.attr.value in langgraph.RUN_METHODS | langgraph.GET_STATE_METHODS
            ):
                continue
            uses = any(
                a.value is anchor or (var is not None and isinstance(a.value, cst.Name) and a.value.value == var)
                for a in info.node.args
            )
            if uses:
                graph = langgraph.graph_of(f.value, site.scope, module, ctx.project)
                if graph is not None:
                    self._receiver = f.value
                    return graph
        return None

    def _fresh_store_per_run(self, graph: langgraph.CompiledGraph, site: Site, ctx: RuleContext) -> bool:
        """``factory().invoke(..., {"thread_id": "x"})`` where the factory compiles with a new
        in-memory saver each call: every run has its own store, so a constant id shares nothing."""
        if graph.scope is None or langgraph.saver_kind(graph, ctx.project) != "memory":
            return False
        made = langgraph.made_values(graph.checkpointer, graph.saver_scope, graph.saver_module, ctx.project)
        if not made or made[0].scope is not graph.scope:
            return False
        receiver = getattr(self, "_receiver", None)
        if isinstance(receiver, cst.Name) and site.scope is not None:
            bound = ctx.resolver.binding_value(receiver.value, site.scope, ctx.module.order(receiver))
            receiver = bound[0].value if bound is not None and bound[1] is site.scope else None
        return isinstance(receiver, cst.Call)
