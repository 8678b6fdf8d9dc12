"""The call sites of one module, indexed once: which calls spell a name, which call a local name.

"Who may call ``charge``?" is asked of the value-flow engine once per function it follows into, and
again after every question that met a cycle; each time, the modules that call something spelled
``charge`` were walked call by call (every call of every module, its called name worked out, its
callee checked against the function's locals). On a tree whose function names are common words the
walk was most of the scan (issue 35). Here each module's calls are bucketed once by the name they
spell, and the calls of local names (a parameter or a local variable called as a function) and of
container-storing methods (``x.append(v)``) listed once, in source order, so a question reads only
the calls that can answer it.
"""

from __future__ import annotations

import libcst as cst

from resume_audit.facts.model import CallInfo, FunctionInfo, ModuleFacts


def called_name(call: cst.Call) -> str | None:
    """The last component of the name ``call`` calls (``charge`` for ``tools.charge(...)``)."""
    func = call.func
    return func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None


def is_local(name: str, fn: FunctionInfo) -> bool:
    """A parameter or local variable of ``fn`` or a function it is nested in (not a global)."""
    cur: FunctionInfo | None = fn
    while cur is not None:
        if cur.param(name) is not None or any(b.name == name for b in cur.bindings):
            return True
        cur = cur.parent
    return False


#: the methods that put a value into a container (``d.update(...)``, ``xs.append(v)``...)
CONTAINER_STORES = frozenset({"update", "setdefault", "append", "extend", "add", "insert"})


class _ModuleCalls:
    """One module's calls by spelled name, and its calls of local names, both in source order."""

    def __init__(self, module: ModuleFacts) -> None:
        self.module = module  # held, so the id this index is filed under is not reused in the scan
        self.by_name: dict[str, list[CallInfo]] = {}
        self.of_locals: list[CallInfo] = []
        self.container_stores: list[CallInfo] = []
        for call in module.all_calls:
            name = called_name(call.node)
            if name is None:
                continue
            self.by_name.setdefault(name, []).append(call)
            if name in CONTAINER_STORES and isinstance(call.node.func, cst.Attribute):
                self.container_stores.append(call)
            if isinstance(call.node.func, cst.Name) and call.function is not None and is_local(name, call.function):
                self.of_locals.append(call)


class CallSites:
    """The call-site indexes of the modules one scan's questions read (built on first use)."""

    def __init__(self) -> None:
        self._modules: dict[int, _ModuleCalls] = {}

    def _of(self, module: ModuleFacts) -> _ModuleCalls:
        found = self._modules.get(id(module))
        if found is None:
            found = self._modules[id(module)] = _ModuleCalls(module)
        return found

    def named(self, module: ModuleFacts, name: str) -> list[CallInfo]:
        """The calls of ``module`` whose called name is ``name`` (``name(...)``, ``x.name(...)``)."""
        return self._of(module).by_name.get(name, [])

    def of_locals(self, module: ModuleFacts) -> list[CallInfo]:
        """The calls of ``module`` that call a plain name local to their function (``streamer(...)``
        where ``streamer`` is a parameter or a local variable)."""
        return self._of(module).of_locals

    def container_stores(self, module: ModuleFacts) -> list[CallInfo]:
        """The calls of ``module`` of a container-storing method (:data:`CONTAINER_STORES`) on an
        object (``x.append(v)``), in source order."""
        return self._of(module).container_stores
