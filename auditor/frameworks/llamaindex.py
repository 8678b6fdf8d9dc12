"""LlamaIndex Workflows names, in one place.

Checked against llama-index-workflows 2.26.1 (package ``workflows``; 2026-12-02).
``llama_index.core.workflow`` is the older import path (llama-index-core
re-exports the same classes from ``workflows``), still common in user code,
so every name is listed under both roots.
"""

from __future__ import annotations

PACKAGES = ("workflows", "llama_index.core.workflow")

_ROOTS = ("workflows", "llama_index.core.workflow")


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
