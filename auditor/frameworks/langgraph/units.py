"""Which code LangGraph checkpoints: the analysis the EO rules (RA103, RA104, RA106),
RA302 and RA601 share.

Answers (kept in the project's memo, never in module globals): which functions run as nodes of a
checkpointed graph, which run as ``@task``s under a checkpointed ``@entrypoint`` or node, and
which calls reach an effect *outside* any ``@task`` (a task's result is memoised, so calling one
is not an effect of the caller).

Units are found per module -- what the module's own graphs and entrypoints make checkpointed --
and a function claimed by several modules is reported from one of them, decided from the other
modules' stored claim summaries (:mod:`resume_audit.facts.summaries`) rather than by parsing
every langgraph module of the project: editing one graph re-analyses the others only if it
changes what that graph claims.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterator, Protocol

import libcst as cst

from resume_audit.analysis.effects import Effect, EffectModel
from resume_audit.analysis.flow.engine import flow_of
from resume_audit.analysis.flow.values import Function
from resume_audit.analysis.idempotency import done_check_guard, forwards_key, replays_harmlessly, write_target
from resume_audit.analysis.order import completes_before
from resume_audit.analysis.project import Project
from resume_audit.analysis.queries import Reached
from resume_audit.facts.model import CallInfo, FunctionInfo, ModuleFacts
from resume_audit.facts.summaries import SummaryKind, register
from resume_audit.facts.syntax import argument, bool_value, is_none
from resume_audit.frameworks.langgraph import names as langgraph
from resume_audit.reading.treewords import LANGGRAPH_IMPORT_WORDS


class UnitContext(Protocol):
    """What the effect questions here need of a rule's context."""

    @property
    def module(self) -> ModuleFacts: ...

    @property
    def project(self) -> Project: ...

    @property
    def effects(self) -> EffectModel: ...


@dataclass(frozen=True)
class Unit:
    """A function whose completed run LangGraph records durably (a node or a task)."""

    function: FunctionInfo
    #: "node" or "task"
    kind: str
    #: the compile(...) call or entrypoint decorator that makes it checkpointed
    anchor: cst.CSTNode
    anchor_module: ModuleFacts
    label: str
    #: its graph's only checkpointer keeps state in process memory: a crash loses the thread with
    #: everything the unit did, so nothing resumes it
    in_memory: bool = False


@dataclass
class _ModuleUnits:
    """What one module makes checkpointed: the nodes and tools of its checkpointed graphs (and
    ``create_react_agent`` tools), and the tasks its checkpointed nodes and entrypoints reach,
    in the order found. Another module may claim the same function first (see :func:`units_anchored_in`)."""

    units: dict[int, Unit]


def _uses_langgraph(module: ModuleFacts) -> bool:
    """As :meth:`Project.modules_using` decides it, for one parsed module."""
    return module.uses_any(langgraph.PACKAGES) and any(w in module.source for w in LANGGRAPH_IMPORT_WORDS)


def module_entrypoints(project: Project, module: ModuleFacts) -> dict[int, langgraph.Entrypoint]:
    """``@entrypoint`` functions of ``module`` (by id), persisted or not; none outside langgraph modules."""

    def find() -> dict[int, langgraph.Entrypoint]:
        out: dict[int, langgraph.Entrypoint] = {}
        if not _uses_langgraph(module):
            return out
        for fn in module.functions:
            if not fn.decorators and fn.parent is not None:
                continue
            ep = langgraph.entrypoint_of(fn, project)
            if ep is not None:
                out[id(fn)] = ep
        return out

    return project.cached("langgraph-entrypoints", module.path, find)


def entrypoint_for(project: Project, fn: FunctionInfo) -> langgraph.Entrypoint | None:
    """The ``@entrypoint`` ``fn`` is, if it is one (looks into ``fn``'s module only)."""
    return module_entrypoints(project, fn.module).get(id(fn))


def _module_units(project: Project, module: ModuleFacts) -> _ModuleUnits:
    return project.cached("langgraph-module-units", module.path, lambda: _build_module(project, module))


