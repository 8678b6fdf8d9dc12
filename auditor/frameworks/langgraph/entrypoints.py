"""The LangGraph programs ``audit`` can sweep, read off a module (nothing is imported).

- a function whose body ends in ``builder.compile(...)`` and that can be called with nothing or with a
  checkpointer (a *factory*), or one that returns the uncompiled ``StateGraph`` (a *builder function*);
- a module-level ``graph = builder.compile(...)`` (a *compiled graph*) or ``builder = StateGraph(...)``;
- a functional-API ``@entrypoint``;
- the graphs a ``langgraph.json`` serves.

A module-level graph built by one of the module's own factories is the same program: the factory is kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import json
from pathlib import Path

import libcst as cst

from resume_audit.audit.entrypoints import CHECKPOINTER_PARAMS, Discovery, Found
from resume_audit.audit.syntax import assigned, callee, is_string_literal, positional, required_params, top_level_statements, walk

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
    bound = {t.target.value for n in walk(fn) if isinstance(n, cst.Assign) and callee(n.value) == "StateGraph"
             for t in n.targets if isinstance(t.target, cst.Name)}
    for n in walk(fn):
        if isinstance(n, cst.Return) and n.value is not None:
            if callee(n.value) == "StateGraph" and isinstance(n.value, cst.Call):
                return True
            if isinstance(n.value, cst.Name) and n.value.value in bound:
                return True
    return False


def _function(facts: ModuleFacts, fn: cst.FunctionDef, factories: set[str]) -> Found | None:
    name, line = fn.name.value, facts.line(fn)
    if "entrypoint" in (callee(d.decorator) for d in fn.decorators):
        return Found(name, "entrypoint", line)
    returns_compiled = any(isinstance(n, cst.Return) and n.value is not None and _is_compile(n.value) for n in walk(fn))
    extra = [p for p in required_params(fn) if p not in CHECKPOINTER_PARAMS]
    if not returns_compiled and _returns_builder(fn):
        factories.add(name)
        why = f"the builder function needs {', '.join(extra)}; the sweep can only call it with nothing"
        return Found(name, "builder function", line, why if extra else "")
    if returns_compiled:
        factories.add(name)
        why = (f"the factory needs {', '.join(extra)}; the sweep can only call a factory with nothing or a "
               "checkpointer -- add one that builds the same graph that way") if extra else ""
        return Found(name, "factory", line, why)
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
    return [f for f in out if not ((f.kind in ("compiled graph", "builder") and factories)
                                   or (f.kind == "builder" and compiled))]


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
