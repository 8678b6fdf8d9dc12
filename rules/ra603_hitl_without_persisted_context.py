"""RA603: LlamaIndex Workflows human-in-the-loop with no persisted ``Context``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

import libcst as cst

from resume_audit.analysis.deployments import deployment_of
from resume_audit.analysis.queries import NameResolver
from resume_audit.facts.model import CallInfo, ClassInfo, FunctionInfo, ModuleFacts
from resume_audit.facts.syntax import argument, contains_node, keyword, names_in, receiver
from resume_audit.findings import Finding, Related, Severity
from resume_audit.frameworks.classes import extends, instance_class, named_class
from resume_audit.frameworks.llamaindex import names as llamaindex
from resume_audit.rules.base import Example, Rule, RuleContext

if TYPE_CHECKING:
    from resume_audit.analysis.project import Project

_DUMPS = frozenset({"json.dump", "pickle.dump", "yaml.dump", "yaml.safe_dump"})


@dataclass
class _Evidence:
    """Where the project makes parked runs durable, and who answers them, per workflow class.

    Keyed by ``id(ClassInfo)`` of the workflow; ``None`` holds evidence whose
    workflow could not be determined (it then counts for every workflow)."""

    persisted: dict[int | None, tuple[cst.CSTNode, ModuleFacts, str]] = field(default_factory=dict)
    responders: dict[int | None, list[FunctionInfo]] = field(default_factory=dict)

    def persisted_for(self, cls: ClassInfo | None) -> tuple[cst.CSTNode, ModuleFacts, str] | None:
        if cls is not None and id(cls) in self.persisted:
            return self.persisted[id(cls)]
        return self.persisted.get(None)

    def console_for(self, cls: ClassInfo | None, project: Project) -> bool:
        """Every responder of this workflow reads the console. Responders whose workflow is unknown
        count for workflows of their own module or of a module they import."""
        untyped = self.responders.get(None, [])
        if cls is not None:
            untyped = [fn for fn in untyped if _near(fn.module, cls.module)]
        fns = [*(self.responders.get(id(cls), []) if cls is not None else []), *untyped]
        return bool(fns) and all(_reads_console(fn, project) for fn in fns)


def _near(user: ModuleFacts, owner: ModuleFacts) -> bool:
    if user is owner:
        return True
    name = owner.module_name
    return any(m == name or m.startswith(name + ".") for m in user.imported_modules)


def _workflow_class(cls: ClassInfo | None, project: Project) -> ClassInfo | None:
    if cls is not None and extends(cls, llamaindex.WORKFLOW, project):
        return cls
    return None


def workflow_of_context(
    expr: cst.BaseExpression, fn: FunctionInfo | None, module: ModuleFacts, project: Project
) -> ClassInfo | None:
    """The workflow class a context expression belongs to: ``handler.ctx`` with
    ``handler = Wf().run()``, ``ctx = Context(wf)`` / ``Context.from_dict(wf, ...)``,
    or ``ctx`` inside a step of ``Wf``."""
    if isinstance(expr, cst.Attribute) and expr.attr.value in ("ctx", "context"):
        call = _follow_call(expr.value, fn, module, project)
        obj = receiver(call) if call is not None and llamaindex.is_method_call(call, llamaindex.RUN_METHOD) else None
        if obj is not None:
            return _workflow_class(instance_class(obj, fn, module, project), project)
        return None
    if isinstance(expr, cst.Name):
        call = _follow_call(expr, fn, module, project)
        if call is not None and call.args:
            names = project.resolver(module).call_names(call, fn)
            if names & (llamaindex.CONTEXT | llamaindex.CONTEXT_FROM_DICT_NAMES):
                return _workflow_class(instance_class(call.args[0].value, fn, module, project), project)
        if fn is not None and fn.class_info is not None:
            return _workflow_class(fn.class_info, project)
    return None


def _is_context_like(expr: cst.BaseExpression, fn: FunctionInfo | None, resolver: NameResolver) -> bool:
    """``ctx``, ``handler.ctx``, or anything typed as a workflows Context."""
    if resolver.names(expr, fn) & llamaindex.CONTEXT:
        return True
    if isinstance(expr, cst.Attribute) and expr.attr.value in ("ctx", "context"):
        return True
    return isinstance(expr, cst.Name) and expr.value in ("ctx", "context")


def _follow_call(
    expr: cst.BaseExpression | None, scope: FunctionInfo | None, module: ModuleFacts, project: Project
) -> cst.Call | None:
    for _ in range(4):
        if isinstance(expr, cst.Call):
            return expr
        if not isinstance(expr, cst.Name):
            return None
        found = project.resolver(module).binding_value(expr.value, scope, module.order(expr))
        if found is None or found[0].kind not in ("assign", "with"):
            return None
        expr, scope = found[0].value, found[1]
    return None


def _input_required(call: cst.Call, scope: FunctionInfo | None, module: ModuleFacts, project: Project) -> bool:
    if project.resolver(module).call_names(call, scope) & llamaindex.INPUT_REQUIRED_EVENT:
        return True
    cls = named_class(call.func, scope, module, project)
    return cls is not None and extends(cls, llamaindex.INPUT_REQUIRED_EVENT, project)


class HitlWithoutPersistedContext(Rule):
    id = "RA603"
    # the sweep persists the workflow context itself (the documented plane), so no probe shows its absence
    confirmed_by = ()
    name = "hitl-without-persisted-context"
    properties = ("LV",)
    severity = Severity.WARNING
    frameworks = ("llamaindex-workflows",)
    summary = (
        "LlamaIndex human-in-the-loop with no persisted Context: a run parked for a human cannot survive a restart."
    )
    description = """