def _build_module(project: Project, module: ModuleFacts) -> _ModuleUnits:
    units: dict[int, Unit] = {}
    roots: list[Unit] = []
    if not _uses_langgraph(module):
        return _ModuleUnits(units)
    for info in module.all_calls:
        graph = langgraph.compiled_graph(info.node, info.function, module, project)
        if graph is None or not graph.persisted:
            continue
        # a compiled subgraph added as a node runs under the parent's checkpointer
        pending, seen_graphs = [graph], {id(graph.compile_call)}
        in_memory = langgraph.saver_kind(graph, project) == "memory"
        while pending:
            current = pending.pop()
            for node in langgraph.node_targets(current, project):
                fn = node.function
                if fn is not None and id(fn) not in units:
                    unit = Unit(fn, "node", graph.compile_call, module, f"node {fn.qualname}", in_memory)
                    units[id(fn)] = unit
                    roots.append(unit)
                elif fn is not None:
                    _keep_durable(units, roots, fn, in_memory)
                elif fn is None:
                    scope, target_module = node.call.function, node.call.module
                    sub = graph_anywhere(node.target, scope, target_module, project)
                    if isinstance(sub, langgraph.CompiledGraph) and id(sub.compile_call) not in seen_graphs:
                        seen_graphs.add(id(sub.compile_call))
                        pending.append(sub)
                        continue
                    for tool in langgraph.tool_functions(node.target, scope, target_module, project):
                        if id(tool) not in units:
                            units[id(tool)] = Unit(
                                tool, "tool", graph.compile_call, module, f"tool {tool.qualname}", in_memory
                            )
                            roots.append(units[id(tool)])
                        else:
                            _keep_durable(units, roots, tool, in_memory)
    for info in module.all_calls:
        if not (project.resolver(module).call_names(info.node, info.function) & langgraph.CREATE_REACT_AGENT):
            continue
        cp = argument(info.node, 99, "checkpointer")
        if cp is None or is_none(cp) or bool_value(cp) is False:
            continue
        for tool in langgraph.tool_functions(argument(info.node, 1, "tools"), info.function, module, project):
            if id(tool) not in units:
                in_memory = langgraph.checkpointer_kind(cp, info.function, module, project) == "memory"
                units[id(tool)] = Unit(tool, "tool", info.node, module, f"tool {tool.qualname}", in_memory)
                roots.append(units[id(tool)])
    entrypoints = module_entrypoints(project, module)
    for fn in module.functions:
        ep = entrypoints.get(id(fn))
        if ep is not None and ep.persisted:
            roots.append(Unit(fn, "entrypoint", ep.node, module, f"entrypoint {fn.qualname}"))
    # tasks reached from checkpointed entrypoints and nodes (through project helpers)
    seen: set[int] = set()
    queue = [(u.function, u, 0) for u in roots]
    while queue:
        fn, root, depth = queue.pop()
        if id(fn) in seen or depth > 8:
            continue
        seen.add(id(fn))
        for call in fn.calls:
            for callee in project.callees(call, fn.module):
                if langgraph.is_task(callee, project) and id(callee) not in units:
                    units[id(callee)] = Unit(
                        callee, "task", root.anchor, root.anchor_module, f"task {callee.qualname}", root.in_memory
                    )
                queue.append((callee, root, depth + 1))
    return _ModuleUnits(units)


def _keep_durable(units: dict[int, Unit], roots: list[Unit], fn: FunctionInfo, in_memory: bool) -> None:
    """``fn`` is a unit of one more graph of the module: it is in memory only if every graph that
    runs it keeps its checkpoints in memory (one durable graph resumes it after a crash)."""
    unit = units[id(fn)]
    if unit.in_memory and not in_memory:
        durable = replace(unit, in_memory=False)
        units[id(fn)] = durable
        roots[:] = [durable if r is unit else r for r in roots]


def _function_key(fn: FunctionInfo) -> tuple[str, int]:
    """``fn`` as a summary names it: its file and its place among the file's functions (stable
    while the file's content is, and a summary naming it depends on that content)."""
    index = next(i for i, f in enumerate(fn.module.functions) if f is fn)
    return str(fn.module.path), index


def _claims(project: Project, module: ModuleFacts) -> list[list[str | int]]:
    """The summary: ``[file, function index, kind, in memory]`` of every unit ``module`` makes
    checkpointed."""
    return [[*_function_key(u.function), u.kind, u.in_memory] for u in _module_units(project, module).units.values()]


#: which functions each module makes checkpointed: whether another module claims a function
#: first is read from these, without parsing every langgraph module
CLAIMS = register(SummaryKind("langgraph-claims", _claims, []))


