"""Questions about the LangGraph resume plane that several rules ask.

What is a resume (``Command(resume=...)``, or the ``update_state`` + ``invoke(None, cfg)``
form), which runs of a function deliver one, whether the function started the run itself,
and whether a ``get_state`` read decides a resume (check-then-act). RA201, RA301 and RA302
ask these; they live here so no rule imports another.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator, Protocol

import libcst as cst

from resume_audit.analysis.order import completes_before
from resume_audit.analysis.resolve import Resolver
from resume_audit.facts.model import CallInfo, FunctionInfo, ModuleFacts
from resume_audit.facts.syntax import argument, contains_node, is_none, keyword
from resume_audit.frameworks.langgraph import names as langgraph

if TYPE_CHECKING:
    from resume_audit.analysis.project import Project


class ModuleContext(Protocol):
    """What these questions need of a rule's context: the module being checked and its resolver."""

    @property
    def module(self) -> ModuleFacts: ...

    @property
    def resolver(self) -> Resolver: ...

    @property
    def project(self) -> Project: ...


def resume_command(expr: cst.BaseExpression | None, fn: FunctionInfo | None, ctx: ModuleContext) -> cst.Call | None:
    """The ``Command(resume=...)`` call ``expr`` is (directly or through a local variable)."""
    if expr is None:
        return None
    if isinstance(expr, cst.Name) and fn is not None:
        found = ctx.resolver.binding_value(expr.value, fn, ctx.module.order(expr))
        if found is None or found[0].kind != "assign":
            return None
        expr = found[0].value
        fn = found[1]
    if isinstance(expr, cst.IfExp):
        # ``Command(resume=x) if snap.next else {"messages": [...]}``: the state chooses what is sent
        return resume_command(expr.body, fn, ctx) or resume_command(expr.orelse, fn, ctx)
    if isinstance(expr, cst.Call) and keyword(expr, "resume") is not None:
        if ctx.resolver.call_names(expr, fn) & langgraph.COMMAND:
            return expr
    return None


def _chosen_input(run: CallInfo, fn: FunctionInfo, ctx: ModuleContext) -> cst.IfExp | None:
    """The conditional expression that chooses a run's input (directly or through a local name)."""
    expr = argument(run.node, 0, "input")
    if isinstance(expr, cst.Name):
        found = ctx.resolver.binding_value(expr.value, fn, ctx.module.order(expr))
        if found is None or found[0].kind != "assign" or found[1] is not fn:
            return None
        expr = found[0].value
    return expr if isinstance(expr, cst.IfExp) else None


def resume_calls(fn: FunctionInfo, ctx: ModuleContext) -> list[CallInfo]:
    """Runs in ``fn`` that deliver a resume: ``Command(resume=...)`` input, or ``None`` input
    (the ``update_state`` + ``invoke(None, config)`` form)."""
    out = []
    for call in fn.calls:
        f = call.node.func
        if not (isinstance(f, cst.Attribute) and f.attr.value in langgraph.RUN_METHODS):
            continue
        first = argument(call.node, 0, "input")
        if is_none(first) or resume_command(first, fn, ctx) is not None:
            out.append(call)
    return out


def delegated_resume_calls(fn: FunctionInfo, ctx: ModuleContext, depth: int = 2) -> list[CallInfo]:
    """Calls in ``fn`` of project helpers that deliver a resume (``asyncio.create_task(
    resume_workflow(thread_id))``, ``background_tasks.add_task(resume, ...)``), up to ``depth``
    helpers deep: a ``get_state`` check in ``fn`` decides them just as it decides a direct resume."""
    project = ctx.project
    out = []
    for call in fn.calls:
        if _helper_resumes(project.callees(call, fn.module), project, depth, set()):
            out.append(call)
    return out


def _helper_resumes(callees: list[FunctionInfo], project: Project, depth: int, seen: set[int]) -> bool:
    for callee in callees:
        if id(callee) in seen or depth <= 0:
            continue
        seen.add(id(callee))
        if resume_calls(callee, _HelperContext(callee.module, project)):
            return True
        if any(_helper_resumes(project.callees(c, callee.module), project, depth - 1, seen) for c in callee.calls):
            return True
    return False


