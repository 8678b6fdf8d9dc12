"""Qualified names to the project's own functions and classes, and the types they give.

``from .tools.payments import charge`` makes ``charge`` mean ``app.tools.payments.charge``
(:mod:`resume_audit.analysis.resolve`); this module finds that function in the project,
following re-exports, parsing only the file the import denotes. It also answers the two type
questions the resolver asks while following a value: what a project function returns
(``make_client() -> httpx.Client``) and what a class's attribute holds (``self.client =
httpx.Client()``).
"""

from __future__ import annotations

import libcst as cst

from resume_audit.analysis.modules import ModuleIndex, closest
from resume_audit.analysis.queries import ProjectQueries
from resume_audit.analysis.resolve import Resolver
from resume_audit.facts.model import ClassInfo, FunctionInfo, ModuleFacts

#: annotations that say nothing about the instance returned
_NOT_TYPES = frozenset(
    {
        "builtins.None",
        "typing.Any",
        "builtins.object",
        "builtins.dict",
        "builtins.list",
        "builtins.str",
        "builtins.int",
        "builtins.bool",
        "builtins.float",
        "builtins.bytes",
        "builtins.tuple",
    }
)


class Symbols:
    """The project's functions and classes by qualified name; a resolver per module.
    ``host``: the project the resolvers ask (memo, types)."""

    def __init__(self, index: ModuleIndex, host: ProjectQueries) -> None:
        self._index = index
        self._host = host
        self._resolvers: dict[int, Resolver] = {}

    def resolver(self, module: ModuleFacts) -> Resolver:
        r = self._resolvers.get(id(module))
        if r is None:
            r = self._resolvers[id(module)] = Resolver(module, self._host)
        return r

    def lookup(
        self, qualified: str, *, near: ModuleFacts | None = None, depth: int = 0
    ) -> FunctionInfo | ClassInfo | None:
        """The project function or class ``qualified`` names, following re-exports."""
        if depth > 5 or not qualified:
            return None
        index = self._index
        parts = qualified.split(".")
        for i in range(len(parts) - 1, 0, -1):
            entries = index.entries_on_path(".".join(parts[:i]), near.path if near is not None else None)
            if not entries:
                continue
            module = index.load(closest(entries, near))  # only the file the import denotes is parsed
            if module is None:  # that one cannot be parsed: the nearest of the others that can
                loaded = [m for m in (index.load(e) for e in entries) if m is not None]
                if not loaded:
                    continue
                module = closest(loaded, near)
            rest = parts[i:]
            found = module.find_function(".".join(rest)) or module.find_class(".".join(rest))
            if found is not None:
                return found
            if rest[0] in module.imports:
                return self.lookup(".".join([module.imports[rest[0]], *rest[1:]]), near=module, depth=depth + 1)
            # a method of a class: Class.method where the method is inherited is not followed
            return None
        return None

    def function(self, qualified: str, near: ModuleFacts | None = None) -> FunctionInfo | None:
        """The project function ``qualified`` names (a class: its ``__init__``)."""
        found = self.lookup(qualified, near=near)
        if isinstance(found, ClassInfo):
            return found.methods.get("__init__")
        return found

    def return_type_of(self, qualified: str, near: ModuleFacts | None = None) -> str | None:
        """``make_client`` returning ``httpx.Client(...)`` has return type ``httpx.Client``.
        ``near``: the module asking (a vendored ``logging/`` is not the ``logging`` it imports
        unless it is on that module's path, as :meth:`lookup` decides)."""
        fn = self.lookup(qualified, near=near)
        if not isinstance(fn, FunctionInfo):
            return None
        annotation = fn.node.returns.annotation if fn.node.returns is not None else None
        if annotation is not None and not isinstance(annotation, cst.SimpleString):
            # a lazy getter ``def get_client() -> GitHubClient`` returns a module global set
            # elsewhere: the annotation says what it is
            names = self.resolver(fn.module).names(annotation, fn.parent)
            names = {n for n in names if n not in _NOT_TYPES}
            if names:
                return sorted(names)[0]
        for ret in fn.returns:
            if isinstance(ret.value, cst.Call):
                names = self.resolver(fn.module).call_names(ret.value, fn)
                if names:
                    return sorted(names)[0]
        return None

    def attribute_type(self, qualified: str, depth: int, near: ModuleFacts | None = None) -> str | None:
        """``pkg.mod.Service.client`` -> ``httpx.Client`` when a method sets ``self.client = httpx.Client()``
        (``near``: the module asking, as for :meth:`return_type_of`). ``depth``: how deep the
        resolution asking is already (its bound also stops cycles through attribute types)."""
        if depth > 4:
            return None
        owner, _, attr = qualified.rpartition(".")
        cls = self.lookup(owner, near=near)
        if not isinstance(cls, ClassInfo):
            return None
        resolver = self.resolver(cls.module)
        for binding in cls.attributes.get(attr, []):
            fn = cls.module.enclosing_function(binding.value)
            names = resolver.names(binding.value, fn, depth=depth + 1)
            if names:
                return sorted(names)[0]
        for binding in cls.body_bindings:
            if binding.name == attr and binding.kind == "assign":
                names = resolver.names(binding.value, None, depth=depth + 1)
                if names:
                    return sorted(names)[0]
        return None
