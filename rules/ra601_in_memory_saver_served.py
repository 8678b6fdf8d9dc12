"""RA601: ``InMemorySaver`` / ``MemorySaver`` behind human-in-the-loop interrupts in a served app."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterable, Iterator

import libcst as cst

from resume_audit.facts.model import CallInfo, FunctionInfo, ModuleFacts
from resume_audit.facts.summaries import SummaryKind, register
from resume_audit.facts.syntax import keyword
from resume_audit.findings import Autofix, Edit, Finding, Related, Severity, Span
from resume_audit.fixes.source_edits import import_edit, local_name_of
from resume_audit.frameworks.langgraph import names as langgraph
from resume_audit.frameworks.langgraph.names import interrupt_classifier
from resume_audit.frameworks.langgraph.units import entrypoint_for, in_memory_constructor
from resume_audit.handlers import web
from resume_audit.reading.treewords import LANGGRAPH_IMPORT_WORDS
from resume_audit.rules.base import Example, FixExample, Rule, RuleContext

if TYPE_CHECKING:
    from resume_audit.analysis.project import Project

#: what parks a checkpointed graph for a human: the node, its module, and how it parks
_Hitl = tuple[cst.CSTNode, ModuleFacts, str]
#: an in-memory saver a served app's checkpointed graph uses: the construction, its module, what
#: parks the graph, and the handler serving it (when one is known)
_Found = tuple[cst.Call, ModuleFacts, _Hitl, "web.Handler | None"]


def _non_empty(expr: cst.BaseExpression | None) -> bool:
    if expr is None:
        return False
    if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
        return bool(expr.elements)
    if isinstance(expr, cst.Name) and expr.value in ("None", "False"):
        return False
    return True


class InMemorySaverServed(Rule):
    id = "RA601"
    confirmed_by = ("RA708",)
    name = "in-memory-saver-served"
    properties = ("LV",)
    severity = Severity.WARNING
    frameworks = ("langgraph",)
    summary = "InMemorySaver/MemorySaver behind human-in-the-loop interrupts in a served app: parked runs die with the process."
    description = """
A graph (or `@entrypoint` workflow) that parks for a human -- a node that
reaches `interrupt()`, static breakpoints (`interrupt_before=` /
`interrupt_after=`, also on `create_react_agent` / LangChain's
`create_agent`), or LangChain's `HumanInTheLoopMiddleware` -- is checkpointed by `InMemorySaver()` (or its older
name `MemorySaver()`, the same class in langgraph 1.2.24) in code that
serves requests: a module with FastAPI / Starlette / Flask / Django / aiohttp
routes, queue consumers (Celery, Kafka, RabbitMQ, SQS, Lambda), or an app
object, or a module such code imports.
"""
    runtime = """
A parked run lives only in the saver. `InMemorySaver` keeps checkpoints in
a dict inside one Python process: a deploy, a crash, an autoscaler or a
worker recycle (gunicorn `max_requests`, Celery `max_tasks_per_child`)
drops every run that is waiting for a human, and the human's later answer
(`Command(resume=...)`) finds no thread -- the run starts fresh or fails.
With several worker processes behind a load balancer the answer usually
lands on a process that never saw the thread at all. Nothing warns: the
docs present it as a testing saver, and it works in a single-process dev
server.
"""
    fix = """
Use a durable checkpointer shared by every worker: `SqliteSaver` /
`AsyncSqliteSaver` for one host, `PostgresSaver` / `AsyncPostgresSaver`
for several (`PostgresSaver.from_conn_string(DB_URI)`, call `.setup()`
once). Keep `InMemorySaver` for tests and notebooks.
"""
    no_autofix = """
The fix (unsafe: a new dependency, `langgraph-checkpoint-sqlite`, and a file
on disk) swaps in `SqliteSaver` at the path `$LANGGRAPH_CHECKPOINT_DB` names.
It is not offered when the project calls a graph's async methods
(`ainvoke`, `astream`, ...): the sync saver raises on them, and the async
saver needs a connection opened inside the event loop (a FastAPI lifespan,
say), which is the program's to place. A saver shared by several hosts is a
PostgreSQL one (`PostgresSaver`), whose DSN only the deployment knows.
"""
    not_flagged = """
