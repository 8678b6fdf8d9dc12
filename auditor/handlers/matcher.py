"""The one matcher of the handler catalog: which functions of a module a catalog shape registers.

Every shape is matched by qualified name, never by text: the decorator, the registering callable and
the base class are resolved through the project's imports and the value-flow engine
(:mod:`resume_audit.analysis.flow.engine`), so ``dp = Dispatcher()`` in ``bot/loader.py`` and
``@dp.message(...)`` in ``bot/handlers.py`` is an aiogram handler, and ``@dp.message`` on a ``dp``
of one's own is not. The function a registration call receives is resolved the same way: a name,
an attribute (``self.on_click``), a ``functools.partial``, a lambda (the project functions it calls),
or a list of them (``functions=[a, b]``).
"""

from __future__ import annotations

import fnmatch
import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Iterator

import libcst as cst

from resume_audit.analysis.flow.engine import flow_of
from resume_audit.analysis.flow.values import Bound, Function, Lambda, Partial, Value
from resume_audit.facts.model import ClassInfo, FunctionInfo, ModuleFacts
from resume_audit.facts.syntax import iter_subtree_calls, keyword, positional
from resume_audit.handlers.catalog import HandlerShape, Registration, TargetSet
from resume_audit.handlers.known.queues import ARQ_SETTINGS

if TYPE_CHECKING:
    from resume_audit.analysis.project import Project


@dataclass(frozen=True)
class Match:
    """A function a catalog shape registers, and where."""

    function: FunctionInfo
    shape: HandlerShape
    #: the decorator, registration call, class name, ``def`` name or first statement that registers it
    node: cst.CSTNode
    #: the module ``node`` is in (a ``urls.py`` registers a view of ``views.py``)
    module: ModuleFacts
    #: the qualified name that matched one of the shape's targets (None: a script or a signature)
    matched: str | None = None


class Shapes:
    """A catalog compiled for matching: one lookup per registration form."""

    def __init__(self, shapes: Iterable[HandlerShape]) -> None:
        self.all = tuple(shapes)
        by_form = {form: [s for s in self.all if s.registration is form] for form in Registration}
        self.decorators = TargetSet(by_form[Registration.DECORATOR])
        self.calls = TargetSet(by_form[Registration.CALL])
        self.bases = TargetSet(by_form[Registration.SUBCLASS_METHOD])
        self.scripts = by_form[Registration.MODULE_SCRIPT]
        self.signatures = by_form[Registration.SIGNATURE]
        #: the last names a decorator or a registering callable must have (``message``, ``*CommandHandler``)
        self._decorator_last = _last_names(by_form[Registration.DECORATOR])
        self._call_last = _last_names(by_form[Registration.CALL])
        #: the last names of registering *methods* (``rq.Queue.enqueue``, ``gradio.*.click``): only their receiver
        #: needs the value-flow engine; a function or class (``aiohttp.web.get``, ``CommandHandler``) is named by imports
        self._method_last = _last_names(by_form[Registration.CALL], methods_only=True)
        #: text a module must hold for any shape to match in it
        self.words = tuple(dict.fromkeys(w for s in self.all for w in s.words))

    def decorator_candidate(self, expr: cst.BaseExpression) -> bool:
        return _last_name(expr) is None or bool(self._decorator_last.match(_last_name(expr) or ""))

    def call_candidate(self, expr: cst.BaseExpression) -> bool:
        name = _last_name(expr)
        return name is not None and bool(self._call_last.match(name))

    def method_candidate(self, expr: cst.BaseExpression) -> bool:
        name = _last_name(expr)
        return isinstance(expr, cst.Attribute) and name is not None and bool(self._method_last.match(name))


def _last_names(shapes: Iterable[HandlerShape], methods_only: bool = False) -> re.Pattern[str]:
    patterns = {t.rsplit(".", 1)[-1] for s in shapes for t in s.targets if not methods_only or _is_method(t)}
    return _alternatives(tuple(sorted(patterns)))


