"""RA605: a broad ``except`` around a resume or restore that falls back to starting the run fresh."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

import libcst as cst

from resume_audit.facts.model import CallInfo, ClassInfo, FunctionInfo, ModuleFacts

if TYPE_CHECKING:
    from resume_audit.analysis.project import Project

from resume_audit.facts.syntax import argument, is_none, keyword, receiver
from resume_audit.facts.walk import visit_fast
from resume_audit.findings import Finding, Related, Severity
from resume_audit.frameworks.classes import extends, instance_class, module_constant, named_class
from resume_audit.frameworks.crewai import names as crewai
from resume_audit.frameworks.crewai.names import rekick_id
from resume_audit.frameworks.langgraph import names as langgraph
from resume_audit.frameworks.llamaindex import names as llamaindex
from resume_audit.frameworks.pydantic_graph import names as pg
from resume_audit.reading.prefilter import Trigger
from resume_audit.rules.base import Example, Rule, RuleContext

_BROAD = frozenset({"builtins.Exception", "builtins.BaseException"})


@dataclass(frozen=True)
class Hit:
    """A resume/restore or a fresh start: the framework, what it is, and the object it acts on."""

    framework: str
    label: str
    #: source text of the receiver (``graph``, ``self.flow``) for matching a fallback to its resume
    receiver: str | None
    #: the class the receiver is an instance of, when known
    target: ClassInfo | None = None


def _method_name(call: cst.Call) -> str | None:
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else None


def _receiver(call: cst.Call, module: ModuleFacts) -> str | None:
    return module.code(call.func.value) if isinstance(call.func, cst.Attribute) else None


def _is_resume_command(
    expr: cst.BaseExpression, scope: FunctionInfo | None, module: ModuleFacts, project: Project
) -> bool:
    if isinstance(expr, cst.Name) and scope is not None:
        found = project.resolver(module).binding_value(expr.value, scope, module.order(expr))
        if found is None or found[0].kind != "assign":
            return False
        expr, scope = found[0].value, found[1]
    return (
        isinstance(expr, cst.Call)
        and keyword(expr, "resume") is not None
        and bool(project.resolver(module).call_names(expr, scope) & langgraph.COMMAND)
    )


def resume_or_restore(call: CallInfo, module: ModuleFacts, project: Project) -> Hit | None:
    """Is this call a resume / restore of a parked or crashed run (any of the four frameworks)?"""
    node, scope = call.node, call.function
    resolver = project.resolver(module)
    method = _method_name(node)
    recv = _receiver(node, module)
    obj = receiver(node)
    names = resolver.call_names(node, scope)
    # LangGraph: graph.invoke(Command(resume=...), cfg) / graph.invoke(None, cfg)
    if method in langgraph.RUN_METHODS and module.uses_any(langgraph.PACKAGES):
        first = argument(node, 0, "input")
        if first is not None and (is_none(first) or _is_resume_command(first, scope, module, project)):
            form = "Command(resume=...)" if not is_none(first) else "None (continue from the last checkpoint)"
            return Hit("langgraph", f"{recv}.{method}({form}, ...)", recv)
    # CrewAI
    if obj is not None and (method in crewai.RESTORE_CLASSMETHODS or method == crewai.FROM_PENDING):
        cls = named_class(obj, scope, module, project)
        if (cls is not None and crewai.is_flow_class(cls, project)) or resolver.names(obj, scope) & (
            crewai.FLOW | crewai.CREW
        ):
            return Hit("crewai", f"{recv}.{method}(...)", None, cls)
    if obj is not None and crewai.is_kickoff(node):
        cls = instance_class(obj, scope, module, project)
        is_flow = cls is not None and crewai.is_flow_class(cls, project)
        if is_flow or module.uses_any(crewai.PACKAGES):
            if keyword(node, "from_checkpoint") is not None:
                return Hit("crewai", f"{recv}.{method}(from_checkpoint=...)", recv, cls)
            if rekick_id(node, scope, module, project) is not None:
                return Hit("crewai", f"{recv}.{method}(...) with a persisted id", recv, cls)
    # LlamaIndex: Context.from_dict(workflow, data)
    if names & llamaindex.CONTEXT_FROM_DICT_NAMES:
        wf = instance_class(node.args[0].value, scope, module, project) if node.args else None
        return Hit("llamaindex", "Context.from_dict(...)", None, wf)
    # pydantic-graph: graph.iter_from_persistence(p) / p.load_next()
    if method == pg.ITER_FROM_PERSISTENCE or (method == pg.LOAD_NEXT and module.uses_any(pg.PACKAGES)):
        return Hit("pydantic-graph", f"{recv}.{method}(...)", recv if method == pg.ITER_FROM_PERSISTENCE else None)
    # CrewAI, by hand: a helper that rebuilds a Flow and copies stored fields into its state
    for callee in project.callees(call, module):
        hydration = _hydration(callee, project)
        if hydration is not None:
            return Hit(
                "crewai",
                f"a hand-rolled restore of {hydration.flow.name}'s state in {callee.qualname}()",
                None,
                hydration.flow,
            )
    return None


def _hydration(fn: FunctionInfo, project: Project, block: cst.CSTNode | None = None) -> crewai.Hydration | None:
    """The hand-rolled Flow restore in ``block`` of ``fn`` (default: its whole body), memoised:
    a try body is asked once to find the try and again to report it."""
    block = fn.node.body if block is None else block
    return project.cached(
        "ra605-hydration",
        id(block),
        lambda: crewai.hydration_in(block, fn, project) if ".state" in fn.module.source else None,
    )


def fresh_start(call: CallInfo, module: ModuleFacts, project: Project, resumed: list[Hit]) -> Hit | None:
    """Does this call start a run from the beginning (for the framework of one of ``resumed``)?
    Receivers must be typed (a compiled graph, a Flow/Workflow subclass, a pydantic-graph Graph)
    or be the very object the try block resumed."""
    node, scope = call.node, call.function
    method = _method_name(node)
    recv = _receiver(node, module)
    obj = receiver(node)
    same_receiver = recv is not None and any(h.receiver == recv for h in resumed)
    frameworks = {h.framework for h in resumed}
    resolver = project.resolver(module)
    if "langgraph" in frameworks and obj is not None and method in langgraph.RUN_METHODS:
        first = argument(node, 0, "input")
        if first is not None and not is_none(first) and not _is_resume_command(first, scope, module, project):
            if same_receiver or langgraph.graph_of(obj, scope, module, project) is not None:
                return Hit("langgraph", f"{recv}.{method}(<new input>, ...)", recv)
    if "crewai" in frameworks:
        if (
            obj is not None
            and crewai.is_kickoff(node)
            and keyword(node, "from_checkpoint") is None
            and rekick_id(node, scope, module, project) is None
        ):
            cls = instance_class(obj, scope, module, project)
            if same_receiver or (cls is not None and crewai.is_flow_class(cls, project)):
                return Hit("crewai", f"{recv}.{method}() on a new flow", recv, cls)
        cls = named_class(node.func, scope, module, project)
        if cls is not None and crewai.is_flow_class(cls, project) and any(h.target in (None, cls) for h in resumed):
            return Hit("crewai", f"a fresh {cls.name}()", None, cls)
    if "llamaindex" in frameworks:
        if obj is not None and method == llamaindex.RUN_METHOD:
            ctx_arg = keyword(node, "ctx")
            fresh_ctx = ctx_arg is None or (
                isinstance(ctx_arg.value, cst.Call) and resolver.call_names(ctx_arg.value, scope) & llamaindex.CONTEXT
            )
            cls = instance_class(obj, scope, module, project)
            if fresh_ctx and cls is not None and extends(cls, llamaindex.WORKFLOW, project):
                return Hit("llamaindex", f"{recv}.run() with a fresh context", recv, cls)
        if resolver.call_names(node, scope) & llamaindex.CONTEXT:
            return Hit("llamaindex", f"a fresh {module.code(node.func)}(...)", None)
    if "pydantic-graph" in frameworks and obj is not None and method in pg.START_METHODS:
        if same_receiver or _is_pg_graph(obj, scope, module, project):
            return Hit("pydantic-graph", f"{recv}.{method}(<start node>, ...)", recv)
    if "pydantic-graph" in frameworks and not isinstance(node.func, cst.Attribute):
        # ``node = StartNode()`` in the handler: the run after the try begins from the start node
        cls = named_class(node.func, scope, module, project)
        if cls is not None and extends(cls, pg.BASE_NODE, project):
            return Hit("pydantic-graph", f"a fresh start node {cls.name}()", None, cls)
    return None


def _is_pg_graph(expr: cst.BaseExpression, scope: FunctionInfo | None, module: ModuleFacts, project: Project) -> bool:
    """A pydantic-graph 1.x ``Graph``: typed locally, or a module-level ``graph = Graph(...)`` in a project module."""
    names = project.resolver(module).names(expr, scope)
    if names & pg.GRAPH:
        return True
    for name in names:
        value = module_constant(name, project)
        if value is not None and isinstance(value[0], cst.Call):
            if project.resolver(value[1]).call_names(value[0], None) & pg.GRAPH:
                return True
    return False


def _broad(handler: cst.ExceptHandler, scope: FunctionInfo | None, module: ModuleFacts, project: Project) -> str | None:
    if handler.type is None:
        return "except:"
    types = [e.value for e in handler.type.elements] if isinstance(handler.type, cst.Tuple) else [handler.type]
    resolver = project.resolver(module)
    for t in types:
        names = resolver.names(t, scope)
        if names & _BROAD:
            return f"except {module.code(t)}"
    return None


def _tries_around_resumes(module: ModuleFacts, project: Project) -> list[cst.Try]:
    """``try`` statements whose body holds a call that resumes or restores (directly or via a helper),
    found from those calls upwards -- no walk over the whole tree."""
    found: list[cst.Try] = []
    seen: set[int] = set()
    if ".state" in module.source:
        # a Flow's state restored by hand inside the try itself
        for fn in module.functions:
            for tr in _tries_in(fn):
                if id(tr) not in seen and _hydration(fn, project, tr.body) is not None:
                    seen.add(id(tr))
                    found.append(tr)
    for info in module.all_calls:
        # the try statements whose body holds the call come first: tracing a call through the
        # project's helpers costs parses, and a call in no try body cannot matter here
        enclosing: list[cst.Try] = []
        child: cst.CSTNode = info.node
        for anc in module.ancestors(info.node):
            if isinstance(anc, (cst.FunctionDef, cst.Lambda)):
                break
            if isinstance(anc, cst.Try) and child is anc.body and id(anc) not in seen:
                enclosing.append(anc)
            child = anc
        if not enclosing:
            continue
        if project.reach("ra605-resume", lambda call, mod: resume_or_restore(call, mod, project), info, module) is None:
            continue
        for tr in enclosing:
            seen.add(id(tr))
            found.append(tr)
    return found


def _tries_in(fn: FunctionInfo) -> list[cst.Try]:
    """``try`` statements of ``fn``'s own body (not of nested functions)."""
    out: list[cst.Try] = []

    class _V:
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is fn.node

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_Try(self, node: cst.Try) -> None:
            out.append(node)

    visit_fast(fn.node, _V())  # no rebuild of the tree, as LibCST's own visit does
    return out