def is_checkpointed_node(project: Project, fn: FunctionInfo) -> bool:
    """Whether some graph compiled with a checkpointer runs ``fn`` as a node (LangGraph then hands
    it ``config``), read from every langgraph module's claim summary -- no module is parsed for it."""
    path, index = _function_key(fn)
    return any(
        claim[0] == path and claim[1] == index and claim[2] == "node"
        for _, claims in project.summaries_over(CLAIMS.name, LANGGRAPH_IMPORT_WORDS)
        for claim in claims
    )


def units_anchored_in(project: Project, module: ModuleFacts) -> list[Unit]:
    """The checkpointed units reported from ``module``: those its graphs and entrypoints make
    checkpointed, unless another module claims the function first. A function that is a node
    or tool of several modules' graphs belongs to the first of them (by path) whose graph
    checkpoints durably, else to the first of them; a task belongs to none of them if it is a
    node or tool anywhere, else to the last module that reaches it."""
    own = _module_units(project, module).units
    if not own:
        return []
    node_owner: dict[tuple[str, int], Path] = {}
    durable_owner: dict[tuple[str, int], Path] = {}
    task_owner: dict[tuple[str, int], Path] = {}
    for entry, claims in project.summaries_over(CLAIMS.name, LANGGRAPH_IMPORT_WORDS):
        for path, index, kind, in_memory in claims:
            key = (path, index)
            if kind == "task":
                task_owner[key] = entry.path
            else:
                node_owner.setdefault(key, entry.path)
                if not in_memory:
                    durable_owner.setdefault(key, entry.path)
    out = []
    for unit in own.values():
        path, index = _function_key(unit.function)
        key = (path, index)
        owner = (
            durable_owner.get(key, node_owner.get(key))
            if unit.kind != "task"
            else (None if key in node_owner else task_owner.get(key))
        )
        if owner == module.path:
            out.append(unit)
    return out


def effect_outside_tasks(
    ctx: UnitContext, call: CallInfo, module: ModuleFacts | None = None, *, overwrites: bool = False
) -> Reached[Effect] | None:
    """The effect ``call`` performs outside any ``@task``: directly, or through project helpers
    that are not tasks, not guarded by a durable done-check, and not handed an idempotency key
    they forward. Writes that replay harmlessly (a file overwrite, an upsert of the statement's
    own values) are skipped unless ``overwrites``."""
    m = module or ctx.module
    project: Project = ctx.project
    namespace = "langgraph-effects-with-overwrites" if overwrites else "langgraph-effects"

    def reach(c: CallInfo, mod: ModuleFacts, depth: int) -> Reached[Effect] | None:
        if depth > 10 or langgraph.calls_task(c.node, c.function, mod, project):
            return None
        hit = ctx.effects.classify(c, mod, project.resolver(mod))
        if hit is not None:
            return None if not overwrites and replays_harmlessly(c.node, hit) else Reached((c,), (mod,), hit)
        for callee in project.callees(c, mod):
            if langgraph.is_task(callee, project) or forwards_key(c, callee):
                continue
            inner = function_reaches(callee, depth + 1)
            if inner is not None:
                return Reached((c, *inner.calls), (mod, *inner.modules), inner.hit)
        return None

    def function_reaches(fn: FunctionInfo, depth: int) -> Reached[Effect] | None:
        def first_reaching() -> Reached[Effect] | None:
            for c in fn.calls:
                if done_check_guard(c, fn, fn.module) is not None:
                    continue
                found = reach(c, fn.module, depth)
                if found is not None:
                    return found
            return None

        return project.cached(namespace, id(fn), first_reaching, in_progress=None)

    return reach(call, m, 0)


def unit_effects(ctx: UnitContext, fn: FunctionInfo) -> Iterator[tuple[CallInfo, Reached[Effect]]]:
    """(call, reached) for each call of ``fn``'s own body that performs an effect outside tasks."""
    for call in fn.calls:
        if done_check_guard(call, fn, fn.module) is not None:
            continue
        reached = effect_outside_tasks(ctx, call, fn.module)
        if reached is not None:
            yield call, reached


