"""Who calls whom across the project, and what a call reaches through helpers.

Effects hide in helpers: ``from .tools.payments import charge`` inside a node means the node
charges a card. The call graph answers "which project functions may this call run?" -- by its
callee's qualified name, through runners that call a function they are handed
(``executor.submit(send, ...)``), and through the framework knowledge plugged in as
:class:`CalleeHooks` (a LangChain tool object's ``invoke`` runs the tool's function) -- and
"does this call reach a hit, and by which path?", memoised per question. It stops at the
project boundary: anything not parsed in this scan is opaque.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, TypeVar

import libcst as cst

from resume_audit.analysis.memo import Ledger
from resume_audit.analysis.modules import ModuleIndex
from resume_audit.analysis.queries import MAX_HELPER_DEPTH, NameResolver, ProjectQueries, Reached
from resume_audit.analysis.summary_values import ProjectSummaries
from resume_audit.analysis.symbols import Symbols
from resume_audit.facts.model import CallInfo, FunctionInfo, ModuleFacts
from resume_audit.facts.summaries import SummaryKind, register

T = TypeVar("T")

#: runners that call a function they are handed: method or function name -> (position of the
#: function among the positional arguments, its keyword)
CALLBACK_RUNNERS: dict[str, tuple[int | None, str]] = {
    "run_in_executor": (1, "func"),
    "submit": (0, "fn"),
    "to_thread": (0, "func"),
    "add_task": (0, "func"),
    "call_soon": (0, "callback"),
    "call_soon_threadsafe": (0, "callback"),
    "call_later": (1, "callback"),
    "run_sync": (0, "func"),
    "start_soon": (0, "func"),
    "Thread": (None, "target"),
    "Process": (None, "target"),
    "Timer": (1, "function"),
    "add_job": (0, "func"),
    "apply_async": (0, "func"),
}


def call_words(name: str) -> list[str]:
    """Text a module must hold to call ``name`` or hand it to a runner: the byte search that
    keeps a question about a common name (``run``) from parsing every file that says "run"."""
    return [f"{name}(", f"{name},", f"{name})", f"={name}"]


def called_name(call: cst.Call) -> str | None:
    """The last component of the name ``call`` calls (``charge`` for ``tools.charge(...)``)."""
    func = call.func
    return func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None


def may_call(call: cst.Call, name: str) -> bool:
    """Syntactically, can ``call`` invoke a function called ``name``: by that name, or as a
    runner (``add_task``, ``submit``...) handed something spelled ``name``?"""
    called = called_name(call)
    if called == name:
        return True
    if called not in CALLBACK_RUNNERS:
        return False
    for arg in call.args:
        value = arg.value
        if isinstance(value, cst.Call):  # functools.partial(fn, ...)
            value = value.args[0].value if value.args else value
        if (isinstance(value, cst.Name) and value.value == name) or (
            isinstance(value, cst.Attribute) and value.attr.value == name
        ):
            return True
    return False


def _called_names(project: object, module: ModuleFacts) -> list[str]:
    """Every name ``module`` calls, or hands to a runner (:func:`may_call` is true for a name
    exactly when it is listed)."""
    names: set[str] = set()
    for info in module.all_calls:
        called = called_name(info.node)
        if called is None:
            continue
        names.add(called)
        if called not in CALLBACK_RUNNERS:
            continue
        for arg in info.node.args:
            value = arg.value
            if isinstance(value, cst.Call):
                value = value.args[0].value if value.args else value
            if isinstance(value, cst.Name):
                names.add(value.value)
            elif isinstance(value, cst.Attribute):
                names.add(value.attr.value)
    return sorted(names)


#: which names a module calls: who may call ``change_answer`` without parsing every module that says so
CALLED_NAMES: SummaryKind[object] = register(SummaryKind("called-names", _called_names, []))


def _never(call: cst.Call, callee: FunctionInfo, resolver: NameResolver, scope: FunctionInfo | None) -> bool:
    return False


def _not_a_dispatcher(
    call: cst.Call, callee: FunctionInfo, scope: FunctionInfo | None, module: ModuleFacts, project: ProjectQueries
) -> list[FunctionInfo] | None:
    return None


def _runs_nothing(
    call: cst.Call, scope: FunctionInfo | None, module: ModuleFacts, project: ProjectQueries
) -> list[FunctionInfo]:
    return []


@dataclass(frozen=True)
class CalleeHooks:
    """Knowledge of calls that run other code than their callee's name says, plugged in by the
    project (:mod:`resume_audit.analysis.project`), so the call graph imports no framework."""

    #: a call of project function ``callee`` that cannot reach the callee's hits (a GraphQL
    #: helper handed a query, not a mutation)
    skips: Callable[[cst.Call, FunctionInfo, NameResolver, FunctionInfo | None], bool] = _never
    #: the functions a call of a dispatching helper runs in its stead (tools looked up by the
    #: name passed in), or None when ``callee`` dispatches nothing
    dispatches: Callable[
        [cst.Call, FunctionInfo, FunctionInfo | None, ModuleFacts, ProjectQueries], list[FunctionInfo] | None
    ] = _not_a_dispatcher
    #: what a call that names no project function runs all the same (a LangChain tool object's
    #: ``invoke``); asked only when nothing else was found
    objects: Callable[[cst.Call, FunctionInfo | None, ModuleFacts, ProjectQueries], list[FunctionInfo]] = _runs_nothing


class CallGraph:
    """Callees, callers' modules and reachability over the project's calls. ``host``: the
    project, handed to the hooks."""

    def __init__(
        self,
        ledger: Ledger,
        index: ModuleIndex,
        summaries: ProjectSummaries[Any],
        symbols: Symbols,
        host: ProjectQueries,
        hooks: CalleeHooks = CalleeHooks(),
    ) -> None:
        self._ledger = ledger
        self._index = index
        self._summaries = summaries
        self._symbols = symbols
        self._host = host
        self._hooks = hooks

    def callees(self, call: CallInfo, module: ModuleFacts) -> list[FunctionInfo]:
        """Project functions ``call`` may invoke (empty when it leaves the project).

        A call of a tool-dispatching helper (``run_tool(name, args)`` looking the tool up by
        ``name``) stands for the tools it can dispatch to with this call's name."""
        hooks = self._hooks
        out: list[FunctionInfo] = []
        resolver = self._symbols.resolver(module)
        for name in resolver.call_names(call.node, call.function):
            fn = self._symbols.function(name, near=module)
            if fn is None or hooks.skips(call.node, fn, resolver, call.function):
                continue
            targets = hooks.dispatches(call.node, fn, call.function, module, self._host)
            for target in [fn] if targets is None else targets:
                if target not in out:
                    out.append(target)
        for fn in self.callback_targets(call, module):
            if fn not in out:
                out.append(fn)
        if not out:
            # an object called (``tool.invoke(args)``, a registry lookup) whose call runs a
            # project function: the hooks know which
            out = list(
                self._ledger.cached(
                    "tool-callees", id(call.node), lambda: hooks.objects(call.node, call.function, module, self._host)
                )
            )
        return out

    def callback_targets(self, call: CallInfo, module: ModuleFacts) -> list[FunctionInfo]:
        """Functions handed to a runner that calls them: ``loop.run_in_executor(None, send, ...)``,
        ``executor.submit(send, ...)``, ``asyncio.to_thread(send, ...)``,
        ``background_tasks.add_task(send, ...)``, ``threading.Thread(target=send)``: the call
        runs them (now or soon), so their effects are the call's."""
        spec = CALLBACK_RUNNERS.get(called_name(call.node) or "")
        if spec is None:
            return []
        index, keyword_name = spec
        target = None
        for arg in call.node.args:
            if arg.keyword is not None and arg.keyword.value == keyword_name:
                target = arg.value
        if target is None and index is not None:
            positional = [a.value for a in call.node.args if a.keyword is None and not a.star]
            target = positional[index] if len(positional) > index else None
        if target is None:
            return []
        resolver = self._symbols.resolver(module)
        if isinstance(target, cst.Call):  # functools.partial(send, ...)
            names = resolver.call_names(target, call.function)
            if any(n.endswith("partial") for n in names) and target.args:
                target = target.args[0].value
        out = []
        for name in resolver.names(target, call.function):
            fn = self._symbols.function(name, near=module)
            if fn is not None:
                out.append(fn)
        return out

    def direct_callees(self, call: CallInfo, module: ModuleFacts) -> list[FunctionInfo]:
        """Project functions ``call`` invokes by name (no runner, no hook)."""
        out = []
        for name in self._symbols.resolver(module).call_names(call.node, call.function):
            found = self._symbols.function(name, near=module)
            if found is not None:
                out.append(found)
        return out

    def modules_calling(self, words: Iterable[str], name: str) -> list[ModuleFacts]:
        """Parsed modules that may call a function named ``name`` (by that name, or handing it to
        a runner): those whose text holds one of ``words``, narrowed by their summary of called
        names. A module that only defines or mentions the name is neither parsed nor a
        dependency: its summary says it calls no such function, and stays so through edits
        that call nothing new of that name."""
        out = []
        for entry, calls in self._summaries.over(CALLED_NAMES.name, list(words), name):
            if not calls:
                continue
            m = self._index.load(entry)
            if m is not None:
                out.append(m)
        return out

    def reach(
        self,
        key: str,
        classify: Callable[[CallInfo, ModuleFacts], T | None],
        call: CallInfo,
        module: ModuleFacts,
        budget: int = MAX_HELPER_DEPTH,
    ) -> Reached[T] | None:
        """The first path from ``call`` to a call ``classify`` accepts, through at most
        ``budget`` levels of project helpers.

        ``key`` names the question so answers are memoised per question across rules.
        The depth bound keeps a scan from parsing a whole monorepo through chains of
        helpers; effects hidden deeper than that are not followed (documented).
        """
        direct = classify(call, module)
        if direct is not None:
            return Reached((call,), (module,), direct)
        if budget <= 0:
            return None
        for callee in self.callees(call, module):
            inner = self.function_reaches(key, classify, callee, budget - 1)
            if inner is not None:
                return Reached((call, *inner.calls), (module, *inner.modules), inner.hit)
        return None

    def function_reaches(
        self,
        key: str,
        classify: Callable[[CallInfo, ModuleFacts], T | None],
        fn: FunctionInfo,
        budget: int = MAX_HELPER_DEPTH,
    ) -> Reached[T] | None:
        """The first call in ``fn``'s body that reaches a hit (memoised; recursion-safe)."""

        def first_reaching() -> Reached[T] | None:
            for call in fn.calls:
                found = self.reach(key, classify, call, fn.module, budget)
                if found is not None:
                    return found
            return None

        return self._ledger.cached(f"reaches:{key}", (id(fn), budget), first_reaching, in_progress=None)