def _inside(module: ModuleFacts, call: CallInfo, block: cst.CSTNode) -> bool:
    return module.order(block) < call.order and call.done < module.done(block)


class BroadExceptRestartsFresh(Rule):
    id = "RA605"
    confirmed_by = ("RA702", "RA708")
    name = "broad-except-restarts-fresh"
    properties = ("LV", "EO")
    severity = Severity.ERROR
    frameworks = ("langgraph", "crewai", "llamaindex-workflows", "pydantic-graph")
    #: a Flow's state restored by hand (``flow.state.stage = row.stage``) sits in modules that
    #: import only the app's own Flow subclass, never crewai -- but some module defining that Flow does
    triggers = (Trigger((".state.",), framework="crewai"),)
    summary = "A broad except around a resume/restore falls back to starting the run fresh: the failed resume is hidden and every completed effect re-runs."
    description = """
A resume or restore -- LangGraph `invoke(Command(resume=...))` /
`invoke(None, cfg)`, CrewAI `Flow.from_checkpoint(...)` /
`kickoff(from_checkpoint=...)` / `kickoff(inputs={"id": ...})` /
`from_pending(...)`, LlamaIndex `Context.from_dict(...)`, pydantic-graph
`iter_from_persistence(...)` -- sits in a `try` whose bare `except:` /
`except Exception` / `except BaseException` handler starts the run again
from the beginning: a new input on the same graph, a new flow object or
kickoff, a workflow run with a fresh context, a graph run from its start
node (directly or through a project helper).
"""
    runtime = """
A resume that fails is the signal that the resume plane broke its promise
-- pydantic-graph refusing a snapshot a crash left behind
(`GraphRuntimeError: Unable to restore snapshot`), a CrewAI checkpoint
that is missing because the flow never wrote one (RA604), a LangGraph
`EmptyInputError` after `durability="exit"` lost the checkpoint, a
`ContextSerdeError` from an incompatible LlamaIndex snapshot. The broad
handler turns every one of them, and every unrelated bug in the resume
code, into "start over": the completed prefix runs again with all its
side effects (a card charged twice, an email sent twice), the human's
answer is dropped, and nothing is logged as a failed resume.
"""
    fix = """
Catch only the error that means "nothing to resume yet" (e.g.
`FileNotFoundError` for a checkpoint file that was never written, or an
explicit "no such thread" check before resuming), and let every other
failure surface -- alert, park the run for an operator, or retry the
resume. If starting over is really intended, make the effects idempotent
first and record that the run was restarted.
"""
    no_autofix = """
Removing the fallback changes how the application handles a failed
restore (an error surfaces instead of a fresh run); only the team can decide
what the user should see.
"""
    not_flagged = """
- narrow handlers (`except FileNotFoundError`, `except KeyError`, `except GraphRuntimeError`, a project exception): the code chose which failure means "start over";
- broad handlers that log, re-raise, return an error, or retry the *resume*;
- a fresh start on a different object than the one resumed, when neither is typed as a graph/flow/workflow (e.g. an LLM fallback `llm.invoke(...)`);
- `try` blocks that start runs without resuming anything.
"""

    INVALID = (
        Example(
            """
            from langgraph.types import Command

            def answer(graph, thread_id, text):
                config = {"configurable": {"thread_id": thread_id}}
                try:
                    return graph.invoke(Command(resume=text), config)
                except Exception:  # expect: RA605
                    return graph.invoke({"messages": [("user", text)]}, config)
            """,
            note="LangGraph: a failed resume becomes a new run on the same thread.",
        ),
        Example(
            """
            from crewai import CheckpointConfig
            from crewai.flow.flow import Flow, listen, start

            class Payout(Flow):
                @start()
                def pay(self):
                    return "paid"

                @listen(pay)
                def notify(self, _):
                    return "notified"

            async def resume(path):
                try:
                    flow = Payout.from_checkpoint(CheckpointConfig(restore_from=path))
                except:  # expect: RA605
                    flow = Payout()
                return await flow.kickoff_async()
            """,
            note="CrewAI: a bare except builds a fresh flow when the restore fails; async kickoff after the try.",
        ),
        Example(
            {
                "agent/runs.py": """
                    from pydantic_graph.persistence.file import FileStatePersistence
                    from .graph import review_graph, Draft

                    async def start_over(run_path):
                        return await review_graph.run(Draft(), persistence=FileStatePersistence(run_path))
                    """,
                "agent/graph.py": """
                    from pydantic_graph import BaseNode, End
                    from pydantic_graph.graph import Graph

                    class Draft(BaseNode):
                        async def run(self, ctx):
                            return End("ok")

                    review_graph = Graph(nodes=[Draft])
                    """,
                "agent/worker.py": """
                    from pydantic_graph.persistence.file import FileStatePersistence
                    from .graph import review_graph
                    from .runs import start_over

                    async def resume(run_path):
                        try:
                            async with review_graph.iter_from_persistence(FileStatePersistence(run_path)) as run:
                                async for _ in run:
                                    pass
                            return run.result
                        except BaseException:  # expect: RA605
                            return await start_over(run_path)
                    """,
                "agent/__init__.py": "",
            },
            note="pydantic-graph: the fallback is in a helper module.",
        ),
        Example(
            """
            from workflows import Context, Workflow, step
            from workflows.events import StartEvent, StopEvent

            class Intake(Workflow):
                @step
                async def go(self, ctx: Context, ev: StartEvent) -> StopEvent:
                    return StopEvent(result="done")

            async def resume(saved):
                workflow = Intake()
                try:
                    ctx = Context.from_dict(workflow, saved)
                    return await workflow.run(ctx=ctx)
                except (ValueError, Exception):  # expect: RA605
                    return await workflow.run()
            """,
            note="LlamaIndex: a tuple containing Exception is broad.",
        ),
    )
    VALID = (
        Example(
            """
            from crewai import CheckpointConfig
            from crewai.flow.flow import Flow, start

            class Payout(Flow):
                @start()
                def pay(self):
                    return "paid"

            def resume(path):
                try:
                    flow = Payout.from_checkpoint(CheckpointConfig(restore_from=path))
                except FileNotFoundError:
                    flow = Payout()
                return flow.kickoff()
            """,
            note="Only 'no checkpoint yet' starts over.",
        ),
        Example(
            """
            import logging
            from langgraph.types import Command

            def answer(graph, thread_id, text):
                config = {"configurable": {"thread_id": thread_id}}
                try:
                    return graph.invoke(Command(resume=text), config)
                except Exception:
                    logging.exception("resume of %s failed", thread_id)
                    raise
            """,
            note="The failure is logged and re-raised.",
        ),
        Example(
            """
            from langgraph.types import Command

            def answer(graph, llm, thread_id, text):
                try:
                    return graph.invoke(Command(resume=text), {"configurable": {"thread_id": thread_id}})
                except Exception:
                    return llm.invoke(f"Sorry, something went wrong with: {text}")
            """,
            note="The fallback is an LLM apology, not a new run of the graph.",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        module = ctx.module
        if "try" not in module.source:
            return
        project = ctx.project
        for tr in _tries_around_resumes(module, project):
            scope = module.enclosing_function(tr)
            calls = scope.calls if scope is not None else module.module_calls
            body_calls = [c for c in calls if _inside(module, c, tr.body)]
            resumed: list[tuple[cst.CSTNode, Hit]] = []
            hydration = _hydration(scope, project, tr.body) if scope is not None else None
            if hydration is not None:
                resumed.append(
                    (
                        hydration.node,
                        Hit("crewai", f"a hand-rolled restore of {hydration.flow.name}'s state", None, hydration.flow),
                    )
                )
            for c in body_calls:
                reached = project.reach(
                    "ra605-resume", lambda call, mod: resume_or_restore(call, mod, project), c, module
                )
                if reached is not None:
                    resumed.append((c.node, reached.hit))
            if not resumed:
                continue
            hits = [h for _, h in resumed]
            for handler in tr.handlers:
                broad = _broad(handler, scope, module, project)
                if broad is None:
                    continue
                for c in calls:
                    if not _inside(module, c, handler.body):
                        continue
                    fresh = fresh_start(c, module, project, hits)
                    reached = None
                    if fresh is None:
                        reached = project.reach(
                            "ra605-fresh-"
                            + ",".join(
                                sorted({f"{h.framework}:{h.target.full_name if h.target else ''}" for h in hits})
                            ),
                            lambda call, mod: fresh_start(
                                call, mod, project, [Hit(h.framework, h.label, None, h.target) for h in hits]
                            ),
                            c,
                            module,
                        )
                        if reached is None or not reached.via_helper:
                            continue
                        fresh = reached.hit
                    rnode, rhit = resumed[0]
                    related = [
                        Related(ctx.span(rnode), f"the resume: {rhit.label}"),
                        Related(ctx.span(c.node), f"the fallback: {fresh.label}"),
                    ]
                    flows = []
                    if reached is not None:
                        more, flow = ctx.reached_related(reached, f"starts over: {fresh.label}")
                        related.extend(more)
                        flows.append(flow)
                    yield ctx.finding(
                        handler,
                        f"`{broad}` around {rhit.label} falls back to {fresh.label}"
                        f"{' (via ' + ctx.describe_call(c.node) + ')' if reached is not None else ''}. Any failed resume -- "
                        f"an unrestorable snapshot, a missing checkpoint, a bug -- silently becomes a run from the "
                        f"beginning: completed effects fire again and the pending answer is lost.",
                        related=related,
                        flows=flows,
                    )
                    break