def regressing_overwrites(ctx: UnitContext, fn: FunctionInfo) -> Iterator[tuple[CallInfo, Reached[Effect], CallInfo]]:
    """(call, reached, later) for writes in an entrypoint body that replay harmlessly on their own
    (an upsert, a file overwrite) but are followed -- after an ``interrupt()`` -- by another write
    to the same place. The body re-runs from its first line on every resume, so each resume puts
    the older value back over the newer one (a recorded stage goes from "review" back to "draft")
    until the later write runs again; a crash in between leaves the regressed value."""
    project: Project = ctx.project
    classify = langgraph.interrupt_classifier(project)
    interrupts = [c for c in fn.calls if project.reach("langgraph-interrupt", classify, c, fn.module) is not None]
    if not interrupts:
        return
    writes: list[tuple[CallInfo, Reached[Effect], str]] = []  # (call in the body, the write it reaches, where it lands)
    for call in fn.calls:
        if done_check_guard(call, fn, fn.module) is not None:
            continue
        reached = effect_outside_tasks(ctx, call, fn.module, overwrites=True)
        if reached is not None:
            writes.append((call, reached, write_target(reached.calls[-1].node, reached.hit, reached.modules[-1])))
    for call, reached, place in writes:
        if not replays_harmlessly(reached.calls[-1].node, reached.hit):
            continue
        for later, _, other_place in writes:
            if later is call or other_place != place:
                continue
            if any(
                completes_before(call, gate, fn.module, fn.node) and completes_before(gate, later, fn.module, fn.node)
                for gate in interrupts
            ):
                yield call, reached, later
                break


def graph_anywhere(
    expr: cst.BaseExpression, scope: FunctionInfo | None, module: ModuleFacts, project: Project
) -> langgraph.CompiledGraph | langgraph.Entrypoint | None:
    """The compiled graph (or ``@entrypoint``) ``expr`` may hold, wherever the value-flow engine
    follows it (:func:`langgraph.graph_of`)."""
    graph = langgraph.graph_of(expr, scope, module, project)
    if graph is not None:
        return graph
    for value in flow_of(project).values(expr, scope, module):
        if isinstance(value, Function):
            ep = entrypoint_for(project, value.fn)
            if ep is not None:
                return ep
    return None


def in_memory_constructor(
    expr: cst.BaseExpression | None, scope: FunctionInfo | None, module: ModuleFacts, project: Project
) -> tuple[cst.Call, ModuleFacts] | None:
    """The ``InMemorySaver()`` / ``MemorySaver()`` construction a checkpointer expression may hold
    (followed by the value-flow engine: a parameter's default or callers, a module variable, an
    attribute), with its module."""
    for made in langgraph.made_values(expr, scope, module, project):
        if made.type in langgraph.IN_MEMORY_SAVERS and made.call is not None and made.module is not None:
            return made.call, made.module
    return None


def project_uses_langgraph(project: Project) -> bool:
    """Does any module of the scan import langgraph? (cached per project)"""
    return project.cached("langgraph-units", "uses", lambda: bool(project.modules_using(langgraph.PACKAGES)))


def graph_is_pure(ctx: UnitContext, graph: langgraph.CompiledGraph) -> bool:
    """True only when every node of ``graph`` is known (functions, ToolNode tools, subgraphs
    followed) and none of them reaches an effect: a resume delivered twice then runs pure
    code twice, which repeats nothing outside. Unknown nodes make the answer False."""
    project: Project = ctx.project
    pending, seen = [graph], {id(graph.compile_call)}
    while pending:
        current = pending.pop()
        nodes = langgraph.node_targets(current, project)
        if not nodes:
            return False
        for node in nodes:
            functions: list[FunctionInfo] = []
            if node.function is not None:
                functions = [node.function]
            else:
                scope, target_module = node.call.function, node.call.module
                sub = graph_anywhere(node.target, scope, target_module, project)
                if isinstance(sub, langgraph.CompiledGraph):
                    if id(sub.compile_call) not in seen:
                        seen.add(id(sub.compile_call))
                        pending.append(sub)
                    continue
                functions = langgraph.tool_functions(node.target, scope, target_module, project)
                if not functions:
                    return False
            for f in functions:
                if any(effect_outside_tasks(ctx, c, f.module) is not None for c in f.calls):
                    return False
                # effects inside the node's tasks run on a resume too
                for c in f.calls:
                    for callee in project.callees(c, f.module):
                        if langgraph.is_task(callee, project) and any(
                            effect_outside_tasks(ctx, cc, callee.module) is not None for cc in callee.calls
                        ):
                            return False
    return True
