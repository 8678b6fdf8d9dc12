"""What does this expression name? Qualified names with light local type inference.

Names that come from an import resolve through the module's own import
table (``from langgraph.types import interrupt as ask`` makes ``ask`` mean
``langgraph.types.interrupt``; ``import langgraph.types as lgt`` makes
``lgt.interrupt`` mean the same), imports inside a function included, and a
local definition or assignment shadows them, so a user's own ``interrupt``
does not match. (LibCST's QualifiedNameProvider answers the same question
but costs several times the parse; the collector's single walk already has
everything needed.) Agent code also reaches effects through
objects: ``s = requests.Session(); s.post(...)``, ``self.client.post(...)``
with ``self.client = httpx.Client()`` in ``__init__``, ``boto3.client("s3")
.put_object(...)``. The resolver follows those bindings so the effect model
can say ``requests.Session.post`` and ``boto3.client.put_object``. It never
imports anything: it only reads the code.

Instance types are written as the constructor's qualified name, so the
type of ``requests.Session()`` is ``requests.Session`` and its ``post``
method resolves to ``requests.Session.post``.
"""

from __future__ import annotations

import libcst as cst

from resume_audit.analysis.queries import ProjectQueries
from resume_audit.facts.model import BUILTIN_NAMES, Binding, ClassInfo, FunctionInfo, ModuleFacts, Order

_MAX_DEPTH = 6


def dotted_parts(expr: cst.BaseExpression) -> tuple[cst.BaseExpression, list[str]]:
    """Split ``a.b.c`` into (``a``, ["b", "c"]); the base may be a Call or anything else."""
    attrs: list[str] = []
    while isinstance(expr, cst.Attribute):
        attrs.append(expr.attr.value)
        expr = expr.value
    attrs.reverse()
    return expr, attrs


def dotted_text(expr: cst.BaseExpression) -> str | None:
    """``self.client.post`` for an attribute chain of plain names, else None."""
    base, attrs = dotted_parts(expr)
    if isinstance(base, cst.Name):
        return ".".join([base.value, *attrs])
    return None


