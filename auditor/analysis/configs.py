"""What keys does this run config carry under ``configurable``?

RA201 fires when a resume is addressed with a ``checkpoint_id``; RA301 needs
to know whether an inspection passes ``remit_inspect``. Configs are built
every which way: inline dict displays, a variable assigned earlier, ``{**base,
"configurable": {...}}``, ``cfg["configurable"]["checkpoint_id"] = ...``, a
helper that returns the dict, or a state snapshot's ``.config`` (which always
names its checkpoint). This module evaluates those shapes statically.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from resume_audit.facts.model import FunctionInfo, ModuleFacts
from resume_audit.facts.syntax import dict_items, keyword, string_value
from resume_audit.facts.walk import visit_fast

if TYPE_CHECKING:
    from resume_audit.analysis.project import Project

#: what ``StateSnapshot.config`` (from get_state / get_state_history) always holds
SNAPSHOT_KEYS = frozenset({"thread_id", "checkpoint_ns", "checkpoint_id"})
SNAPSHOT_METHODS = frozenset({"get_state", "aget_state", "get_state_history", "aget_state_history"})


@dataclass
class ConfigShape:
    """The ``configurable`` keys a config expression is known to carry."""

    keys: set[str] = field(default_factory=set)
    #: where each key was set (node and the module it is in), for related locations
    origins: dict[str, tuple[cst.CSTNode, ModuleFacts]] = field(default_factory=dict)
    #: True when part of the config could not be evaluated
    partial: bool = False

    def merge(self, other: "ConfigShape") -> None:
        for k in other.keys:
            if k not in self.keys:
                self.keys.add(k)
                if k in other.origins:
                    self.origins[k] = other.origins[k]
        self.partial = self.partial or other.partial

    def add(self, key: str, origin: cst.CSTNode, module: ModuleFacts) -> None:
        if key not in self.keys:
            self.keys.add(key)
            self.origins[key] = (origin, module)


class ConfigEvaluator:
    def __init__(self, project: "Project") -> None:
        self.project = project

    def shape(
        self, expr: cst.BaseExpression, scope: FunctionInfo | None, module: ModuleFacts, depth: int = 0
    ) -> ConfigShape:
        out = ConfigShape()
        if depth > 6:
            out.partial = True
            return out
        if isinstance(expr, cst.Dict):
            for key, value in dict_items(expr):
                if key == "configurable":
                    out.merge(self._configurable(value, scope, module, depth + 1))
                elif key is None:
                    out.merge(self.shape(value, scope, module, depth + 1))
            return out
        if isinstance(expr, cst.Call):
            return self._call_shape(expr, scope, module, depth)
        if isinstance(expr, cst.Name):
            return self._name_shape(expr, scope, module, depth)
        if (
            isinstance(expr, cst.Attribute)
            and expr.attr.value == "config"
            and self._is_snapshot(expr.value, scope, module, depth)
        ):
            for k in SNAPSHOT_KEYS:
                out.add(k, expr, module)
            return out
        out.partial = True
        return out

    # -- pieces -----------------------------------------------------------
    def _configurable(
        self, expr: cst.BaseExpression, scope: FunctionInfo | None, module: ModuleFacts, depth: int
    ) -> ConfigShape:
        out = ConfigShape()
        if isinstance(expr, cst.Dict):
            for key, value in dict_items(expr):
                if key is not None:
                    out.add(key, value, module)
                else:
                    inner = self._configurable(value, scope, module, depth + 1)
                    out.merge(inner)
            return out
        if isinstance(expr, cst.Call) and _callee_is(expr, "dict"):
            for arg in expr.args:
                if arg.keyword is not None:
                    out.add(arg.keyword.value, arg.value, module)
                else:
                    out.merge(self._configurable(arg.value, scope, module, depth + 1))
            return out
        if isinstance(expr, cst.Name):
            found = (
                self.project.resolver(module).binding_value(expr.value, scope, module.order(expr)) if scope else None
            )
            if found is not None:
                inner = self._configurable(found[0].value, found[1], module, depth + 1)
                if found[1] is not None:
                    for key, node in _subscript_keys(found[1], expr.value, module):
                        inner.add(key, node, module)
                return inner
        if isinstance(expr, cst.Subscript):
            # base["configurable"] reused inside another config
            inner_base = expr.value
            shape = self.shape(inner_base, scope, module, depth + 1)
            return shape
        out.partial = True
        return out

    def _call_shape(self, call: cst.Call, scope: FunctionInfo | None, module: ModuleFacts, depth: int) -> ConfigShape:
        out = ConfigShape()
        names = self.project.resolver(module).call_names(call, scope)
        if _callee_is(call, "dict") or any(n.endswith("RunnableConfig") for n in names):
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value == "configurable":
                    out.merge(self._configurable(arg.value, scope, module, depth + 1))
                elif arg.keyword is None and arg.star == "**":
                    out.merge(self.shape(arg.value, scope, module, depth + 1))
                elif arg.keyword is None and not arg.star:
                    out.merge(self.shape(arg.value, scope, module, depth + 1))
            return out
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "copy" and not call.args:
            return self.shape(call.func.value, scope, module, depth + 1)
        if any(n in ("copy.copy", "copy.deepcopy") for n in names) and call.args:
            return self.shape(call.args[0].value, scope, module, depth + 1)
        if any(n.endswith(("merge_configs", "patch_config", "ensure_config")) for n in names):
            for arg in call.args:
                out.merge(self.shape(arg.value, scope, module, depth + 1))
            cfg = keyword(call, "configurable")
            if cfg is not None:
                out.merge(self._configurable(cfg.value, scope, module, depth + 1))
            return out
        for name in names:
            fn = self.project.function(name, near=module)
            if fn is not None and fn.returns:
                for ret in fn.returns:
                    if ret.value is not None:
                        out.merge(self.shape(ret.value, fn, fn.module, depth + 1))
                return out
        out.partial = True
        return out

    def _name_shape(self, name: cst.Name, scope: FunctionInfo | None, module: ModuleFacts, depth: int) -> ConfigShape:
        resolver = self.project.resolver(module)
        found = resolver.binding_value(name.value, scope, module.order(name)) if scope is not None else None
        if found is None or found[1] is None:
            module_binding = resolver.binding_value(name.value, None, None)
            if module_binding is None:
                out = ConfigShape(partial=True)
                return out
            found = module_binding
        binding, owner = found
        if binding.kind in ("param-annotation", "with"):
            return ConfigShape(partial=True)
        if binding.kind == "for":
            return ConfigShape(partial=True)
        out = self.shape(binding.value, owner, module, depth + 1)
        if scope is not None:
            for key, node in _subscript_keys(scope, name.value, module):
                out.add(key, node, module)
        return out

    def _is_snapshot(
        self, expr: cst.BaseExpression, scope: FunctionInfo | None, module: ModuleFacts, depth: int
    ) -> bool:
        """Is ``expr`` a StateSnapshot (from get_state / get_state_history)?"""
        if depth > 6:
            return False
        if isinstance(expr, cst.Await):
            return self._is_snapshot(expr.expression, scope, module, depth + 1)
        if isinstance(expr, cst.Call):
            f = expr.func
            if isinstance(f, cst.Attribute) and f.attr.value in SNAPSHOT_METHODS:
                return True
            if isinstance(f, cst.Name) and f.value in ("next", "list") and expr.args:
                return self._is_snapshot(expr.args[0].value, scope, module, depth + 1)
            return False
        if isinstance(expr, cst.Subscript):
            return self._is_snapshot(expr.value, scope, module, depth + 1)
        if isinstance(expr, cst.Name) and scope is not None:
            found = self.project.resolver(module).binding_value(expr.value, scope, module.order(expr))
            if found is not None:
                return self._is_snapshot(found[0].value, found[1], module, depth + 1)
        return False


def _callee_is(call: cst.Call, name: str) -> bool:
    return isinstance(call.func, cst.Name) and call.func.value == name


def _subscript_keys(fn: FunctionInfo, name: str, module: ModuleFacts) -> list[tuple[str, cst.CSTNode]]:
    """Keys set on ``name``'s configurable dict inside ``fn``:
    ``name["configurable"]["k"] = v``, ``name["configurable"].update(k=v)`` / ``.update({"k": v})``."""
    found: list[tuple[str, cst.CSTNode]] = []

    def is_configurable_of_name(expr: cst.BaseExpression) -> bool:
        if (
            isinstance(expr, cst.Subscript)
            and isinstance(expr.value, cst.Name)
            and expr.value.value == name
            and expr.slice
        ):
            el = expr.slice[0].slice
            return isinstance(el, cst.Index) and string_value(el.value) == "configurable"
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "setdefault":
            base = expr.func.value
            first = expr.args[0].value if expr.args else None
            return isinstance(base, cst.Name) and base.value == name and string_value(first) == "configurable"
        return False

    class _V(cst.CSTVisitor):
        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            t = node.target
            if isinstance(t, cst.Subscript) and is_configurable_of_name(t.value) and t.slice:
                el = t.slice[0].slice
                if isinstance(el, cst.Index):
                    key = string_value(el.value)
                    if key is not None:
                        found.append((key, node))

        def visit_Call(self, node: cst.Call) -> None:
            f = node.func
            if isinstance(f, cst.Attribute) and f.attr.value == "update" and is_configurable_of_name(f.value):
                for arg in node.args:
                    if arg.keyword is not None:
                        found.append((arg.keyword.value, arg))
                    elif isinstance(arg.value, cst.Dict):
                        for key, _ in dict_items(arg.value):
                            if key is not None:
                                found.append((key, arg))

    visit_fast(fn.node.body, _V())
    return found
