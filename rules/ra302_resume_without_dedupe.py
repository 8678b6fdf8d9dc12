"""RA302: a resume delivered from a request handler / queue consumer with no dedupe or lock."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

import libcst as cst

from resume_audit.analysis.order import completes_before
from resume_audit.facts.model import CallInfo, FunctionInfo, ModuleFacts
from resume_audit.facts.syntax import argument, bool_value, dict_items, is_none, keyword, receiver, string_value
from resume_audit.findings import Finding, Related, Severity
from resume_audit.frameworks.langgraph import names as langgraph
from resume_audit.frameworks.langgraph.resume_plane import (
    decided_resume,
    resume_calls,
    resume_command,
    started_run_before,
)
from resume_audit.frameworks.langgraph.units import graph_anywhere, graph_is_pure, project_uses_langgraph
from resume_audit.handlers import web
from resume_audit.rules.base import Example, Rule, RuleContext

if TYPE_CHECKING:
    from resume_audit.analysis.project import Project

#: SQL that takes a claim or a lock: a claim row (unique key), a compare-and-set
#: UPDATE ... WHERE, SELECT ... FOR UPDATE, advisory / named locks.
_SQL_CLAIM = re.compile(
    r"^\s*(INSERT\b|UPDATE\b.*\bWHERE\b)|\bFOR\s+(NO\s+KEY\s+)?UPDATE\b|\bpg_(try_)?advisory(_xact)?_lock|\bGET_LOCK\s*\(|\bsp_getapplock",
    re.IGNORECASE | re.DOTALL,
)
#: ORM / client methods that claim or lock by themselves.
_CLAIM_METHODS = frozenset({"select_for_update", "with_for_update", "get_or_create", "setnx", "acquire_lock"})
#: Cross-process locks (by qualified name). File locks serialise one host only.
_LOCK_CALLS = frozenset(
    {
        "redis.lock.Lock",
        "redis.asyncio.lock.Lock",
        "pottery.Redlock",
        "redlock.Redlock",
        "aioredlock.Aioredlock",
        "filelock.FileLock",
        "filelock.SoftFileLock",
        "fcntl.flock",
        "fcntl.lockf",
        "portalocker.lock",
        "portalocker.Lock",
        "sherlock.Lock",
        "sherlock.RedisLock",
    }
)
#: In-process locks: they do not stop a second worker process.
_LOCAL_LOCKS = frozenset(
    {"threading.Lock", "threading.RLock", "asyncio.Lock", "asyncio.locks.Lock", "multiprocessing.Lock", "anyio.Lock"}
)


def claim_classifier(project: Project) -> Callable[[CallInfo, ModuleFacts], str | None]:
    """Classifier for ``project.reach``: does this call take a cross-process claim or lock?"""

    def classify(call: CallInfo, module: ModuleFacts) -> str | None:
        node = call.node
        f = node.func
        names = project.resolver(module).call_names(node, call.function)
        if names & _LOCK_CALLS:
            return "lock"
        method = f.attr.value if isinstance(f, cst.Attribute) else (f.value if isinstance(f, cst.Name) else "")
        if method in _CLAIM_METHODS:
            return "claim"
        if method in ("execute", "executemany", "exec_driver_sql", "fetchrow", "fetchval", "fetch", "fetchone"):
            first = argument(node, 0, "query") or argument(node, 0, "sql") or argument(node, 0, "statement")
            if isinstance(first, cst.Call):
                first = argument(first, 0, "text")
            text = string_value(first)
            if text is not None and _SQL_CLAIM.search(text):
                return "claim"
        nx = keyword(node, "nx") if method == "set" else None
        if nx is not None and bool_value(nx.value) is True:
            return "claim"
        if method == "lock" and isinstance(f, cst.Attribute):
            receiver = (
                " ".join(sorted(project.resolver(module).names(f.value, call.function))) + " " + module.code(f.value)
            )
            if "redis" in receiver.lower() or any(n.startswith(("redis", "aioredis")) for n in names):
                return "lock"
        if (
            method in ("put_item", "update_item", "transact_write_items")
            and keyword(node, "ConditionExpression") is not None
        ):
            return "claim"
        if method == "execute_command":
            args = [string_value(a.value) or "" for a in node.args]
            if args and args[0].upper() == "SET" and any(a.upper() == "NX" for a in args):
                return "claim"
        return None

    return classify


class ResumeWithoutDedupe(Rule):
    id = "RA302"
    confirmed_by = ("RA705",)
    name = "resume-without-dedupe"
    properties = ("CO",)
    severity = Severity.WARNING
    frameworks = ("langgraph",)
    #: the mode or the resume can sit in a module that never imports langgraph itself
    triggers = ("update_state",)
    yields_to = ("RA201",)
    summary = "A resume delivered from a request handler or queue consumer with no dedupe or lock: every concurrent delivery fires the gated effect."
    description = """