class Resolver:
    """Resolves expressions of one module to sets of qualified names."""

    def __init__(self, facts: ModuleFacts, project: ProjectQueries | None = None) -> None:
        self.facts = facts
        self.project = project
        self._call_cache: dict[int, set[str]] = {}

    # -- public -----------------------------------------------------------
    def names(
        self, expr: cst.BaseExpression, scope: FunctionInfo | None = None, *, at: Order | None = None, depth: int = 0
    ) -> set[str]:
        """Qualified names ``expr`` may denote when evaluated in ``scope`` (None: module level).
        ``depth``: how deep an enclosing resolution already is (the type of an attribute is
        resolved in the middle of another resolution; the bound stops cycles through them)."""
        return self._names(expr, scope, at, depth)

    def call_names(self, call: cst.Call, scope: FunctionInfo | None = None) -> set[str]:
        """Qualified names of the callee of ``call`` (cached: every rule asks)."""
        if self.project is not None:  # the project records what following the names looked into
            return self.project.cached(
                "call-names", id(call), lambda: self._names(call.func, scope, self.facts.order(call), 0)
            )
        cached = self._call_cache.get(id(call))
        if cached is None:
            cached = self._call_cache[id(call)] = self._names(call.func, scope, self.facts.order(call), 0)
        return cached

    def binding_value(
        self, name: str, scope: FunctionInfo | None, at: Order | None
    ) -> tuple[Binding, FunctionInfo | None] | None:
        """The binding of ``name`` visible at ``at`` and the scope it lives in: the latest
        earlier one in the function, any one in it (loops), then the enclosing functions,
        then the module. ``None`` for unknowns, including unannotated parameters."""
        fn = scope
        while fn is not None:
            found = _latest(fn.bindings, name, at)
            if found is not None:
                return found, fn
            if fn.param(name) is not None:
                return None
            fn = fn.parent
            at = None
        found = _latest(self.facts.module_bindings, name, None)
        return (found, None) if found is not None else None

    # -- internals --------------------------------------------------------
    def _names(self, expr: cst.BaseExpression, scope: FunctionInfo | None, at: Order | None, depth: int) -> set[str]:
        if depth > _MAX_DEPTH:
            return set()
        if isinstance(expr, cst.Await):
            return self._names(expr.expression, scope, at, depth + 1)
        if isinstance(expr, cst.Call):
            return self._names(expr.func, scope, at, depth + 1)
        if isinstance(expr, cst.Subscript):
            # Optional[X] / Annotated[X, ...] annotations and d["k"] lookups: use the subscripted value
            base_names = self._names(expr.value, scope, at, depth + 1)
            if base_names & {"typing.Optional", "typing.Annotated", "typing_extensions.Annotated"} and expr.slice:
                first = expr.slice[0].slice
                if isinstance(first, cst.Index):
                    return self._names(first.value, scope, at, depth + 1)
            return set()
        base, attrs = dotted_parts(expr)
        if isinstance(base, cst.Name):
            bases = self._name_base(base, scope, at, depth)
        elif isinstance(base, (cst.Call, cst.Await, cst.Subscript)):
            bases = self._names(base, scope, at, depth + 1)
            if attrs and isinstance(_strip_await(base), cst.Call) and self.project is not None:
                # ``get_store().save(...)``: a method of what the project helper returns
                bases = {self.project.return_type_of(b, near=self.facts) or b for b in bases}
        else:
            return set()
        current = bases
        for attr in attrs:
            current = {self._follow_attribute_binding(f"{b}.{attr}", depth) for b in current}
        return current

    def _name_base(self, name: cst.Name, scope: FunctionInfo | None, at: Order | None, depth: int) -> set[str]:
        ident = name.value
        if ident in ("self", "cls") and scope is not None:
            owner = _owning_class(scope)
            if owner is not None:
                return {owner.full_name}
        if scope is not None:
            found = self.binding_value(ident, scope, at)
            if found is not None and found[1] is not None:
                return self._binding_names(found[0], found[1], depth)
            if _is_param(scope, ident):
                return set()  # a parameter with no annotation: its type is unknown
        if ident in self.facts.imports:
            return {self.facts.imports[ident]}
        local_fn = self.facts.find_function(ident)
        if local_fn is not None:
            return {local_fn.full_name}
        local_cls = self.facts.find_class(ident)
        if local_cls is not None:
            return {local_cls.full_name}
        module_binding = _latest(self.facts.module_bindings, ident, None)
        if module_binding is not None:
            return self._binding_names(module_binding, None, depth)
        if ident in BUILTIN_NAMES:
            return {f"builtins.{ident}"}
        return set()

    def _binding_names(self, binding: Binding, scope: FunctionInfo | None, depth: int) -> set[str]:
        value = binding.value
        if binding.kind == "import":
            return {binding.qualified} if binding.qualified else set()
        if binding.kind in ("for", "unpack"):
            return set()  # an element of an iterable, or one of several unpacked values: type unknown
        names = self._names(value, scope, None if binding.kind == "param-annotation" else binding.pos, depth + 1)
        if binding.kind == "assign" and isinstance(_strip_await(value), cst.Call) and self.project is not None:
            names = {self.project.return_type_of(n, near=self.facts) or n for n in names}
        return names

    def _follow_attribute_binding(self, qualified: str, depth: int) -> str:
        """``pkg.mod.Service.client`` where ``self.client = httpx.Client()``: becomes ``httpx.Client``."""
        if self.project is None:
            return qualified
        return self.project.attribute_type(qualified, depth, near=self.facts) or qualified


def _strip_await(expr: cst.BaseExpression) -> cst.BaseExpression:
    return expr.expression if isinstance(expr, cst.Await) else expr


def _latest(bindings: list[Binding], name: str, at: Order | None) -> Binding | None:
    best: Binding | None = None
    fallback: Binding | None = None
    for b in bindings:
        if b.name != name:
            continue
        if at is None or b.pos <= at:
            if best is None or b.pos >= best.pos:
                best = b
        elif fallback is None:
            fallback = b
    return best or fallback


def _owning_class(fn: FunctionInfo) -> ClassInfo | None:
    cur: FunctionInfo | None = fn
    while cur is not None:
        if cur.class_info is not None:
            return cur.class_info
        cur = cur.parent
    return None


def _is_param(fn: FunctionInfo, name: str) -> bool:
    cur: FunctionInfo | None = fn
    while cur is not None:
        if cur.param(name) is not None:
            return True
        cur = cur.parent
    return False