A LlamaIndex workflow waits for a human -- `await ctx.wait_for_event(...)`
in a step, or a step returning `InputRequiredEvent` (or a subclass) -- and
nothing in the project makes the parked run durable: no
`Context.from_dict(...)` restore, no `ctx.to_dict()` written to a file,
database or cache, no `WorkflowServer` with a durable workflow store.
"""
    runtime = """
A parked run lives only in the workflow's in-process `Context` (its
queues, its store, the step waiting for the event). When the process
restarts -- a deploy, a crash, an autoscaler -- the run and everything it
did so far are gone; the human's answer has nothing to resume, and the
only way on is to start over, repeating the prefix's effects. The
documented durable pattern (llama-index-workflows 2.26.1) is
`ctx.to_dict()` stored somewhere durable and
`Context.from_dict(workflow, data)` + `workflow.run(ctx=restored)`;
measured: the two-step `InputRequiredEvent` / `HumanResponseEvent`
pattern restores cleanly from such a snapshot (prefix effect once, each
answer its own outcome).
"""
    fix = """
Snapshot the context when the run parks and restore it when the answer
arrives: `data = handler.ctx.to_dict()` -> store `json.dumps(data)` in
your database; later `ctx = Context.from_dict(workflow, json.loads(row))`,
`handler = workflow.run(ctx=ctx)`, `handler.ctx.send_event(HumanResponseEvent(...))`.
Or serve the workflow with `WorkflowServer(workflow_store=SqliteWorkflowStore(...))`
(llama-agents-server), which persists handlers.
"""
    no_autofix = """
Persisting the Context needs a store (file, database, cache) and a key
per run; both come from the deployment.
"""
    not_flagged = """
