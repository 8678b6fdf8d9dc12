"""LlamaIndex Workflows names, in one place.

Checked against llama-index-workflows 2.26.1 (package ``workflows``;
2026-12-02), llama-index-core 0.14.25 (``llama_index/core/workflow/``) and
llama-agents-server 0.8.0 (``llama_agents/server``):

* ``workflows/__init__.py`` exports ``Context``, ``Workflow``, ``step``;
  ``Context`` is defined in ``workflows.context.context``, ``step`` in
  ``workflows.decorators``, ``Workflow`` in ``workflows.workflow``, the
  events (``InputRequiredEvent``, ``HumanResponseEvent``, ``StartEvent``,
  ``StopEvent``) in ``workflows.events``.
* ``llama_index.core.workflow`` is the older import path: its modules
  re-export the same classes from ``workflows`` (``context.py``:
  ``from workflows.context import Context``; ``decorators.py`` wraps
  ``workflows.decorators.step``), still common in user code.
* ``llama_agents.workflows`` (shipped inside llama-index-workflows 2.26.1)
  is an import alias of the whole ``workflows`` package.
* ``Context.to_dict()`` snapshots a run, ``Context.from_dict(workflow,
  data)`` restores it for ``workflow.run(ctx=restored)``.
* ``llama_agents.server.WorkflowServer(workflow_store=...)`` persists
  handler state in its store; the default ``MemoryWorkflowStore`` is
  in-process, ``SqliteWorkflowStore`` / ``PostgresWorkflowStore`` /
  ``AgentDataStore`` are durable. ``workflows.server`` is the deprecated
  re-export of the same names.

So every name is listed under each root.
"""

from __future__ import annotations

import libcst as cst

from resume_audit.analysis.queries import NameResolver
from resume_audit.facts.model import FunctionInfo, ModuleFacts
from resume_audit.facts.syntax import string_value

PACKAGES = ("workflows", "llama_index.core.workflow", "llama_agents")

_ROOTS = ("workflows", "llama_index.core.workflow", "llama_agents.workflows")


def _under_roots(*suffixes: str) -> frozenset[str]:
    return frozenset(f"{root}.{s}" for root in _ROOTS for s in suffixes)


#: ``Context`` is defined in workflows.context.context and re-exported twice.
CONTEXT = _under_roots("Context", "context.Context", "context.context.Context")
STEP = _under_roots("step", "decorators.step")
WORKFLOW = _under_roots("Workflow", "workflow.Workflow")
INPUT_REQUIRED_EVENT = _under_roots("InputRequiredEvent", "events.InputRequiredEvent")
HUMAN_RESPONSE_EVENT = _under_roots("HumanResponseEvent", "events.HumanResponseEvent")

#: ``await ctx.wait_for_event(...)``: "The runtime pauses by throwing an internal
#: control-flow exception and replays the entire step when the event arrives"
#: (docstring of Context.wait_for_event, 2.26.1).
WAIT_FOR_EVENT = "wait_for_event"
WRITE_EVENT_TO_STREAM = "write_event_to_stream"

#: Snapshot / restore of a run (``ctx.to_dict()`` / ``Context.from_dict(workflow, data)``).
CONTEXT_TO_DICT = "to_dict"
CONTEXT_FROM_DICT = "from_dict"
#: ``Context.from_dict`` by qualified name (called on the class).
CONTEXT_FROM_DICT_NAMES = frozenset(f"{c}.from_dict" for c in CONTEXT)

#: ``workflow.run(ctx=...)`` runs (or, with a restored context, resumes) a workflow.
RUN_METHOD = "run"

#: The served runtime and its handler stores.
_SERVER_ROOTS = ("llama_agents.server", "workflows.server")
WORKFLOW_SERVER = frozenset(f"{r}.WorkflowServer" for r in _SERVER_ROOTS) | {
    "llama_agents.server.server.WorkflowServer"
}
DURABLE_WORKFLOW_STORES = frozenset(
    {
        *(f"{r}.SqliteWorkflowStore" for r in _SERVER_ROOTS),
        "llama_agents.server.PostgresWorkflowStore",
        "llama_agents.server._store.postgres_workflow_store.PostgresWorkflowStore",
        "llama_agents.server._store.sqlite.sqlite_workflow_store.SqliteWorkflowStore",
        "llama_agents.server.AgentDataStore",
        "llama_agents.server._store.agent_data_store.AgentDataStore",
    }
)
ABSTRACT_WORKFLOW_STORE = frozenset(f"{r}.AbstractWorkflowStore" for r in _SERVER_ROOTS)


def is_method_call(call: cst.Call, name: str) -> bool:
    return isinstance(call.func, cst.Attribute) and call.func.attr.value == name


def is_context_receiver(call: cst.Call, fn: FunctionInfo | None, resolver: NameResolver) -> bool:
    """``ctx.<method>(...)`` where ``ctx`` is typed as a workflows ``Context``, or the
    call sits in a ``@step`` function (whose context parameter may be unannotated)."""
    if not isinstance(call.func, cst.Attribute) or fn is None:
        return False
    if resolver.names(call.func.value, fn) & CONTEXT:
        return True
    return any(resolver.names(d.target, fn.parent) & STEP for d in fn.decorators)


def is_step(fn: FunctionInfo, resolver: NameResolver) -> bool:
    return any(resolver.names(d.target, fn.parent) & STEP for d in fn.decorators)


#: the Context's key/value store (``await ctx.get(k)`` / ``ctx.set(k, v)``; ``ctx.store.get/set``
#: on workflows 2.x) is part of the serialised Context: a flag set there survives the step's
#: replay and a restore
CONTEXT_GET = frozenset({"get"})
CONTEXT_SET = frozenset({"set"})


def context_flag_guard(call: cst.Call, fn: FunctionInfo, module: ModuleFacts) -> bool:
    """Is ``call`` inside ``if not await ctx.get("k"):`` (or ``if not flag:`` with ``flag = await
    ctx.get("k")``) whose body also sets ``"k"`` in the Context store? Then the replayed step
    skips it: the flag was stored with the Context before the step parked."""
    child: cst.CSTNode = call
    for anc in module.ancestors(call):
        if anc is fn.node:
            return False
        if isinstance(anc, cst.If) and child is anc.body:
            key = _negated_context_get(anc.test, fn)
            if key is not None and _sets_context_key(anc.body, key):
                return True
        child = anc
    return False


def _negated_context_get(test: cst.BaseExpression, fn: FunctionInfo) -> str | None:
    if not (isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)):
        return None
    inner = test.expression
    if isinstance(inner, cst.Name):
        for b in fn.bindings:
            if b.name == inner.value and b.kind == "assign":
                inner = b.value
                break
    return _context_get_key(inner)


def _context_get_key(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.Await):
        expr = expr.expression
    if (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value in CONTEXT_GET
        and expr.args
    ):
        return string_value(expr.args[0].value)
    return None


def _sets_context_key(body: cst.CSTNode, key: str) -> bool:
    stack: list[cst.CSTNode] = [body]
    while stack:
        cur = stack.pop()
        if (
            isinstance(cur, cst.Call)
            and isinstance(cur.func, cst.Attribute)
            and cur.func.attr.value in CONTEXT_SET
            and cur.args
        ):
            if string_value(cur.args[0].value) == key:
                return True
        stack.extend(cur.children)
    return False
