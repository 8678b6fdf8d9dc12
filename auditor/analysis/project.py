"""The scanned project as a whole: which module is which, and who calls whom.

Effects hide in helpers: ``from .tools.payments import charge`` inside a node
means the node charges a card. The project index maps dotted module names to
the parsed modules of the scan, resolves a qualified name to the function or
class it denotes (following re-exports), and answers reachability questions
("does this call reach an effect sink? by which path?") over the call graph,
memoised per question. It stops at the project boundary: anything not parsed
in this scan is opaque, and nothing is ever imported.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Generic, Iterable, TypeVar

import libcst as cst

from auditor.analysis.facts import CallInfo, ClassInfo, FunctionInfo, ModuleFacts
from auditor.analysis.resolve import Resolver

T = TypeVar("T")


def module_name_for(path: Path) -> tuple[str, bool]:
    """Dotted module name of ``path`` as Python would import it from the first
    ancestor directory that is not a package, and whether it is a package."""
    path = path.resolve()
    is_package = path.name == "__init__.py"
    parts: list[str] = [] if is_package else [path.stem]
    directory = path.parent
    while (directory / "__init__.py").exists() and directory.parent != directory:
        parts.append(directory.name)
        directory = directory.parent
    parts.reverse()
    return ".".join(parts), is_package


@dataclass(frozen=True)
class Reached(Generic[T]):
    """``calls[0]`` is in the function asked about; ``calls[-1]`` is the call classified as ``hit``."""

    calls: tuple[CallInfo, ...]
    modules: tuple[ModuleFacts, ...]
    hit: T

    @property
    def via_helper(self) -> bool:
        return len(self.calls) > 1


class Project:
    """All modules of one scan, indexed for cross-module resolution."""

    def __init__(self, modules: Iterable[ModuleFacts]) -> None:
        self.modules: list[ModuleFacts] = list(modules)
        self.by_name: dict[str, list[ModuleFacts]] = {}
        for m in self.modules:
            self.by_name.setdefault(m.module_name, []).append(m)
        self._resolvers: dict[int, Resolver] = {}
        self._reach_memo: dict[str, dict[int, Reached | None]] = {}

    def resolver(self, module: ModuleFacts) -> Resolver:
        r = self._resolvers.get(id(module))
        if r is None:
            r = self._resolvers[id(module)] = Resolver(module, self)
        return r

    # -- symbols ----------------------------------------------------------
    def lookup(self, qualified: str, *, near: ModuleFacts | None = None, depth: int = 0) -> FunctionInfo | ClassInfo | None:
        """The project function or class ``qualified`` names, following re-exports."""
        if depth > 5 or not qualified:
            return None
        parts = qualified.split(".")
        for i in range(len(parts) - 1, 0, -1):
            candidates = self.by_name.get(".".join(parts[:i]))
            if not candidates:
                continue
            module = _closest(candidates, near)
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
        found = self.lookup(qualified, near=near)
        if isinstance(found, ClassInfo):
            return found.methods.get("__init__")
        return found

    def callees(self, call: CallInfo, module: ModuleFacts) -> list[FunctionInfo]:
        """Project functions ``call`` may invoke (empty when it leaves the project)."""
        out: list[FunctionInfo] = []
        for name in self.resolver(module).call_names(call.node, call.function):
            fn = self.function(name, near=module)
            if fn is not None and fn not in out:
                out.append(fn)
        return out

    def return_type_of(self, qualified: str) -> str | None:
        """``make_client`` returning ``httpx.Client(...)`` has return type ``httpx.Client``."""
        fn = self.lookup(qualified)
        if not isinstance(fn, FunctionInfo):
            return None
        for ret in fn.returns:
            if isinstance(ret.value, cst.Call):
                names = self.resolver(fn.module).call_names(ret.value, fn)
                if names:
                    return sorted(names)[0]
        return None

    def attribute_type(self, qualified: str, depth: int) -> str | None:
        """``pkg.mod.Service.client`` -> ``httpx.Client`` when a method sets ``self.client = httpx.Client()``."""
        if depth > 4:
            return None
        owner, _, attr = qualified.rpartition(".")
        cls = self.lookup(owner)
        if not isinstance(cls, ClassInfo):
            return None
        resolver = self.resolver(cls.module)
        for binding in cls.attributes.get(attr, []):
            fn = cls.module.enclosing_function(binding.value)
            names = resolver._names(binding.value, fn, None, depth + 1)
            if names:
                return sorted(names)[0]
        for binding in cls.body_bindings:
            if binding.name == attr and binding.kind == "assign":
                names = resolver._names(binding.value, None, None, depth + 1)
                if names:
                    return sorted(names)[0]
        return None

    # -- reachability -----------------------------------------------------
    def reach(
        self,
        key: str,
        classify: Callable[[CallInfo, ModuleFacts], T | None],
        call: CallInfo,
        module: ModuleFacts,
    ) -> Reached[T] | None:
        """The first path from ``call`` to a call ``classify`` accepts, through project helpers.

        ``key`` names the question so answers are memoised per question across rules.
        """
        direct = classify(call, module)
        if direct is not None:
            return Reached((call,), (module,), direct)
        for callee in self.callees(call, module):
            inner = self.function_reaches(key, classify, callee)
            if inner is not None:
                return Reached((call, *inner.calls), (module, *inner.modules), inner.hit)
        return None

    def function_reaches(
        self, key: str, classify: Callable[[CallInfo, ModuleFacts], T | None], fn: FunctionInfo
    ) -> Reached[T] | None:
        """The first call in ``fn``'s body that reaches a hit (memoised; recursion-safe)."""
        memo = self._reach_memo.setdefault(key, {})
        ident = id(fn)
        if ident in memo:
            return memo[ident]
        memo[ident] = None  # in progress: a recursive cycle contributes nothing new
        result: Reached[T] | None = None
        for call in fn.calls:
            found = self.reach(key, classify, call, fn.module)
            if found is not None:
                result = found
                break
        memo[ident] = result
        return result


def _closest(candidates: list[ModuleFacts], near: ModuleFacts | None) -> ModuleFacts:
    """Several files can share a dotted name (two scripts called graph.py): prefer the importer's folder."""
    if near is None or len(candidates) == 1:
        return candidates[0]
    near_dir = near.path.parent
    for c in candidates:
        if c.path.parent == near_dir:
            return c
    best = max(candidates, key=lambda c: len(_common_prefix(c.path.parts, near_dir.parts)))
    return best


def _common_prefix(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    out = []
    for x, y in zip(a, b):
        if x != y:
            break
        out.append(x)
    return tuple(out)