- projects that restore a context with `Context.from_dict(...)`, write `ctx.to_dict()` to a file/database/cache, or serve workflows with a durable `WorkflowServer` store (the evidence is project-wide: the tool does not match snapshots to workflows);
- console sessions: every human response is read at the terminal (`input()`, also handed to a thread as `asyncio.to_thread(input, ...)`, `getpass`, click/typer/rich prompts) by the process that runs the workflow -- the run lives exactly as long as the person at the terminal;
- `wait_for_event` on an object that is not a workflows `Context`, and `InputRequiredEvent` classes that are not LlamaIndex's.
"""

    INVALID = (
        Example(
            """
            from fastapi import FastAPI
            from workflows import Context, Workflow, step
            from workflows.events import HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent

            app = FastAPI()
            RUNS = {}

            class Expense(Workflow):
                @step
                async def approve(self, ctx: Context, ev: StartEvent) -> StopEvent:
                    answer = await ctx.wait_for_event(  # expect: RA603
                        HumanResponseEvent, waiter_event=InputRequiredEvent(prefix="Approve?"), waiter_id="approve"
                    )
                    return StopEvent(result=answer.response)

            @app.post("/expenses")
            async def submit():
                handler = Expense().run()
                RUNS[handler.run_id] = handler
                return {"run": handler.run_id}

            @app.post("/expenses/{run_id}/answer")
            async def answer(run_id: str, text: str):
                RUNS[run_id].ctx.send_event(HumanResponseEvent(response=text))
            """,
            note="Parked runs live in a module dict of a served app.",
        ),
        Example(
            {
                "hitl/events.py": """
                    from llama_index.core.workflow import InputRequiredEvent

                    class NeedsSignoff(InputRequiredEvent):
                        document: str
                    """,
                "hitl/flow.py": """
                    from llama_index.core.workflow import Context, HumanResponseEvent, StartEvent, StopEvent, Workflow, step
                    from .events import NeedsSignoff

                    class Contract(Workflow):
                        @step
                        async def draft(self, ctx: Context, ev: StartEvent) -> NeedsSignoff:
                            return NeedsSignoff(prefix="Sign off?", document=ev.get("doc"))  # expect: RA603

                        @step
                        async def finish(self, ctx: Context, ev: HumanResponseEvent) -> StopEvent:
                            return StopEvent(result=ev.response)
                    """,
                "hitl/__init__.py": "",
            },
            note="Older import path; a subclass of InputRequiredEvent defined in a sibling module; the answer arrives from outside the project.",
        ),
        Example(
            """
            import redis
            from workflows import Workflow, step
            from workflows.events import HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent

            cache = redis.Redis()

            class Review(Workflow):
                @step
                async def ask(self, ctx, ev: StartEvent) -> InputRequiredEvent:
                    ev_out = InputRequiredEvent(prefix="Publish?")
                    return ev_out  # expect: RA603

                @step
                async def publish(self, ctx, ev: HumanResponseEvent) -> StopEvent:
                    return StopEvent(result=ev.response)

            async def start(run_id):
                handler = Review().run()
                async for event in handler.stream_events():
                    if isinstance(event, InputRequiredEvent):
                        cache.set(f"waiting:{run_id}", "1")
                        return run_id
            """,
            note="The event is built in a variable; only a 'waiting' flag is stored, not the context.",
        ),
    )
    VALID = (
        Example(
            """
            import json
            from pathlib import Path
            from workflows import Context, Workflow, step
            from workflows.events import HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent

            class Review(Workflow):
                @step
                async def ask(self, ctx: Context, ev: StartEvent) -> InputRequiredEvent:
                    return InputRequiredEvent(prefix="Publish?")

                @step
                async def publish(self, ctx: Context, ev: HumanResponseEvent) -> StopEvent:
                    return StopEvent(result=ev.response)

            async def park(run_id):
                handler = Review().run()
                async for event in handler.stream_events():
                    if isinstance(event, InputRequiredEvent):
                        Path(f"runs/{run_id}.json").write_text(json.dumps(handler.ctx.to_dict()))
                        return

            async def answer(run_id, text):
                workflow = Review()
                ctx = Context.from_dict(workflow, json.loads(Path(f"runs/{run_id}.json").read_text()))
                handler = workflow.run(ctx=ctx)
                handler.ctx.send_event(HumanResponseEvent(response=text))
                return await handler
            """,
            note="The context is snapshotted to disk and restored when the answer arrives.",
        ),
        Example(
            """
            from workflows import Context, Workflow, step
            from workflows.events import HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent

            class Quiz(Workflow):
                @step
                async def ask(self, ctx: Context, ev: StartEvent) -> StopEvent:
                    reply = await ctx.wait_for_event(
                        HumanResponseEvent, waiter_event=InputRequiredEvent(prefix="Your name? "), waiter_id="name"
                    )
                    return StopEvent(result=reply.response)

            async def main():
                handler = Quiz().run()
                async for event in handler.stream_events():
                    if isinstance(event, InputRequiredEvent):
                        handler.ctx.send_event(HumanResponseEvent(response=input(event.prefix)))
                print(await handler)
            """,
            note="A console session: the human answers in the same process, at the terminal.",
        ),
        Example(
            """
            from llama_agents.server import SqliteWorkflowStore, WorkflowServer
            from workflows import Context, Workflow, step
            from workflows.events import HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent

            class Approval(Workflow):
                @step
                async def ask(self, ctx: Context, ev: StartEvent) -> StopEvent:
                    answer = await ctx.wait_for_event(HumanResponseEvent, waiter_event=InputRequiredEvent(prefix="ok?"), waiter_id="ok")
                    return StopEvent(result=answer.response)

            server = WorkflowServer(workflow_store=SqliteWorkflowStore("handlers.db"))
            server.add_workflow("approval", Approval())
            """,
            note="Served by a WorkflowServer with a durable handler store.",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        if not ctx.module.uses_any(llamaindex.PACKAGES) and not self._subclass_user(ctx):
            return
        resolver = ctx.resolver
        project = ctx.project
        if deployment_of(ctx.module, project, "uipath") is not None:
            return  # the host runtime persists and restores the Context of a suspended run
        evidence = None
        for fn in ctx.module.functions:
            waits = [c for c in fn.calls if llamaindex.is_method_call(c.node, llamaindex.WAIT_FOR_EVENT)]
            is_step = bool(fn.decorators) and llamaindex.is_step(fn, resolver)
            if not waits and not is_step:
                continue
            if evidence is None:
                evidence = self._project_evidence(ctx)
            workflow = _workflow_class(fn.class_info, project) if fn.class_info is not None else None
            if evidence.persisted_for(workflow) is not None or evidence.console_for(workflow, project):
                continue
            for call in waits:
                if llamaindex.is_context_receiver(call.node, fn, resolver):
                    yield ctx.finding(
                        call.node,
                        f"Step '{fn.qualname}' parks here for a human, and nothing in the project persists the run's "
                        f"Context (no Context.from_dict restore, no ctx.to_dict() stored durably, no durable "
                        f"WorkflowServer store). A restart while the run waits loses it: the answer has nothing to "
                        f"resume and the run must start over.",
                        related=(_where_it_lives(ctx, fn, workflow),),
                    )
            if not is_step:
                continue
            for ret in fn.returns:
                event = _follow_call(ret.value, fn, ctx.module, project)
                if event is None or not _input_required(event, fn, ctx.module, project):
                    continue
                related = [_where_it_lives(ctx, fn, workflow)]
                if ret.value is not event:
                    related.append(Related(ctx.span(event), "the InputRequiredEvent"))
                yield ctx.finding(
                    ret.value if ret.value is not None else ret,
                    f"Step '{fn.qualname}' returns {ctx.module.code(event.func)}, parking the run for a human, and "
                    f"nothing in the project persists the run's Context (no Context.from_dict restore, no "
                    f"ctx.to_dict() stored durably, no durable WorkflowServer store). A restart while the run waits "
                    f"loses it: the answer has nothing to resume and the run must start over.",
                    related=related,
                )
                break

    # -- project-wide evidence ------------------------------------------------
    def _subclass_user(self, ctx: RuleContext) -> bool:
        """A module subclassing a project Workflow need not import workflows itself (cached per project)."""
        return ctx.project.cached(self.id, "uses", lambda: bool(ctx.project.modules_using(llamaindex.PACKAGES)))

    def _project_evidence(self, ctx: RuleContext) -> _Evidence:
        return ctx.project.cached(self.id, "evidence", lambda: self._gather_evidence(ctx))

    def _gather_evidence(self, ctx: RuleContext) -> _Evidence:
        project = ctx.project
        evidence = _Evidence()
        # evidence of persistence and human responders: modules naming the workflow APIs
        words = ["to_dict", "from_dict", "WorkflowServer", "send_event", "HumanResponseEvent"]
        for module in project.modules_mentioning(words):
            resolver = project.resolver(module)
            for info in module.all_calls:
                found = self._persists(info, module, ctx)
                if found is not None:
                    what, workflows = found
                    owners: list[ClassInfo | None] = [*workflows] or [None]
                    for workflow in owners:
                        evidence.persisted.setdefault(
                            id(workflow) if workflow is not None else None, (info.node, module, what)
                        )
                    continue
                fn = info.function
                if fn is None or llamaindex.is_step(fn, resolver):
                    continue
                sent_to = receiver(info.node) if llamaindex.is_method_call(info.node, "send_event") else None
                if sent_to is not None:
                    workflow = workflow_of_context(sent_to, fn, module, project)
                elif resolver.call_names(info.node, fn) & llamaindex.HUMAN_RESPONSE_EVENT:
                    workflow = None
                else:
                    continue
                key = id(workflow) if workflow is not None else None
                bucket = evidence.responders.setdefault(key, [])
                if fn not in bucket:
                    bucket.append(fn)
        # a function that constructs a HumanResponseEvent and sends it to a known workflow counts for that workflow
        untyped = evidence.responders.get(None, [])
        typed = {id(f) for k, fns in evidence.responders.items() if k is not None for f in fns}
        evidence.responders[None] = [f for f in untyped if id(f) not in typed]
        return evidence

    def _persists(self, info: CallInfo, module: ModuleFacts, ctx: RuleContext) -> tuple[str, list[ClassInfo]] | None:
        """(what, workflow class or None) when this call makes parked runs durable."""
        project = ctx.project
        resolver = project.resolver(module)
        node = info.node
        fn = info.function
        names = resolver.call_names(node, fn)
        if names & llamaindex.CONTEXT_FROM_DICT_NAMES:
            if _restores_in_memory_snapshot(node, fn, module, project):
                return None  # the snapshot never left the process: nothing survives a restart
            workflow = instance_class(node.args[0].value, fn, module, project) if node.args else None
            workflows = [w for w in [_workflow_class(workflow, project)] if w is not None]
            if not workflows and node.args:
                return None  # a restore of a workflow we cannot name proves nothing about the others
            return "Context.from_dict", workflows
        if names & llamaindex.WORKFLOW_SERVER:
            store = keyword(node, "workflow_store")
            call = _follow_call(store.value, fn, module, project) if store is not None else None
            if call is not None:
                store_names = resolver.call_names(call, fn)
                cls = named_class(call.func, fn, module, project)
                if store_names & llamaindex.DURABLE_WORKFLOW_STORES or (
                    cls is not None and extends(cls, llamaindex.ABSTRACT_WORKFLOW_STORE, project)
                ):
                    return "WorkflowServer(workflow_store=...)", _served_workflows(node, fn, module, project)
            return None
        snapshot = receiver(node) if llamaindex.is_method_call(node, llamaindex.CONTEXT_TO_DICT) else None
        if (
            snapshot is not None
            and fn is not None
            and _is_context_like(snapshot, fn, resolver)
            and self._stores_durably(fn, module, ctx, node)
        ):
            workflow = workflow_of_context(snapshot, fn, module, project)
            return "ctx.to_dict() stored", [workflow] if workflow is not None else []
        return None

    def _stores_durably(self, fn: FunctionInfo, module: ModuleFacts, ctx: RuleContext, snapshot: cst.Call) -> bool:
        """Does ``fn`` hand the ``to_dict()`` result (directly, or through names derived from it:
        ``data = ctx.to_dict(); blob = json.dumps(data)``) to a durable write?"""
        resolver = ctx.project.resolver(module)
        derived = _names_derived_from(snapshot, fn)
        for call in fn.calls:
            if not (contains_node(call.node, snapshot) or names_in(call.node) & derived):
                continue
            if resolver.call_names(call.node, fn) & _DUMPS:
                return True
            effect = ctx.effect_reached(call, module)
            if effect is not None and effect.hit.kind in ("file", "sql", "cloud", "message", "configured"):
                return True
            if isinstance(call.node.func, cst.Attribute) and call.node.func.attr.value in (
                "set",
                "hset",
                "put",
                "save",
                "upsert",
            ):
                return True
        return False


def _names_derived_from(snapshot: cst.Call, fn: FunctionInfo) -> set[str]:
    """Local names that hold the snapshot or a serialised form of it (``data = ctx.to_dict()``,
    ``blob = json.dumps(data)``, ``row = {"ctx": data}``) -- not whatever a restore from it builds."""
    names: set[str] = set()
    for _ in range(3):
        for b in fn.bindings:
            if b.kind == "assign" and b.name not in names and _carries(b.value, snapshot, names):
                names.add(b.name)
    return names


def _carries(value: cst.BaseExpression, snapshot: cst.Call, names: set[str]) -> bool:
    if isinstance(value, cst.Await):
        value = value.expression
    if value is snapshot or (isinstance(value, cst.Name) and value.value in names):
        return True
    if isinstance(value, (cst.Dict, cst.List, cst.Tuple, cst.FormattedString)):
        return contains_node(value, snapshot) or bool(names_in(value) & names)
    if isinstance(value, cst.Call):
        func = value.func
        last = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        if last in ("dumps", "dump", "serialize", "encode", "str", "bytes", "b64encode", "compress"):
            return any(_carries(a.value, snapshot, names) for a in value.args)
    return False


def _restores_in_memory_snapshot(
    call: cst.Call, fn: FunctionInfo | None, module: ModuleFacts, project: Project
) -> bool:
    """``Context.from_dict(wf, snapshot)`` where ``snapshot`` is a local name bound to a
    ``.to_dict()`` result in the same function (a websocket handler's loop, say)."""
    data = argument(call, 1, "data")
    if not isinstance(data, cst.Name) or fn is None:
        return False
    for b in fn.bindings:
        if b.name == data.value and b.kind == "assign":
            value = b.value.expression if isinstance(b.value, cst.Await) else b.value
            if isinstance(value, cst.Call) and llamaindex.is_method_call(value, llamaindex.CONTEXT_TO_DICT):
                return True
    return False


def _where_it_lives(ctx: RuleContext, fn: FunctionInfo, workflow: ClassInfo | None) -> Related:
    if workflow is not None:
        return Related(
            ctx.span(workflow.node.name, workflow.module), f"{workflow.name} runs with an in-process Context only"
        )
    return Related(ctx.span(fn.node.name), f"the step '{fn.qualname}' runs with an in-process Context only")


def _served_workflows(
    server: cst.Call, fn: FunctionInfo | None, module: ModuleFacts, project: Project
) -> list[ClassInfo]:
    """Workflows registered on a server: ``server.add_workflow("name", Wf())`` in the same scope."""
    parent = module.parent(server)
    if not (
        isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name)
    ):
        return []
    var = parent.targets[0].target.value
    out: list[ClassInfo] = []
    for info in fn.calls if fn is not None else module.module_calls:
        f = info.node.func
        if (
            isinstance(f, cst.Attribute)
            and f.attr.value == "add_workflow"
            and isinstance(f.value, cst.Name)
            and f.value.value == var
        ):
            wf = argument(info.node, 1, "workflow")
            cls = _workflow_class(instance_class(wf, fn, module, project), project) if wf is not None else None
            if cls is not None:
                out.append(cls)
    return out


#: Reading a human's answer at the terminal of the process that runs the workflow.
_CONSOLE_READERS = frozenset(
    {
        "builtins.input",
        "getpass.getpass",
        "sys.stdin.readline",
        "sys.stdin.read",
        "rich.prompt.Prompt.ask",
        "rich.prompt.Confirm.ask",
        "click.prompt",
        "click.confirm",
        "typer.prompt",
        "typer.confirm",
        "questionary.text",
        "questionary.confirm",
        "questionary.select",
    }
)


def _reads_console(fn: FunctionInfo, project: Project) -> bool:
    """The function reads the console: calls ``input()`` (or a prompt library), or hands ``input``
    to a thread (``await asyncio.to_thread(input, prompt)``)."""
    resolver = project.resolver(fn.module)
    for c in fn.calls:
        if resolver.call_names(c.node, fn) & _CONSOLE_READERS:
            return True
        for arg in c.node.args:
            if isinstance(arg.value, (cst.Name, cst.Attribute)) and resolver.names(arg.value, fn) & _CONSOLE_READERS:
                return True
    return False