- `InMemorySaver` in code that no request handler, consumer or app module reaches (tests, notebooks, scripts, examples): a parked run there lives as long as the script;
- graphs with no interrupt (no `interrupt()` reachable from a node, no static breakpoint): in-memory conversation memory is lost on restart but nothing is parked waiting for a human;
- durable savers, and savers passed in as parameters whose construction cannot be seen (a factory's `checkpointer` argument is not followed back to its callers);
- graphs served by a LangGraph server (`langgraph.json`), which supplies its own persistent checkpointer.
"""

    INVALID = (
        Example(
            """
            from fastapi import FastAPI
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.graph import StateGraph
            from langgraph.types import Command, interrupt

            def approve(state: dict) -> dict:
                return {"approved": interrupt({"refund": state["amount"]}) == "yes"}

            builder = StateGraph(dict)
            builder.add_node("approve", approve)
            builder.set_entry_point("approve")
            graph = builder.compile(checkpointer=InMemorySaver())  # expect: RA601

            app = FastAPI()

            @app.post("/refunds/{thread_id}/answer")
            def answer(thread_id: str, decision: str) -> dict:
                return graph.invoke(Command(resume=decision), {"configurable": {"thread_id": thread_id}})
            """,
            note="FastAPI app in the same module.",
        ),
        Example(
            {
                "svc/agent.py": """
                    from langgraph.checkpoint.memory import MemorySaver as Memory
                    from langgraph.graph import StateGraph

                    def review(state: dict) -> dict:
                        return {"draft": state["draft"]}

                    memory = Memory()  # expect: RA601

                    def build():
                        builder = StateGraph(dict)
                        builder.add_node("review", review)
                        builder.set_entry_point("review")
                        return builder.compile(checkpointer=memory, interrupt_before=["review"])
                    """,
                "svc/views.py": """
                    from flask import Flask, request

                    from .agent import build

                    app = Flask(__name__)
                    graph = build()

                    @app.route("/drafts/<thread_id>/approve", methods=["POST"])
                    def approve(thread_id):
                        return graph.invoke(None, {"configurable": {"thread_id": thread_id}})
                    """,
                "svc/__init__.py": "",
            },
            note="Static breakpoint; MemorySaver under an alias in a module a Flask app imports.",
        ),
        Example(
            """
            from celery import shared_task
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.func import entrypoint
            from langgraph.types import Command, interrupt

            @entrypoint(checkpointer=InMemorySaver())  # expect: RA601
            async def onboarding(user: dict) -> dict:
                ok = interrupt({"verify": user["email"]})
                return {"verified": ok}

            @shared_task
            def resume_onboarding(thread_id: str, ok: bool):
                return onboarding.invoke(Command(resume=ok), {"configurable": {"thread_id": thread_id}})
            """,
            note="Functional API in a Celery worker: the worker that parked the run is rarely the one that resumes it.",
        ),
    )
    VALID = (
        Example(
            """
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.graph import StateGraph
            from langgraph.types import interrupt

            def approve(state: dict) -> dict:
                return {"approved": interrupt("ok?") == "yes"}

            builder = StateGraph(dict)
            builder.add_node("approve", approve)
            builder.set_entry_point("approve")
            graph = builder.compile(checkpointer=InMemorySaver())

            if __name__ == "__main__":
                print(graph.invoke({}, {"configurable": {"thread_id": "demo"}}))
            """,
            note="A script, not a served app.",
        ),
        Example(
            """
            from fastapi import FastAPI
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.graph import StateGraph

            def chat(state: dict) -> dict:
                return {"messages": state["messages"] + ["hi"]}

            builder = StateGraph(dict)
            builder.add_node("chat", chat)
            builder.set_entry_point("chat")
            graph = builder.compile(checkpointer=InMemorySaver())
            app = FastAPI()

            @app.post("/chat/{thread_id}")
            def post(thread_id: str, text: str) -> dict:
                return graph.invoke({"messages": [text]}, {"configurable": {"thread_id": thread_id}})
            """,
            note="Served, but no interrupt: nothing is parked for a human.",
        ),
        Example(
            """
            import sqlite3

            from fastapi import FastAPI
            from langgraph.checkpoint.sqlite import SqliteSaver
            from langgraph.graph import StateGraph
            from langgraph.types import interrupt

            def approve(state: dict) -> dict:
                return {"approved": interrupt("ok?") == "yes"}

            builder = StateGraph(dict)
            builder.add_node("approve", approve)
            builder.set_entry_point("approve")
            graph = builder.compile(checkpointer=SqliteSaver(sqlite3.connect("runs.db", check_same_thread=False)))
            app = FastAPI()
            """,
            note="A durable saver.",
        ),
    )

    FIXES = (
        FixExample(
            """
            \"\"\"An approvals service.\"\"\"
            from typing import TypedDict

            from fastapi import FastAPI
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.graph import END, START, StateGraph
            from langgraph.types import Command, interrupt


            class S(TypedDict, total=False):
                request: str
                approved: bool


            def review(state: S) -> dict:
                return {"approved": interrupt({"request": state["request"]}) is True}


            builder = StateGraph(S)
            builder.add_node("review", review)
            builder.add_edge(START, "review")
            builder.add_edge("review", END)
            graph = builder.compile(checkpointer=InMemorySaver())  # parked approvals
            app = FastAPI()


            @app.post("/requests/{rid}")
            def submit(rid: str) -> dict:
                return graph.invoke({"request": rid}, {"configurable": {"thread_id": rid}})


            @app.post("/requests/{rid}/answer")
            def answer(rid: str, ok: bool) -> dict:
                return graph.invoke(Command(resume=ok), {"configurable": {"thread_id": rid}})
            """,
            """
            \"\"\"An approvals service.\"\"\"
            from typing import TypedDict

            from fastapi import FastAPI
            from langgraph.graph import END, START, StateGraph
            from langgraph.types import Command, interrupt
            import os
            import sqlite3
            from langgraph.checkpoint.sqlite import SqliteSaver


            class S(TypedDict, total=False):
                request: str
                approved: bool


            def review(state: S) -> dict:
                return {"approved": interrupt({"request": state["request"]}) is True}


            builder = StateGraph(S)
            builder.add_node("review", review)
            builder.add_edge(START, "review")
            builder.add_edge("review", END)
            graph = builder.compile(checkpointer=SqliteSaver(sqlite3.connect(os.environ.get("LANGGRAPH_CHECKPOINT_DB", "checkpoints.sqlite"), check_same_thread=False)))  # parked approvals
            app = FastAPI()


            @app.post("/requests/{rid}")
            def submit(rid: str) -> dict:
                return graph.invoke({"request": rid}, {"configurable": {"thread_id": rid}})


            @app.post("/requests/{rid}/answer")
            def answer(rid: str, ok: bool) -> dict:
                return graph.invoke(Command(resume=ok), {"configurable": {"thread_id": rid}})
            """,
            note="The in-memory saver becomes SqliteSaver at $LANGGRAPH_CHECKPOINT_DB; its import goes, the new ones follow the last import.",
            unsafe=True,
        ),
    )

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        for construction, where, hitl, served in _collect(self, ctx):
            if where is not ctx.module:
                continue
            hitl_node, hitl_module, hitl_note = hitl
            related = [Related(ctx.span(hitl_node, hitl_module), hitl_note)]
            if served is not None:
                related.append(
                    Related(
                        ctx.span(served.node, served.module),
                        f"{served.kind} {served.function.qualname}: this app serves requests",
                    )
                )
            yield ctx.finding(
                construction,
                f"{ctx.module.code(construction.func)}() checkpoints a graph that parks for a human, in an app that serves "
                f"requests. Parked runs live only in this process's memory: a restart, deploy or crash drops every "
                f"run waiting for an answer, and with several workers the answer usually reaches a process that never "
                f"saw the thread.",
                related=related,
                autofix=_durable_saver(ctx, construction),
            )

    # -- project-wide collection (the saver, the graph and the app can sit in three modules) --
    def _uses(
        self, module: ModuleFacts, project: Project
    ) -> Iterator[tuple[cst.BaseExpression, FunctionInfo | None, _Hitl]]:
        """(checkpointer expr, scope, (hitl node, module, note)) for every checkpointed use in ``module``."""
        for info in module.all_calls:
            graph = langgraph.compiled_graph(info.node, info.function, module, project)
            if graph is not None:
                cp = graph.checkpointer
                hitl = self._graph_hitl(graph, info.node, module, project)
            else:
                kw = keyword(info.node, "checkpointer")
                if kw is None or project.resolver(module).call_names(info.node, info.function) & langgraph.ENTRYPOINT:
                    continue
                cp = kw.value
                hitl = self._kwarg_hitl(info.node, module) or self._middleware_hitl(info, module, project)
            if cp is not None and hitl is not None:
                yield cp, info.function, hitl
        for fn in module.functions:
            ep = entrypoint_for(project, fn)
            if ep is None or ep.checkpointer is None:
                continue
            reached = project.function_reaches("interrupt", interrupt_classifier(project), fn)
            if reached is not None:
                yield (
                    ep.checkpointer,
                    fn.parent,
                    (reached.calls[-1].node, reached.modules[-1], "interrupt() parks the workflow here"),
                )

    def _graph_hitl(
        self, graph: langgraph.CompiledGraph, compile_call: cst.Call, module: ModuleFacts, project: Project
    ) -> _Hitl | None:
        kw = self._kwarg_hitl(compile_call, module)
        if kw is not None:
            return kw
        for _, fn in langgraph.all_node_functions(graph, project):
            if fn is None:
                continue
            reached = project.function_reaches("interrupt", interrupt_classifier(project), fn)
            if reached is not None:
                return reached.calls[-1].node, reached.modules[-1], f"interrupt() parks node {fn.qualname} here"
        return None

    def _middleware_hitl(self, info: CallInfo, module: ModuleFacts, project: Project) -> _Hitl | None:
        """``create_agent(..., middleware=[HumanInTheLoopMiddleware(...)])`` parks before tool calls."""
        arg = keyword(info.node, "middleware")
        if arg is None:
            return None
        value = arg.value
        if isinstance(value, cst.Name):
            found = project.resolver(module).binding_value(value.value, info.function, None)
            value = found[0].value if found is not None else value
        stack: list[cst.CSTNode] = [value]
        while stack:
            cur = stack.pop()
            if (
                isinstance(cur, cst.Call)
                and project.resolver(module).call_names(cur, info.function) & langgraph.HITL_MIDDLEWARE
            ):
                return cur, module, "HumanInTheLoopMiddleware parks the agent before gated tool calls"
            stack.extend(cur.children)
        return None

    def _kwarg_hitl(self, call: cst.Call, module: ModuleFacts) -> _Hitl | None:
        for name in ("interrupt_before", "interrupt_after"):
            arg = keyword(call, name)
            if arg is not None and _non_empty(arg.value):
                return arg, module, f"{name}= parks the run for a human"
        return None


def _collect(rule: InMemorySaverServed, ctx: RuleContext) -> list[_Found]:
    """(construction, where, hitl, served) for every in-memory saver constructed in ``ctx.module``
    that a checkpointed graph of a served app uses. The uses can sit in any langgraph module;
    which modules find a construction here is read from their stored summaries, so only those
    are parsed (and only their content, and the summaries' values, are dependencies)."""
    project, here = ctx.project, ctx.module
    out: list[_Found] = []
    seen: set[int] = set()
    for entry, landing_here in project.summaries_over(FOUND.name, LANGGRAPH_IMPORT_WORDS, str(here.path)):
        if not landing_here:
            continue
        module = project.load(entry)
        if module is None:
            continue
        for construction, where, hitl, served in _found_from(project, module):
            if where is here and id(construction) not in seen:
                seen.add(id(construction))
                out.append((construction, where, hitl, served))
    return out


def _found_from(project: Project, module: ModuleFacts) -> list[_Found]:
    """The in-memory savers ``module``'s checkpointed uses construct, in a served app (once each)."""

    def find() -> list[_Found]:
        rule = InMemorySaverServed()
        out: list[_Found] = []
        seen: set[int] = set()
        if not module.uses_any(langgraph.PACKAGES):
            return out
        for cp, scope, hitl in rule._uses(module, project):
            found = in_memory_constructor(cp, scope, module, project)
            if found is None:
                continue
            construction, where = found
            if id(construction) in seen:
                continue
            if not (web.module_is_served(where, project) or web.module_is_served(module, project)):
                continue
            seen.add(id(construction))
            out.append((construction, where, hitl, _served_handler(where, module, project)))
        return out

    return project.cached("RA601-found", module.path, find)


def _found_summary(project: Project, module: ModuleFacts) -> list[list[str | int]]:
    """The summary: ``[file, call index]`` of each construction :func:`_found_from` finds."""
    out: list[list[str | int]] = []
    for construction, where, _, _ in _found_from(project, module):
        # (a factory's construction is reported where the factory is used: it may not be one of its calls)
        index = next((i for i, c in enumerate(where.all_calls) if c.node is construction), -1)
        out.append([str(where.path), index])
    return out


#: which modules' uses find a construction in which file: a file's check parses only those modules
FOUND = register(SummaryKind("RA601-found", _found_summary, []))


def _served_handler(where: ModuleFacts, use_module: ModuleFacts, project: Project) -> web.Handler | None:
    handlers = web.handlers(project)
    for wanted in (where, use_module):
        for h in handlers:
            if h.module is wanted:
                return h
    for wanted in (where, use_module):
        for h in handlers:
            if any(
                m == wanted.module_name or m.startswith(wanted.module_name + ".") for m in h.module.imported_modules
            ):
                return h
    return None


def _durable_saver(ctx: RuleContext, construction: cst.Call) -> Autofix | None:
    """``InMemorySaver()`` -> ``SqliteSaver(sqlite3.connect(os.environ.get("LANGGRAPH_CHECKPOINT_DB",
    "checkpoints.sqlite"), check_same_thread=False))``, the imports it needs added and the
    in-memory saver's import removed when nothing else uses it. Unsafe: the app gains a dependency
    (langgraph-checkpoint-sqlite) and a file on disk. Not offered when the project calls a graph's
    async methods (the sync saver raises on them; ``AsyncSqliteSaver`` needs a connection opened in
    the event loop, which is the program's to place) or when a name it needs means something else."""
    module = ctx.module
    if construction.args or ctx.project.modules_mentioning(langgraph.ASYNC_GRAPH_CALL_WORDS):
        return None
    edits = []
    names = {}
    for statement, binds, qualified in (
        ("import os", "os", "os"),
        ("import sqlite3", "sqlite3", "sqlite3"),
        (langgraph.DURABLE_SAVER_IMPORT, "SqliteSaver", "langgraph.checkpoint.sqlite.SqliteSaver"),
    ):
        local = local_name_of(module, {qualified})
        if local is None:
            added = import_edit(module, statement, binds)
            if added is None:
                return None
            edits.append(added)
            local = binds
        names[binds] = local
    path = f'{names["os"]}.environ.get("{langgraph.DURABLE_SAVER_ENV}", "{langgraph.DURABLE_SAVER_DEFAULT_PATH}")'
    edits.append(
        ctx.replace(
            construction, f"{names['SqliteSaver']}({names['sqlite3']}.connect({path}, check_same_thread=False))"
        )
    )
    unused = _only_use_removed(module, construction)
    if unused is not None:
        edits.append(unused)
    return ctx.autofix(
        f"keep parked runs in SQLite ({langgraph.DURABLE_SAVER_PACKAGE}), at the path in "
        f"${langgraph.DURABLE_SAVER_ENV} (default {langgraph.DURABLE_SAVER_DEFAULT_PATH}): a restart resumes them; "
        f"several hosts need a shared database (PostgresSaver) instead",
        *edits,
        unsafe=True,
    )


def _only_use_removed(module: ModuleFacts, construction: cst.Call) -> Edit | None:
    """Delete the import line of the in-memory saver's name when this construction was its only use
    (the line imports nothing else; the name appears nowhere else in the text)."""
    if not isinstance(construction.func, cst.Name):
        return None
    name = construction.func.value
    if len(re.findall(rf"\b{re.escape(name)}\b", module.source)) != 2:
        return None
    for statement in module.tree.body:
        if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
            continue
        imp = statement.body[0]
        if (
            isinstance(imp, cst.ImportFrom)
            and isinstance(imp.names, (list, tuple))
            and len(imp.names) == 1
            and imp.names[0].asname is None
            and imp.names[0].name.value == name
            and not any(line.comment is not None for line in statement.leading_lines)
            and statement.trailing_whitespace.comment is None
        ):
            line = module.span(statement).start_line
            return Edit(Span(module.display_path, line, 1, line + 1, 1), "")
    return None
