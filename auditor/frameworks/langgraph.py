"""Everything resume-audit knows about LangGraph's names, in one place.

Checked against the installed source of langgraph 1.2.24,
langgraph-checkpoint 4.3.2, langgraph-checkpoint-sqlite 3.1.2 and
langgraph-checkpoint-postgres 3.2.0 (2026-12-02); every name below is either
where the object is defined or a documented re-export users import from.
Rules ask this module, never spell framework names themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from auditor.analysis.facts import FunctionInfo, ModuleFacts
from auditor.analysis.syntax import argument, bool_value, is_none

PACKAGES = ("langgraph",)

#: ``interrupt(value)`` parks the run; on resume the whole node re-runs from its start.
INTERRUPT = frozenset({"langgraph.types.interrupt"})

#: ``Command(resume=...)`` delivers a human's answer.
COMMAND = frozenset({"langgraph.types.Command"})

#: The graph builder (defined in langgraph.graph.state, re-exported by langgraph.graph).
STATE_GRAPH = frozenset({"langgraph.graph.StateGraph", "langgraph.graph.state.StateGraph"})

#: Functional API. ``@entrypoint`` bodies re-run on resume; only ``@task`` results are memoised.
ENTRYPOINT = frozenset({"langgraph.func.entrypoint"})
TASK = frozenset({"langgraph.func.task"})

#: In-process savers: parked runs die with the process. ``MemorySaver`` is the
#: older name of ``InMemorySaver`` (same class in 1.2.24).
IN_MEMORY_SAVERS = frozenset({"langgraph.checkpoint.memory.InMemorySaver", "langgraph.checkpoint.memory.MemorySaver"})

DURABLE_SAVERS = frozenset(
    {
        "langgraph.checkpoint.sqlite.SqliteSaver",
        "langgraph.checkpoint.sqlite.aio.AsyncSqliteSaver",
        "langgraph.checkpoint.postgres.PostgresSaver",
        "langgraph.checkpoint.postgres.aio.AsyncPostgresSaver",
    }
)

BASE_SAVER = frozenset({"langgraph.checkpoint.base.BaseCheckpointSaver"})

#: Methods of a compiled graph that take ``(input, config)`` and run it.
RUN_METHODS = frozenset({"invoke", "ainvoke", "stream", "astream", "astream_events", "astream_log"})

#: Read-only (in stock LangGraph) inspection of a thread's latest checkpoint.
GET_STATE_METHODS = frozenset({"get_state", "aget_state"})

#: ``builder.compile(checkpointer=...)``; ``add_node(name, fn)`` / ``add_node(fn)``.
COMPILE_METHOD = "compile"
ADD_NODE_METHOD = "add_node"

#: remit-contract 0.1.2 (``import remit; remit.wrap(SaverClass, ...)``) repairs
#: FD when a config names a checkpoint_id (or, with
#: ``fork_on_explicit_checkpoint=False``, when it carries ``remit_fork``),
#: validates state with ``validator=``, and gates consumption across processes
#: with ``cross_process_gate=True`` (inspection then needs ``remit_inspect``).
REMIT_WRAP = frozenset({"remit.wrap", "remit.langgraph_shim.wrap"})
REMIT_FORK_KEY = "remit_fork"
REMIT_INSPECT_KEY = "remit_inspect"


def is_fork_discriminator(configurable_key: str) -> bool:
    """A configurable key that tells a saver "this resume is a fork, not a retry"."""
    return configurable_key == REMIT_FORK_KEY or "fork" in configurable_key.lower()


# -- graph structure ---------------------------------------------------------
# Which expression is a compiled graph, with which checkpointer, built from
# which StateGraph and state schema, with which node functions.



@dataclass(frozen=True)
class CompiledGraph:
    """``builder.compile(checkpointer=...)`` and what we could learn about it."""

    compile_call: cst.Call
    module: ModuleFacts
    scope: FunctionInfo | None
    #: the checkpointer expression, None when compiled without one
    checkpointer: cst.BaseExpression | None
    #: the ``StateGraph(...)`` construction, when the builder could be followed
    builder_call: cst.Call | None
    #: the variable the builder is bound to (for finding ``add_node`` calls)
    builder_name: str | None

    @property
    def state_schema(self) -> cst.BaseExpression | None:
        if self.builder_call is None:
            return None
        return argument(self.builder_call, 0, "state_schema")

    @property
    def persisted(self) -> bool:
        """Compiled with a checkpointer (``None``/``False`` mean none)."""
        cp = self.checkpointer
        return cp is not None and not is_none(cp) and bool_value(cp) is not False


def _follow_to_call(expr: cst.BaseExpression, scope: FunctionInfo | None, module: ModuleFacts, project, depth: int = 0):
    """Follow names (and awaits) to the call that produced the value, with that call's scope."""
    if depth > 6:
        return None
    if isinstance(expr, cst.Await):
        expr = expr.expression
    if isinstance(expr, cst.Call):
        return expr, scope
    if isinstance(expr, cst.Name):
        found = project.resolver(module).binding_value(expr.value, scope, None)
        if found is None:
            return None
        binding, owner = found
        if binding.kind not in ("assign", "with"):
            return None
        return _follow_to_call(binding.value, owner, module, project, depth + 1)
    return None