A `Command(resume=...)` -- or the `update_state(...)` + `invoke(None, ...)`
resume form, or `invoke(None, ...)` on a graph with static breakpoints --
is sent from code that runs per request or per message: a FastAPI /
Starlette / Flask / Django / aiohttp route handler, a Celery task, a Kafka /
RabbitMQ / SQS / Pub/Sub consumer, an AWS Lambda handler, or a function
such a handler calls. Nothing before it takes a cross-process claim or
lock on the interrupt.
"""
    runtime = """
Request handlers and consumers run concurrently and are re-delivered: a
double-clicked button, a client or proxy retry, a webhook sent twice, a
message redelivered after a consumer restart, two workers on one queue.
LangGraph has no compare-and-swap on interrupt consumption. Measured on
langgraph 1.2.24: two processes resuming one parked interrupt on one
on-disk `SqliteSaver` from a barrier **both ran the gated node** (5 of 5),
each served its own value -- one approval consumed twice, its effect fired
twice (CO-c and CO-e). The paper measured every racer winning up to k=16
on SQLite and PostgreSQL. A *sequential* stray resume after completion is
inert (it returns the old result), so the hazard is the concurrent one, and
a lock held only inside one process does not stop a second worker.
"""
    fix = """
Take a cross-process claim before resuming and resume only if you won it:
`INSERT INTO resume_claims (thread_id, interrupt_id) ...` with a unique key
(catch the duplicate-key error and return 409), `SELECT ... FOR UPDATE` on
the approval row, a Postgres advisory lock, or Redis `SET key 1 NX EX 300`.
Or compile with remit's consume gate, `remit.wrap(SqliteSaver, conn,
cross_process_gate=True)` (or `PostgresSaver`), which refuses the losing
racer with `RemitConsumeConflict` before any node runs.
"""
    no_autofix = """
A dedupe key or lock needs shared storage the handler can reach; which
one, and what the key is, depends on the deployment.
"""
    not_flagged = """
A resume of a graph whose every node is known and reaches no effect (LLM calls, state
updates only) is reported as a **note**: a second delivery repeats nothing outside the
graph, but the answer is still consumed twice.

What counts as dedupe or lock (any of them in the handler, in a function on
the call path from the handler, or in a helper they call, completing before
the resume): a SQL `INSERT` (a claim row -- the rule trusts you put a
unique key on it), a compare-and-set `UPDATE ... WHERE`, `SELECT ... FOR
UPDATE`, `pg_advisory_lock` / `pg_try_advisory_xact_lock` / MySQL
`GET_LOCK`, Django `select_for_update()` / `get_or_create()`, SQLAlchemy
`with_for_update()`, Redis `set(..., nx=True)` / `setnx` / `SET ... NX` /
`redis.lock(...)` / Redlock, DynamoDB writes with a `ConditionExpression`,
file locks (`filelock`, `fcntl.flock`, `portalocker` -- these serialise one
host only), and a graph compiled with `remit.wrap(..., cross_process_gate=True)`.
Not counted: `threading.Lock` / `asyncio.Lock` / `multiprocessing.Lock` (one
process), an in-memory "seen" set (except in an MCP server's tool handler, which
runs in one process: there `pending.pop(thread_id)` on a module-level container
before the resume consumes the answer once), and `get_state` checks (a resume decided by one is
reported here *and* by RA301 at the check: the check is the wrong fix, the resume line is
where the claim goes).

Also not flagged:
- resumes outside any handler or consumer (scripts, tests, notebooks, CLI tools);
- auto-resumes in the function that started the run (`invoke(inputs, cfg)` then `invoke(Command(resume=...), cfg)`): the parked run belongs to this request, no second delivery can reach it;
- resumes inside a lambda or callback handed to an executor or job queue (`runs.submit(id, lambda: graph.invoke(Command(...)))`): not followed;
- resumes at the same place as an RA201 finding (a fork addressed to a `checkpoint_id`);
- `invoke(None, ...)` with no `update_state` before it on a graph without static breakpoints (a plain continue after a crash);
- LangGraph Platform / SDK runs (`client.runs.create(..., command=...)`), which the server serialises per thread.
"""

    INVALID = (
        Example(
            """
            from fastapi import FastAPI
            from langgraph.types import Command
            from pydantic import BaseModel

            from .graph import graph

            app = FastAPI()

            class Answer(BaseModel):
                approved: bool

            @app.post("/threads/{thread_id}/answer")
            async def answer(thread_id: str, body: Answer) -> dict:
                cfg = {"configurable": {"thread_id": thread_id}}
                return await graph.ainvoke(Command(resume=body.approved), cfg)  # expect: RA302
            """,
            note="An async FastAPI route resumes directly.",
        ),
        Example(
            {
                "worker/tasks.py": """
                    from celery import Celery

                    from .service import deliver_decision

                    app = Celery("approvals")

                    @app.task(acks_late=True)
                    def on_decision(thread_id: str, decision: str):
                        deliver_decision(thread_id, decision)
                    """,
                "worker/service.py": """
                    import threading

                    import langgraph.types as lgt

                    from .graph import build

                    _lock = threading.Lock()
                    graph = build()

                    def deliver_decision(thread_id: str, decision: str):
                        with _lock:
                            cmd = lgt.Command(resume=decision)  # expect: RA302
                            return graph.invoke(cmd, {"configurable": {"thread_id": thread_id}})
                    """,
                "worker/__init__.py": "",
            },
            note="A Celery task calls a helper in a sibling module; a threading.Lock does not stop a second worker.",
        ),
        Example(
            {
                "reviews/views.py": """
                    from flask import Flask, request

                    from .agent import graph

                    app = Flask(__name__)

                    @app.route("/reviews/<thread_id>", methods=["POST"])
                    def review(thread_id):
                        config = {"configurable": {"thread_id": thread_id}}
                        graph.update_state(config, {"approved": request.json["approved"]})
                        return graph.invoke(None, config)  # expect: RA302
                    """,
                "reviews/agent.py": """
                    from langgraph.checkpoint.postgres import PostgresSaver
                    from langgraph.graph import StateGraph

                    def publish(state: dict) -> dict:
                        return {"published": state.get("approved", False)}

                    builder = StateGraph(dict)
                    builder.add_node("publish", publish)
                    builder.set_entry_point("publish")
                    graph = builder.compile(checkpointer=PostgresSaver.from_conn_string("postgresql:///reviews"), interrupt_before=["publish"])
                    """,
                "reviews/__init__.py": "",
            },
            note="The update_state + invoke(None, ...) resume form.",
        ),
    )
    VALID = (
        Example(
            """
            import sqlite3

            from fastapi import FastAPI, HTTPException
            from langgraph.types import Command

            from .graph import graph

            app = FastAPI()
            db = sqlite3.connect("claims.db", check_same_thread=False)

            @app.post("/threads/{thread_id}/answer")
            def answer(thread_id: str, interrupt_id: str, approved: bool) -> dict:
                try:
                    with db:
                        db.execute("INSERT INTO claims (thread_id, interrupt_id) VALUES (?, ?)", (thread_id, interrupt_id))
                except sqlite3.IntegrityError:
                    raise HTTPException(409, "already answered")
                return graph.invoke(Command(resume=approved), {"configurable": {"thread_id": thread_id}})
            """,
            note="A claim row with a unique key: one delivery wins.",
        ),
        Example(
            {
                "api/locks.py": """
                    import redis

                    r = redis.Redis()

                    def claim_once(thread_id: str) -> bool:
                        return bool(r.set(f"resume:{thread_id}", 1, nx=True, ex=300))
                    """,
                "api/views.py": """
                    from fastapi import FastAPI
                    from langgraph.types import Command

                    from .graph import graph
                    from .locks import claim_once

                    app = FastAPI()

                    @app.post("/threads/{thread_id}/answer")
                    def answer(thread_id: str, approved: bool):
                        if not claim_once(thread_id):
                            return {"status": "duplicate"}
                        return graph.invoke(Command(resume=approved), {"configurable": {"thread_id": thread_id}})
                    """,
                "api/__init__.py": "",
            },
            note="Redis SET NX in a helper in a sibling module.",
        ),
        Example(
            """
            import sqlite3

            import remit
            from fastapi import FastAPI
            from langgraph.checkpoint.sqlite import SqliteSaver
            from langgraph.graph import StateGraph
            from langgraph.types import Command, interrupt

            def gate(state: dict) -> dict:
                return {"ok": interrupt("approve?")}

            builder = StateGraph(dict)
            builder.add_node("gate", gate)
            builder.set_entry_point("gate")
            conn = sqlite3.connect("runs.db", check_same_thread=False)
            graph = builder.compile(checkpointer=remit.wrap(SqliteSaver, conn, cross_process_gate=True))
            app = FastAPI()

            @app.post("/threads/{thread_id}/answer")
            def answer(thread_id: str, ok: bool):
                return graph.invoke(Command(resume=ok), {"configurable": {"thread_id": thread_id}})
            """,
            note="remit's cross-process consume gate refuses the losing racer.",
        ),
        Example(
            """
            from langgraph.types import Command

            from agent import graph

            def main(thread_id: str, answer: str) -> None:
                print(graph.invoke(Command(resume=answer), {"configurable": {"thread_id": thread_id}}))

            if __name__ == "__main__":
                import sys
                main(sys.argv[1], sys.argv[2])
            """,
            note="A command-line tool: one delivery per run.",
        ),
        Example(
            """
            import secrets

            from fastapi import FastAPI
            from langgraph.types import Command

            from .graph import graph

            app = FastAPI()

            @app.post("/tasks")
            async def run_task(task: str) -> dict:
                cfg = {"configurable": {"thread_id": f"task-{secrets.token_hex(8)}"}}
                result = await graph.ainvoke({"task": task}, cfg)
                while "__interrupt__" in result:
                    result = await graph.ainvoke(Command(resume="approve"), cfg)
                return result
            """,
            note="An auto-approval inside the request that started the run: no second delivery can reach its thread.",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        module = ctx.module
        project = ctx.project
        if not module.uses_any(langgraph.PACKAGES) and not project_uses_langgraph(project):
            return
        for fn in [*module.functions, module.script_body]:
            path = web.served_path(fn, project)
            if path is None:
                continue
            resumes = list(self._resumes(fn, ctx))
            if not resumes:
                continue
            gated_by_301 = self._decided_by_get_state(fn, ctx)
            for report, run, form in resumes:
                if self._remit_gate(run, fn, ctx):
                    continue
                if path.handler.kind != web.STREAMLIT_RUN and self._started_here(run, fn, ctx):
                    # (a Streamlit page starts the run under one button and resumes it under
                    # another: two different script runs, two deliveries)
                    continue
                if self._claimed_before(run, fn, path, ctx):
                    continue
                if path.handler.kind.startswith("MCP ") and self._consumed_in_process(run, fn, ctx):
                    continue
                if path.handler.kind == web.STREAMLIT_RUN and not web.session_shared(
                    self._thread_value(run, fn, ctx), fn, ctx.module, project
                ):
                    continue  # one script run per session at a time, and this session's own thread
                handler = path.handler
                where = (
                    f"{handler.kind} '{handler.function.qualname}'"
                    if handler.function is fn
                    else f"'{fn.qualname}', called from {handler.kind} '{handler.function.qualname}'"
                )
                local = self._local_lock(run, fn, ctx)
                lock_note = (
                    f" The {local} around it serialises one process only; a second worker still resumes."
                    if local
                    else ""
                )
                related = [Related(ctx.span(handler.node, handler.module), f"{handler.kind}: runs once per delivery")]
                if report is not run.node:
                    related.append(Related(ctx.span(run.node), "the run that delivers it"))
                check = gated_by_301.get(id(run.node))
                check_note = (
                    f" The get_state check at line {check} before it does not stop this: both deliveries pass it "
                    f"(RA301)."
                    if check is not None
                    else ""
                )
                if self._resumes_pure_graph(run, fn, ctx):
                    # nothing outside repeats; one answer is still consumed twice (CO)
                    yield ctx.finding(
                        report,
                        f"{form} is delivered from {where} with no dedupe or lock. No node of the resumed graph "
                        f"reaches an effect, so nothing outside fires twice -- but two deliveries of one answer "
                        f"both resume the parked interrupt: the answer is consumed twice and the graph runs twice "
                        f"(two model bills, two results racing for the thread's last checkpoint).{lock_note}{check_note}",
                        related=related,
                        severity=Severity.NOTE,
                    )
                    continue
                yield ctx.finding(
                    report,
                    f"{form} is delivered from {where} with no dedupe or lock. Two deliveries of one answer (a "
                    f"double click, a retried request, a redelivered message, two workers) both resume the parked "
                    f"interrupt and both run the gated node -- LangGraph has no compare-and-swap on interrupt "
                    f"consumption.{lock_note}{check_note}",
                    related=related,
                )

    # -- what is a resume -----------------------------------------------------
    def _resumes(self, fn: FunctionInfo, ctx: RuleContext) -> Iterator[tuple[cst.CSTNode, CallInfo, str]]:
        """(node to report, run call, description) for each resume ``fn`` delivers."""
        for call in fn.calls:
            f = call.node.func
            if not (isinstance(f, cst.Attribute) and f.attr.value in langgraph.RUN_METHODS):
                continue
            first = argument(call.node, 0, "input")
            cmd = resume_command(first, fn, ctx)
            if cmd is not None:
                yield cmd, call, "Command(resume=...)"
                continue
            if not (is_none(first) or self._maybe_none(first, fn)):
                continue
            updates = [
                c
                for c in fn.calls
                if isinstance(c.node.func, cst.Attribute)
                and c.node.func.attr.value in langgraph.UPDATE_STATE_METHODS
                and completes_before(c, call, ctx.module, fn.node)
            ]
            if updates:
                yield call.node, call, f"{ctx.describe_call(call.node)} after update_state(...)"
                continue
            graph = graph_anywhere(f.value, fn, ctx.module, ctx.project)
            if isinstance(graph, langgraph.CompiledGraph) and any(
                (kw := keyword(graph.compile_call, k)) is not None and not is_none(kw.value)
                for k in ("interrupt_before", "interrupt_after")
            ):
                yield call.node, call, f"{ctx.describe_call(call.node)} (continuing past a static breakpoint)"

    @staticmethod
    def _maybe_none(expr: cst.BaseExpression | None, fn: FunctionInfo) -> bool:
        """A local the function sets to ``None`` on the resume path (``inp = None  # resuming``)."""
        return isinstance(expr, cst.Name) and any(
            b.name == expr.value and b.kind == "assign" and is_none(b.value) for b in fn.bindings
        )

    def _started_here(self, run: CallInfo, fn: FunctionInfo, ctx: RuleContext) -> bool:
        return started_run_before(run, fn, ctx)

    def _decided_by_get_state(self, fn: FunctionInfo, ctx: RuleContext) -> dict[int, int]:
        """id of each resume node a ``get_state`` check in ``fn`` decides -> the check's line."""
        out: dict[int, int] = {}
        candidates = None
        for call in fn.calls:
            f = call.node.func
            if not (isinstance(f, cst.Attribute) and f.attr.value in langgraph.GET_STATE_METHODS):
                continue
            if candidates is None:
                candidates = resume_calls(fn, ctx)
            decided = decided_resume(call, fn, candidates, ctx)
            if decided is not None:
                out[id(decided[1].node)] = ctx.module.line(call.node)
        return out

    def _resumes_pure_graph(self, run: CallInfo, fn: FunctionInfo, ctx: RuleContext) -> bool:
        """The resumed graph is known and none of its nodes reaches an effect: a second delivery
        runs pure code again and fires nothing twice."""
        obj = receiver(run.node)
        graph = graph_anywhere(obj, fn, ctx.module, ctx.project) if obj is not None else None
        return isinstance(graph, langgraph.CompiledGraph) and graph_is_pure(ctx, graph)

    # -- what is a dedupe ------------------------------------------------------
    def _remit_gate(self, run: CallInfo, fn: FunctionInfo, ctx: RuleContext) -> bool:
        obj = receiver(run.node)
        graph = graph_anywhere(obj, fn, ctx.module, ctx.project) if obj is not None else None
        if not isinstance(graph, langgraph.CompiledGraph):
            return False
        wrap = langgraph.remit_wrap_call(graph.checkpointer, graph.scope, graph.module, ctx.project)
        gate = keyword(wrap, "cross_process_gate") if wrap is not None else None
        return gate is not None and bool_value(gate.value) is True

    def _claimed_before(self, run: CallInfo, fn: FunctionInfo, path: web.ServedPath, ctx: RuleContext) -> bool:
        project = ctx.project
        classify = claim_classifier(project)
        if self._claim_in(fn, ctx.module, run, classify, project):
            return True
        # the functions on the way from the handler: a claim taken before the call that leads here
        for node, mod in zip(path.calls, path.modules):
            info = mod.call_info(node)
            if info is None or info.function is None:
                continue
            if self._claim_in(info.function, mod, info, classify, project):
                return True
        return False

    def _claim_in(
        self,
        fn: FunctionInfo,
        module: ModuleFacts,
        before: CallInfo,
        classify: Callable[[CallInfo, ModuleFacts], str | None],
        project: Project,
    ) -> bool:
        for call in fn.calls:
            if call is before or not completes_before(call, before, module, fn.node):
                continue
            if project.reach("ra302-claim", classify, call, module) is not None:
                return True
        return False

    def _thread_value(self, run: CallInfo, fn: FunctionInfo, ctx: RuleContext) -> cst.BaseExpression | None:
        """The ``thread_id`` expression of the config a run is given (through a local or module name)."""
        config = argument(run.node, 1, "config")
        scope: FunctionInfo | None = fn
        for _ in range(3):
            if not isinstance(config, cst.Name):
                break
            found = ctx.resolver.binding_value(config.value, scope, ctx.module.order(config))
            if found is None or found[0].kind != "assign":
                return None
            config, scope = found[0].value, found[1]
        if not isinstance(config, cst.Dict):
            return None
        for key, value in dict_items(config):
            if key == "configurable" and isinstance(value, cst.Dict):
                for inner_key, inner in dict_items(value):
                    if inner_key == "thread_id":
                        return inner
        return None

    def _consumed_in_process(self, run: CallInfo, fn: FunctionInfo, ctx: RuleContext) -> bool:
        """``pending.pop(thread_id)`` / ``pending.remove(thread_id)`` on a module-level container
        before the resume: the pop is atomic and raises for the second delivery, so one answer is
        consumed once -- within one process, which is what an MCP server is (stdio, or one SSE
        process per server). A web app with several workers gets no such pass."""
        for call in fn.calls:
            f = call.node.func
            if not (isinstance(f, cst.Attribute) and f.attr.value in ("pop", "remove") and len(call.node.args) == 1):
                continue
            if not isinstance(f.value, cst.Name) or not completes_before(call, run, ctx.module, fn.node):
                continue
            found = ctx.resolver.binding_value(f.value.value, fn, None)
            if found is not None and found[1] is None:
                return True
        return False

    def _local_lock(self, run: CallInfo, fn: FunctionInfo, ctx: RuleContext) -> str | None:
        for anc in ctx.module.ancestors(run.node):
            if anc is fn.node:
                break
            if isinstance(anc, (cst.With,)):
                for item in anc.items:
                    names = ctx.resolver.names(item.item, fn)
                    hit = names & _LOCAL_LOCKS
                    if hit:
                        return sorted(hit)[0]
        return None