@functools.lru_cache(maxsize=64)
def _alternatives(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One regex matching any of the ``fnmatch`` patterns (built once per set of patterns)."""
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns) or "(?!)")


def _is_method(target: str) -> bool:
    """Is ``target`` a method of objects of a type (a class-like or glob segment before its last name)?
    ``rq.Queue.enqueue``, ``gradio.*.click``, ``aiohttp.web.Application.router.add_post``: yes;
    ``aiohttp.web.get``, ``telegram.ext.*CommandHandler``: no."""
    owners = target.split(".")[:-1]
    return any(part[:1].isupper() or "*" in part for part in owners[1:])


def _last_name(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.Call):
        expr = expr.func
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    if isinstance(expr, cst.Name):
        return expr.value
    return None


class Matcher:
    """Matches a catalog against the modules of one project."""

    def __init__(self, project: "Project", shapes: Shapes) -> None:
        self.project = project
        self.shapes = shapes
        self.flow = flow_of(project)

    # -- names ---------------------------------------------------------------------------------
    def qualified_names(
        self, expr: cst.BaseExpression, scope: FunctionInfo | None, module: ModuleFacts, follow_values: bool = True
    ) -> set[str]:
        """What ``expr`` is, by qualified name: its import-resolved names, the type of a module variable
        it names, and (``follow_values``) every type the value-flow engine finds for it
        (``aiogram.Router.message`` for ``router.message`` where ``router = Router()`` anywhere in the project)."""
        out: set[str] = set()
        for name in self.project.resolver(module).names(expr, scope):
            out.add(name)
            followed = module_variable_type(name, self.project)
            if followed is not None:
                out.add(followed)
        if not follow_values:
            return out
        for value in self.flow.values(expr, scope, module):
            typed = self.flow.type_name(value)
            if typed:
                out.add(typed)
        return out

    def functions(
        self, expr: cst.BaseExpression | None, scope: FunctionInfo | None, module: ModuleFacts
    ) -> list[FunctionInfo]:
        """The project functions ``expr`` may be when a framework calls it (the handler a registration receives)."""
        if expr is None:
            return []
        if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
            return [fn for el in expr.elements for fn in self.functions(el.value, scope, module)]
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "as_view":
            return []  # a class-based view: its verb methods are matched from the class
        out: list[FunctionInfo] = []
        for value in self.flow.values(expr, scope, module):
            for fn in self._called_by(value):
                if all(fn is not f for f in out):
                    out.append(fn)
        if not out:
            for name in self.project.resolver(module).names(expr, scope):
                named = self.project.function(name, near=module)
                if named is not None:
                    out.append(named)
                    break
        return [fn for fn in out if fn.name != "__init__"]

    def _called_by(self, value: Value) -> list[FunctionInfo]:
        if isinstance(value, (Function, Bound)):
            return [value.fn]
        if isinstance(value, Partial):
            return self._called_by(value.target)
        if isinstance(value, Lambda):
            # ``btn.click(lambda x: respond(x, cfg))``: the lambda runs what it calls
            out: list[FunctionInfo] = []
            for node in iter_subtree_calls(value.node.body):
                info = value.module.call_info(node)
                if info is not None:
                    out.extend(self.flow.callees(info))
            return out
        return []

    # -- the forms -----------------------------------------------------------------------------
    def matches(self, module: ModuleFacts) -> Iterator[Match]:
        """Every registration of ``module`` the catalog knows, in source order within each form."""
        shapes = self.shapes
        for shape in shapes.scripts:
            if module.uses_any(shape.packages):
                body = module.tree.body
                word = shape.packages[0].split(".")[0]
                first = next((st for st in body if word in module.code(st)), body[0] if body else module.tree)
                yield Match(module.script_body, shape, first, module)
        for fn in module.functions:
            yield from self._decorated(fn, module)
            if fn.parent is None and fn.class_info is None:
                for shape in shapes.signatures:
                    if fnmatch.fnmatchcase(fn.name, shape.name) and tuple(fn.param_names()) == shape.parameters:
                        yield Match(fn, shape, fn.node.name, module)
        for cls in module.classes:
            yield from self._subclass(cls, module)
        for call in module.all_calls:
            if shapes.call_candidate(call.node.func):
                yield from self._registration(call.node, call.function, module)

    def _decorated(self, fn: FunctionInfo, module: ModuleFacts) -> Iterator[Match]:
        for dec in fn.decorators:
            if not self.shapes.decorator_candidate(dec.target):
                continue
            for shape, name in self.shapes.decorators.match(
                sorted(self.qualified_names(dec.target, fn.parent, module))
            ):
                yield Match(fn, shape, dec.node, module, name)
                return

    def _subclass(self, cls: ClassInfo, module: ModuleFacts) -> Iterator[Match]:
        names = set(self.flow.external_bases(cls))
        for base in cls.node.bases:
            names |= self.project.resolver(module).names(base.value, None)
        for shape, name in self.shapes.bases.match(sorted(names)):
            for method in shape.methods:
                fn = cls.methods.get(method)
                if fn is not None:
                    yield Match(fn, shape, fn.node.name, module, name)
        if cls.name == ARQ_SETTINGS[0] and module.uses_any((ARQ_SETTINGS[2],)):
            yield from self._arq_settings(cls, module)

    def _arq_settings(self, cls: ClassInfo, module: ModuleFacts) -> Iterator[Match]:
        shape = next((s for s in self.shapes.all if s.framework == "arq" and s.keyword == ARQ_SETTINGS[1]), None)
        if shape is None:
            return
        for binding in cls.body_bindings:
            if binding.name == ARQ_SETTINGS[1]:
                for fn in self.functions(binding.value, None, module):
                    yield Match(fn, shape, binding.value, module, f"{cls.name}.{ARQ_SETTINGS[1]}")

    def _registration(self, call: cst.Call, scope: FunctionInfo | None, module: ModuleFacts) -> Iterator[Match]:
        seen: set[int] = set()
        names = self.qualified_names(call.func, scope, module, follow_values=False)
        matched = self.shapes.calls.match(sorted(names))
        if not matched and self.shapes.method_candidate(call.func):
            # a method of an object made elsewhere (``queue.enqueue(fn)``): what the receiver is takes the engine
            matched = self.shapes.calls.match(sorted(self.qualified_names(call.func, scope, module)))
        for shape, name in matched:
            target = _argument(call, shape.position, shape.keyword)
            for fn in self.functions(target, scope, module):
                if id(fn) not in seen:
                    seen.add(id(fn))
                    yield Match(fn, shape, call, module, name)


def module_variable_type(qualified: str, project: "Project") -> str | None:
    """``pkg.main.app`` (a module-level ``app = FastAPI()`` in another project module)
    -> ``fastapi.FastAPI``. ``pkg.main.app.post`` -> ``fastapi.FastAPI.post``."""
    parts = qualified.split(".")
    for i in range(len(parts) - 1, 0, -1):
        modules = project.by_name.get(".".join(parts[:i]))
        if not modules:
            continue
        module = modules[0]
        var, rest = parts[i], parts[i + 1 :]
        binding = None
        for b in module.module_bindings:
            if b.name == var and b.kind == "assign":
                binding = b
        if binding is None:
            return None
        value = binding.value.expression if isinstance(binding.value, cst.Await) else binding.value
        if not isinstance(value, cst.Call):
            return None
        names = project.resolver(module).call_names(value, None)
        if not names:
            return None
        return ".".join([sorted(names)[0], *rest])
    return None


def _argument(call: cst.Call, position: int | None, name: str | None) -> cst.BaseExpression | None:
    arg = (keyword(call, name) if name is not None else None) or (
        positional(call, position) if position is not None else None
    )
    return arg.value if arg is not None else None
