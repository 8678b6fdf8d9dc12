"""Framework adapters: one module per framework behind :mod:`.base`'s interface.

Adding a framework is one module with an :class:`~.base.Adapter` subclass and
one line in ``REGISTRY``. Three questions are answered here, once, for all:

- ``adapter_for(name)``: the adapter of a named framework;
- ``detect(obj)``: which framework an imported target belongs to (in the
  child, after the user's module was imported), and what object to hand the
  adapter;
- ``sniff(text)``: which frameworks a target's *source* imports (in the parent,
  which never imports user code) -- so the fork server preloads the right
  framework and the child can prepare its hooks before the user's module runs.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from typing import Any

from resume_audit.dynamic.adapters.base import Adapter, ShapeError, required_parameters

#: framework name -> "module:class"
REGISTRY: dict[str, str] = {
    "langgraph": "resume_audit.frameworks.langgraph.adapter:LangGraphAdapter",
    "crewai": "resume_audit.frameworks.crewai.adapter:CrewAIAdapter",
    "llamaindex": "resume_audit.frameworks.llamaindex.adapter:LlamaIndexAdapter",
    "pydantic-graph": "resume_audit.frameworks.pydantic_graph.adapter:PydanticGraphAdapter",
}

#: top-level import names that identify each framework in source text and in an environment
IMPORT_NAMES: dict[str, tuple[str, ...]] = {
    "langgraph": ("langgraph",),
    "crewai": ("crewai",),
    "llamaindex": ("workflows", "llama_index"),
    "pydantic-graph": ("pydantic_graph",),
}

_CACHE: dict[str, Adapter] = {}


def adapter_for(framework: str) -> Adapter:
    """The adapter for ``framework`` (a key of ``REGISTRY``)."""
    if framework not in REGISTRY:
        raise ValueError(f"no dynamic-stage adapter for {framework!r} (available: {', '.join(REGISTRY)})")
    if framework not in _CACHE:
        module, cls = REGISTRY[framework].split(":")
        _CACHE[framework] = getattr(importlib.import_module(module), cls)()
    return _CACHE[framework]


def installed(framework: str) -> bool:
    """Whether the framework's package can be imported here (without importing it)."""
    primary = IMPORT_NAMES[framework][0]
    try:
        return importlib.util.find_spec(primary) is not None
    except (ImportError, ValueError):
        return False


def sniff(text: str) -> list[str]:
    """Frameworks whose packages ``text`` imports, in ``REGISTRY`` order."""
    found = []
    for framework, names in IMPORT_NAMES.items():
        alternatives = "|".join(re.escape(n) for n in names)
        if re.search(rf"^\s*(?:from|import)\s+(?:{alternatives})\b", text, re.MULTILINE):
            found.append(framework)
    return found


def detect(obj: Any, hint: str | None = None) -> tuple[Adapter, Any]:
    """(adapter, object to open) for an imported target.

    A framework object is recognised by its type. A factory with required
    parameters is LangGraph's (it takes a checkpointer). A factory without is
    called once and its result recognised -- LangGraph's adapter still gets
    the factory itself, so it can call it with the sweep's checkpointer.
    """
    order = ([hint] if hint in REGISTRY else []) + [f for f in REGISTRY if f != hint]
    for framework in order:
        adapter = adapter_for(framework)
        if adapter.accepts(obj):
            return adapter, obj
    if callable(obj) and not isinstance(obj, type):
        required = required_parameters(obj)
        if required:
            return adapter_for("langgraph"), obj
        import contextlib
        import sys

        with contextlib.ExitStack() as stack:  # a probe build must not write checkpoints or emit events
            for framework, names in IMPORT_NAMES.items():
                if any(n in sys.modules for n in names):
                    stack.enter_context(adapter_for(framework).building())
            result = obj()
        for framework in order:
            adapter = adapter_for(framework)
            if adapter.accepts(result):
                return adapter, (obj if adapter.keeps_factory else result)
        raise ShapeError(f"the factory returned {type(result).__name__}, which is not a program of a supported framework "
                         f"({', '.join(REGISTRY)})")
    raise ShapeError(f"{type(obj).__name__} is not a program of a supported framework ({', '.join(REGISTRY)}): expected a "
                     "LangGraph graph or factory, a CrewAI Flow subclass or factory, a LlamaIndex Workflow subclass, instance "
                     "or factory, or a pydantic-graph Graph with its start node")


__all__ = ["Adapter", "REGISTRY", "adapter_for", "detect", "installed", "sniff", "ShapeError"]
