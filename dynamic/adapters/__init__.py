"""Framework adapters: one module per framework behind :mod:`.base`'s interface.

Only LangGraph is implemented; CrewAI Flows, LlamaIndex Workflows and
pydantic-graph adapters are added as one module each, registered here.
"""

from __future__ import annotations

from .base import Adapter


def adapter_for(framework: str) -> Adapter:
    """The adapter for ``framework`` (only ``"langgraph"`` today)."""
    if framework == "langgraph":
        from .langgraph import LangGraphAdapter

        return LangGraphAdapter()
    raise ValueError(f"no dynamic-stage adapter for {framework!r} yet (available: langgraph)")