def constructor_call(expr: cst.BaseExpression, scope: FunctionInfo | None, module: ModuleFacts, project):
    """The call an expression's value came from (``saver = SqliteSaver(conn)`` -> that call) and its scope."""
    return _follow_to_call(expr, scope, module, project)


def is_compile_call(call: cst.Call) -> bool:
    return isinstance(call.func, cst.Attribute) and call.func.attr.value == COMPILE_METHOD


def compiled_graph(call: cst.Call, scope: FunctionInfo | None, module: ModuleFacts, project) -> CompiledGraph | None:
    """Describe ``call`` if it is ``<StateGraph builder>.compile(...)``."""
    if not is_compile_call(call):
        return None
    receiver = call.func.value  # type: ignore[union-attr]
    builder_name = receiver.value if isinstance(receiver, cst.Name) else None
    found = _follow_to_call(receiver, scope, module, project)
    builder_call = None
    if found is not None:
        candidate, owner = found
        if project.resolver(module).call_names(candidate, owner) & STATE_GRAPH:
            builder_call = candidate
    if builder_call is None:
        return None
    cp = argument(call, 0, "checkpointer")
    return CompiledGraph(call, module, scope, cp, builder_call, builder_name)


def graph_of(expr: cst.BaseExpression, scope: FunctionInfo | None, module: ModuleFacts, project) -> CompiledGraph | None:
    """The compiled graph an expression (``graph`` in ``graph.invoke``) refers to, if traceable:
    through local names, and through a project factory function that returns ``builder.compile(...)``."""
    found = _follow_to_call(expr, scope, module, project)
    if found is None:
        return None
    call, owner = found
    graph = compiled_graph(call, owner, module, project)
    if graph is not None:
        return graph
    for name in project.resolver(module).call_names(call, owner):
        factory = project.function(name, near=module)
        if factory is None:
            continue
        for ret in factory.returns:
            if ret.value is not None:
                inner = _follow_to_call(ret.value, factory, factory.module, project)
                if inner is not None:
                    graph = compiled_graph(inner[0], inner[1], factory.module, project)
                    if graph is not None:
                        return graph
    return None


def node_functions(graph: CompiledGraph, project) -> list[tuple[cst.Call, FunctionInfo | None]]:
    """``add_node`` calls on the graph's builder in the same scope, with the node function when resolvable."""
    if graph.builder_name is None:
        return []
    fn_calls = graph.scope.calls if graph.scope is not None else graph.module.module_calls
    out: list[tuple[cst.Call, FunctionInfo | None]] = []
    resolver = project.resolver(graph.module)
    for info in fn_calls:
        f = info.node.func
        if not (isinstance(f, cst.Attribute) and f.attr.value == ADD_NODE_METHOD):
            continue
        if not (isinstance(f.value, cst.Name) and f.value.value == graph.builder_name):
            continue
        args = [a for a in info.node.args if a.keyword is None]
        node_kw = argument(info.node, 1, "action")
        target = node_kw if node_kw is not None else (args[0].value if len(args) == 1 else None)
        fn = None
        if target is not None:
            for name in resolver.names(target, graph.scope):
                fn = project.function(name, near=graph.module)
                if fn is not None:
                    break
        out.append((info.node, fn))
    return out


def remit_wrap_call(expr: cst.BaseExpression | None, scope: FunctionInfo | None, module: ModuleFacts, project) -> cst.Call | None:
    """The ``remit.wrap(...)`` call a checkpointer expression comes from, if it does."""
    if expr is None:
        return None
    found = _follow_to_call(expr, scope, module, project)
    if found is None:
        return None
    call, owner = found
    if project.resolver(module).call_names(call, owner) & REMIT_WRAP:
        return call
    return None
