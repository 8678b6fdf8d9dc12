"""The LangGraph programs ``audit`` can sweep, read off a module (nothing is imported).

- a function (``async def`` too) that returns ``builder.compile(...)``, directly or through a local
  (``compiled = builder.compile(...); return compiled``) (a *factory*), or that returns the uncompiled
  ``StateGraph`` (a *builder function*);
- a module-level ``graph = builder.compile(...)`` (a *compiled graph*) or ``builder = StateGraph(...)``;
- a class whose instances hold the compiled graph (``self.graph = workflow.compile()``) (a *graph holder*);
- a functional-API ``@entrypoint`` -- LangGraph's, by its qualified name (``langgraph.func.entrypoint``),
  not any decorator that happens to be called ``entrypoint`` (a cloud runtime's ``@app.entrypoint``);
- the graphs a ``langgraph.json`` serves.

A factory's parameters other than the checkpointer are reported in :attr:`Found.needs`: the audit fills
them from the literal arguments the project's own callers pass, else the factory cannot be swept.

A module-level graph built by one of the module's own factories is the same program: the factory is kept.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import libcst as cst

from resume_audit.audit.entrypoints import CHECKPOINTER_PARAMS, Discovery, Found
from resume_audit.audit.syntax import (
    assigned,
    callee,
    dotted,
    is_string_literal,
    positional,
    required_params,
    top_level_statements,
    walk,
)

if TYPE_CHECKING:
    from resume_audit.facts.collect import ModuleFacts

#: modules whose ``compile`` is not LangGraph's
_OTHER_COMPILES = frozenset({"re", "regex", "jinja2", "ast", "sre_compile", "py_compile", "torch", "jit"})


def _is_compile(node: cst.CSTNode) -> bool:
    """``<builder>.compile(...)``: not ``re.compile("...")`` and friends."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "compile"):
        return False
    receiver = node.func.value
    if isinstance(receiver, cst.Name) and receiver.value in _OTHER_COMPILES:
        return False
    args = positional(node)
    return not (args and not args[0].star and is_string_literal(args[0].value))


def _returns_builder(fn: cst.FunctionDef) -> bool:
    """``return StateGraph(...)`` or ``builder = StateGraph(...); ...; return builder`` (not compiled)."""
    bound = {
        t.target.value
        for n in walk(fn)
        if isinstance(n, cst.Assign) and callee(n.value) == "StateGraph"
        for t in n.targets
        if isinstance(t.target, cst.Name)
    }
    for n in walk(fn):
        if isinstance(n, cst.Return) and n.value is not None:
            if callee(n.value) == "StateGraph" and isinstance(n.value, cst.Call):
                return True
            if isinstance(n.value, cst.Name) and n.value.value in bound:
                return True
    return False


#: the functional API's decorator, by the name it is imported under
_ENTRYPOINT = "langgraph.func.entrypoint"


def _is_entrypoint(facts: ModuleFacts, decorator: cst.Decorator) -> bool:
    """LangGraph's ``@entrypoint(...)``: the decorator's name resolves through the module's imports to
    ``langgraph.func.entrypoint`` (``@func.entrypoint`` with ``from langgraph import func`` too)."""
    expr = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
    name = dotted(expr)
    head, _, rest = name.partition(".")
    qualified = facts.imports.get(head)
    return qualified is not None and (f"{qualified}.{rest}" if rest else qualified) == _ENTRYPOINT


def _compiled_locals(fn: cst.FunctionDef) -> set[str]:
    """The names a function binds to a ``.compile(...)`` result."""
    return {
        t.target.value
        for n in walk(fn)
        if isinstance(n, cst.Assign) and _is_compile(n.value)
        for t in n.targets
        if isinstance(t.target, cst.Name)
    }


def _returns_compiled(fn: cst.FunctionDef) -> bool:
    """``return builder.compile(...)``, or ``graph = builder.compile(...); return graph``."""
    bound = _compiled_locals(fn)
    return any(
        isinstance(n, cst.Return)
        and n.value is not None
        and (_is_compile(n.value) or (isinstance(n.value, cst.Name) and n.value.value in bound))
        for n in walk(fn)
    )