class _HelperContext:
    """A :class:`ModuleContext` for a helper in another module."""

    def __init__(self, module: ModuleFacts, project: Project) -> None:
        self.module = module
        self.project = project

    @property
    def resolver(self) -> Resolver:
        return self.project.resolver(self.module)


def _bound_name(call: cst.Call, ctx: ModuleContext) -> str | None:
    """``snap = graph.get_state(cfg)`` (or ``= await graph.aget_state(cfg)``): ``snap``."""
    node: cst.CSTNode = call
    parent = ctx.module.parent(node)
    if isinstance(parent, cst.Await):
        node, parent = parent, ctx.module.parent(parent)
    if (
        isinstance(parent, (cst.Assign,))
        and len(parent.targets) == 1
        and isinstance(parent.targets[0].target, cst.Name)
    ):
        return parent.targets[0].target.value
    if isinstance(parent, (cst.AnnAssign, cst.NamedExpr)) and isinstance(parent.target, cst.Name):
        return parent.target.value
    return None


#: Snapshot attributes that say whether a thread is parked at an interrupt.
PARK_ATTRS = frozenset({"next", "interrupts", "tasks"})


def _reads_park(expr: cst.CSTNode, snapshot: str | None, derived: set[str], get_state: cst.Call | None) -> bool:
    """Does ``expr`` read whether the thread is parked: ``snap.next`` / ``snap.interrupts`` /
    ``snap.tasks`` (or such an attribute straight off the ``get_state`` call), or a name
    derived from one? Reading ``snap.values`` (does the thread exist?) is not a park check."""
    stack = [expr]
    while stack:
        cur = stack.pop()
        if isinstance(cur, cst.Name) and cur.value in derived:
            return True
        if isinstance(cur, cst.Attribute) and cur.attr.value in PARK_ATTRS:
            base = cur.value.expression if isinstance(cur.value, cst.Await) else cur.value
            if (isinstance(base, cst.Name) and base.value == snapshot) or (get_state is not None and base is get_state):
                return True
        stack.extend(cur.children)
    return False


def _derived_names(fn: FunctionInfo, seed: str, after: int) -> set[str]:
    """Names assigned after the read from the snapshot's park status (``parked = bool(snap.next)``),
    transitively."""
    names: set[str] = set()
    changed = True
    while changed:
        changed = False
        for b in fn.bindings:
            if (
                b.pos > after
                and b.name not in names
                and b.name != seed
                and b.kind == "assign"
                and _reads_park(b.value, seed, names, None)
            ):
                names.add(b.name)
                changed = True
    return names


