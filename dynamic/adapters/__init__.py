"""Framework adapters: one module per framework behind :mod:`.base`'s interface.

A framework's adapter is an :class:`~.base.Adapter` subclass in its own folder
(``frameworks/<name>/adapter.py``), named by its record in
:mod:`resume_audit.frameworks.registry`: ``REGISTRY`` and ``IMPORT_NAMES`` are
derived from that registry, never written here. Three questions are answered
here, once, for all:

- ``adapter_for(name)``: the adapter of a named framework;
- ``detect(obj)``: which framework an imported target belongs to (in the
  child, after the user's module was imported), and what object to hand the
  adapter;
- ``sniff(text)``: which frameworks a target's *source* imports (in the parent,
  which never imports user code) -- so the fork server preloads the right
  framework and the child can prepare its hooks before the user's module runs.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from resume_audit.dynamic.adapters.base import Adapter, ShapeError, required_parameters, settled
from resume_audit.frameworks import registry

#: framework id -> "module:Class" of its adapter (derived from the framework registry)
REGISTRY: Mapping[str, str] = registry.Table(lambda fw: fw.adapter)

#: top-level import names that identify each framework in source text and in an environment
IMPORT_NAMES: Mapping[str, tuple[str, ...]] = registry.Table(lambda fw: fw.import_names)

_CACHE: dict[str, Adapter] = {}


def adapter_for(framework: str) -> Adapter:
    """The adapter for ``framework`` (a key of ``REGISTRY``)."""
    if framework not in REGISTRY:
        raise ValueError(f"no dynamic-stage adapter for {framework!r} (available: {', '.join(REGISTRY)})")
    if framework not in _CACHE:
        cls = registry.load(REGISTRY[framework])
        if not (isinstance(cls, type) and issubclass(cls, Adapter)):
            raise TypeError(f"{REGISTRY[framework]} is not an Adapter subclass")
        _CACHE[framework] = cls()
    return _CACHE[framework]


def installed(framework: str) -> bool:
    """Whether the framework's package can be imported here (without importing it)."""
    return registry.get(framework).installed()


def sniff(text: str) -> list[str]:
    """Frameworks whose packages ``text`` imports, in ``REGISTRY`` order."""
    found: list[str] = []
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
    order = ([hint] if hint is not None and hint in REGISTRY else []) + [f for f in REGISTRY if f != hint]
    for framework in order:
        adapter = adapter_for(framework)
        if adapter.accepts(obj):
            return adapter, obj
    if callable(obj) and not (isinstance(obj, type) and required_parameters(obj)):
        required = required_parameters(obj) if not isinstance(obj, type) else []
        if required:
            return adapter_for("langgraph"), obj
        import contextlib
        import sys

        with contextlib.ExitStack() as stack:  # a probe build must not write checkpoints or emit events
            for framework, names in IMPORT_NAMES.items():
                if any(n in sys.modules for n in names):
                    stack.enter_context(adapter_for(framework).building())
            result = settled(obj())  # an ``async def`` factory is awaited
        for framework in order:
            adapter = adapter_for(framework)
            if adapter.accepts(result):
                return adapter, (obj if adapter.keeps_factory else result)
        held = _held_program(result, order)
        if held is not None:  # ``self.graph = workflow.compile()``: the instance holds the program
            adapter, name = held
            if adapter.keeps_factory:
                return adapter, _attribute_factory(obj, name)
            return adapter, getattr(result, name)
        raise ShapeError(
            f"the factory returned {type(result).__name__}, which is not a program of a supported framework "
            f"({', '.join(REGISTRY)})"
        )
    raise ShapeError(
        f"{type(obj).__name__} is not a program of a supported framework ({', '.join(REGISTRY)}): expected a "
        "LangGraph graph or factory, a CrewAI Flow subclass or factory, a LlamaIndex Workflow subclass, instance "
        "or factory, or a pydantic-graph Graph with its start node"
    )


#: attribute names a class holding its program uses most, tried first
_HOLDER_NAMES = ("graph", "app", "workflow", "compiled", "agent", "flow")


def _held_program(instance: Any, order: list[str]) -> tuple[Adapter, str] | None:
    """(adapter, attribute) of the program an instance holds on one of its attributes, if any."""
    names = [n for n in _HOLDER_NAMES if n in vars(instance)] if hasattr(instance, "__dict__") else []
    names += [n for n in (vars(instance) if hasattr(instance, "__dict__") else {}) if n not in names]
    for name in names:
        value = getattr(instance, name, None)
        for framework in order:
            adapter = adapter_for(framework)
            if adapter.accepts(value):
                return adapter, name
    return None


def _attribute_factory(cls: Any, name: str) -> Any:
    """A factory building a fresh instance per run and handing over the program it holds, which keeps the
    class's own name and line for the report."""
    import functools

    def build() -> Any:
        return getattr(settled(cls()), name)

    try:
        return functools.update_wrapper(build, cls, assigned=("__module__", "__name__", "__qualname__", "__doc__"))
    except (AttributeError, TypeError):
        return build


__all__ = ["Adapter", "REGISTRY", "adapter_for", "detect", "installed", "sniff", "ShapeError"]