def _holds_graph(cls: cst.ClassDef) -> bool:
    """A method stores a compiled graph on the instance: ``self.graph = workflow.compile()`` (or a local
    compiled first)."""
    for method in cls.body.body:
        if not isinstance(method, cst.FunctionDef):
            continue
        bound = _compiled_locals(method)
        for n in walk(method):
            if isinstance(n, (cst.Assign, cst.AnnAssign)) and n.value is not None:
                targets = [t.target for t in n.targets] if isinstance(n, cst.Assign) else [n.target]
                on_self = any(
                    isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self"
                    for t in targets
                )
                value = n.value
                if on_self and (_is_compile(value) or (isinstance(value, cst.Name) and value.value in bound)):
                    return True
    return False


def _holder(facts: ModuleFacts, cls: cst.ClassDef) -> Found | None:
    if not _holds_graph(cls):
        return None
    init = next((m for m in cls.body.body if isinstance(m, cst.FunctionDef) and m.name.value == "__init__"), None)
    needs = tuple(p for p in required_params(init)[1:]) if init is not None else ()
    why = f"the class needs {', '.join(needs)} to be built; the sweep can only call it with nothing" if needs else ""
    return Found(cls.name.value, "graph holder", facts.line(cls), why, needs=needs)


def _function(facts: ModuleFacts, fn: cst.FunctionDef, factories: set[str]) -> Found | None:
    name, line = fn.name.value, facts.line(fn)
    if any(_is_entrypoint(facts, d) for d in fn.decorators):
        return Found(name, "entrypoint", line)
    returns_compiled = _returns_compiled(fn)
    extra = [p for p in required_params(fn) if p not in CHECKPOINTER_PARAMS]
    if not returns_compiled and _returns_builder(fn):
        factories.add(name)
        why = f"the builder function needs {', '.join(extra)}; the sweep can only call it with nothing"
        return Found(name, "builder function", line, why if extra else "", needs=tuple(extra))
    if returns_compiled:
        factories.add(name)
        why = (
            (
                f"the factory needs {', '.join(extra)}; the sweep can only call a factory with nothing or a "
                "checkpointer -- add one that builds the same graph that way"
            )
            if extra
            else ""
        )
        return Found(name, "factory", line, why, needs=tuple(extra))
    return None


def find(facts: ModuleFacts) -> list[Found]:
    """The module's LangGraph programs, in statement order."""
    out: list[Found] = []
    factories: set[str] = set()
    for statement in top_level_statements(facts):
        if isinstance(statement, cst.FunctionDef):
            found = _function(facts, statement, factories)
            if found is not None:
                out.append(found)
            continue
        if isinstance(statement, cst.ClassDef):
            held = _holder(facts, statement)
            if held is not None:
                out.append(held)
            continue
        names, value = assigned(statement)
        if not names or value is None:
            continue
        if _is_compile(value):
            out.append(Found(names[0], "compiled graph", facts.line(statement)))
        elif callee(value) == "StateGraph":
            out.append(Found(names[0], "builder", facts.line(statement)))
    # a module-level graph built by one of this module's factories is the same program: keep the factory;
    # a module-level builder that the module also compiles is that compiled graph
    compiled = any(f.kind == "compiled graph" for f in out)
    return [
        f
        for f in out
        if not ((f.kind in ("compiled graph", "builder") and factories) or (f.kind == "builder" and compiled))
    ]


def deployed(manifest: Path) -> list[tuple[Path, str]]:
    """``langgraph.json`` graphs: ``"name": "./path/to/file.py:attr"`` -> (the file, ``attr``), existing files only."""
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    graphs = data.get("graphs") if isinstance(data, dict) else None
    out = []
    for _name, spec in (graphs or {}).items():
        if not isinstance(spec, str) or ":" not in spec:
            continue
        where, _, attr = spec.rpartition(":")
        path = (manifest.parent / where).resolve()
        if path.is_file():
            out.append((path, attr))
    return out


DISCOVERY = Discovery(find, manifest="langgraph.json", deployed=deployed, deployed_kind="deployed graph")