def _decision_statements(
    fn: FunctionInfo, kinds: tuple[type, ...] = (cst.If, cst.While)
) -> Iterator[cst.If | cst.While | cst.IfExp]:
    """The ``if`` / ``while`` statements (and, when asked, conditional expressions) of ``fn``'s
    own body, not of functions or classes nested in it."""
    stack: list[cst.CSTNode] = [fn.node.body]
    while stack:
        cur = stack.pop()
        if isinstance(cur, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(cur, kinds):
            yield cur  # type: ignore[misc]
        stack.extend(cur.children)


def _decisions(
    fn: FunctionInfo, snapshot: str | None, derived: set[str], get_state: cst.Call, ctx: ModuleContext
) -> Iterator[cst.If | cst.While | cst.IfExp]:
    """``if``/``while`` statements and conditional expressions whose test reads the snapshot's park status."""
    for cur in _decision_statements(fn, (cst.If, cst.While, cst.IfExp)):
        if _reads_park(cur.test, snapshot, derived, get_state):
            yield cur


def started_run_before(run: CallInfo, fn: FunctionInfo, ctx: ModuleContext) -> bool:
    """The same function started the run (a fresh input) before ``run``: the parked run belongs
    to this caller (an auto-approval loop, a request that starts and drives its own thread),
    so no second delivery from outside can race it."""
    for call in fn.calls:
        f = call.node.func
        if call is run or not (isinstance(f, cst.Attribute) and f.attr.value in langgraph.RUN_METHODS):
            continue
        first = argument(call.node, 0, "input")
        if first is None or is_none(first) or resume_command(first, fn, ctx) is not None:
            continue
        if completes_before(call, run, ctx.module, fn.node):
            return True
    return False


def _guard_exits(stmt: cst.If) -> bool:
    body = stmt.body.body
    for s in body:
        if isinstance(s, cst.SimpleStatementLine) and any(
            isinstance(x, (cst.Return, cst.Raise, cst.Continue, cst.Break)) for x in s.body
        ):
            return True
    return False


def _gates(decision: cst.CSTNode, resume: CallInfo, module: ModuleFacts) -> bool:
    """The resume runs only on one outcome of ``decision``: inside it, or after it as a guard
    clause that exits (``if not parked: return``)."""
    return contains_node(decision, resume.node) or (
        isinstance(decision, cst.If) and _guard_exits(decision) and resume.order > module.done(decision)
    )


def decided_resume(
    call: CallInfo, fn: FunctionInfo, resumes: list[CallInfo], ctx: ModuleContext
) -> tuple[cst.If | cst.While | cst.IfExp, CallInfo] | None:
    """The (decision, resume) pair when ``call`` (a ``get_state``) reads whether the thread is
    parked and a later resume in ``fn`` runs only if so (inside the decision, or after a guard
    clause that exits)."""
    if started_run_before(call, fn, ctx):
        return None
    bound = _bound_name(call.node, ctx)
    derived = _derived_names(fn, bound, call.order) if bound else set()
    for decision in _decisions(fn, bound, derived, call.node, ctx):
        for resume in resumes:
            if resume.order < call.order:
                continue
            if _gates(decision, resume, ctx.module) or (
                isinstance(decision, cst.IfExp) and _chosen_input(resume, fn, ctx) is decision
            ):
                return decision, resume
    return None


def _returns_park(fn: FunctionInfo, ctx: ModuleContext, depth: int = 0) -> bool:
    """Does ``fn`` return whether a thread is parked -- a value read off a ``get_state`` snapshot's
    ``next`` / ``interrupts`` / ``tasks`` (``return bool(snap.next)``, ``return payload or None``
    where the payload came from ``snap.interrupts``) or what such a helper returns
    (``return _pending_payload(tid) is not None``)? Two helpers deep."""
    return ctx.project.cached(
        "resume-plane-returns-park", id(fn), lambda: _find_returns_park(fn, ctx, depth), in_progress=False
    )


def _find_returns_park(fn: FunctionInfo, ctx: ModuleContext, depth: int) -> bool:
    found = False
    for call in fn.calls:
        f = call.node.func
        if isinstance(f, cst.Attribute) and f.attr.value in langgraph.GET_STATE_METHODS:
            helper_ctx = _HelperContext(fn.module, ctx.project)
            bound = _bound_name(call.node, helper_ctx)
            derived = _derived_names(fn, bound, call.order) if bound else set()
            if any(r.value is not None and _reads_park(r.value, bound, derived, call.node) for r in fn.returns):
                found = True
                break
    if not found and depth < 2:
        for ret in fn.returns:
            if ret.value is None:
                continue
            for call in fn.calls:
                if contains_node(ret.value, call.node) and any(
                    _returns_park(callee, ctx, depth + 1) for callee in ctx.project.callees(call, fn.module)
                ):
                    found = True
                    break
            if found:
                break
    return found


def decided_through_helper(
    fn: FunctionInfo, ctx: ModuleContext, depth: int = 0
) -> tuple[cst.If | cst.While | cst.IfExp, CallInfo, ModuleFacts] | None:
    """When ``fn`` returns a snapshot's park status, the (decision, resume, module) of a caller that
    resumes only if it says "parked": ``if not has_pending_interrupt(tid): raise ...`` followed by
    ``graph.invoke(Command(resume=...), cfg)`` -- check-then-act split over two functions."""
    if not _returns_park(fn, ctx):
        return None
    for call, module in ctx.project.callers(fn):
        caller = call.function
        if caller is None:
            continue
        helper_ctx = _HelperContext(module, ctx.project)
        resumes = resume_calls(caller, helper_ctx) + delegated_resume_calls(caller, helper_ctx)
        for decision in _decision_statements(caller):
            if not contains_node(decision.test, call.node):
                continue
            for resume in resumes:
                if _gates(decision, resume, module):
                    return decision, resume, module
        if depth < 2 and _returns_park(caller, ctx):
            found = decided_through_helper(caller, ctx, depth + 1)
            if found is not None:
                return found
    return None
