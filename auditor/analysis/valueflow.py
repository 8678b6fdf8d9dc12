"""Values across function boundaries: what callers pass in, where a returned value goes.

A rule judging what a parameter holds (an id minted by the route that schedules the job) must
look at where it comes from: every call in the project that invokes the function, directly or
through a runner that is handed it with its arguments (``background_tasks.add_task(fn, a,
b)``), plus the parameter's default. And a rule judging a function's result must see where it
is used: its callers. Both are memoised per function.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from resume_audit.analysis.callgraph import CALLBACK_RUNNERS, CallGraph, call_words, called_name, may_call
from resume_audit.analysis.memo import Ledger
from resume_audit.facts.model import CallInfo, FunctionInfo, ModuleFacts


@dataclass(frozen=True)
class Argument:
    """A value a caller passes to a parameter (or the parameter's default, ``call`` None)."""

    value: cst.BaseExpression
    #: the scope ``value`` is evaluated in (None: module level)
    scope: FunctionInfo | None
    module: ModuleFacts
    call: CallInfo | None


class ValueFlow:
    """Arguments and callers of the project's functions."""

    def __init__(self, ledger: Ledger, calls: CallGraph) -> None:
        self._ledger = ledger
        self._calls = calls

    def arguments_for(self, fn: FunctionInfo, param: str) -> list[Argument]:
        """What callers pass to ``fn``'s parameter ``param``: every call in the project that
        invokes ``fn`` directly (positionally or by keyword) or hands it to a runner with its
        arguments (``background_tasks.add_task(fn, a, b)``, ``executor.submit(fn, a)``), plus
        the parameter's default. Memoised per function and parameter."""
        empty: list[Argument] = []
        return self._ledger.cached(
            "arguments_for", (id(fn), param), lambda: self._arguments_for(fn, param), in_progress=empty
        )

    def _arguments_for(self, fn: FunctionInfo, param: str) -> list[Argument]:
        names = fn.param_names()
        if param not in names:
            return []
        index = names.index(param) - (1 if fn.is_method and names and names[0] in ("self", "cls") else 0)
        out: list[Argument] = []
        p = fn.param(param)
        if p is not None and p.default is not None:
            out.append(Argument(p.default, fn.parent, fn.module, None))
        for module in self._calls.modules_calling(call_words(fn.name), fn.name):
            for call in module.all_calls:
                if not may_call(call.node, fn.name):
                    continue
                value = self._argument_at(call, module, fn, param, index)
                if value is not None:
                    out.append(Argument(value, call.function, module, call))
        return out

    def callers(self, fn: FunctionInfo) -> list[tuple[CallInfo, ModuleFacts]]:
        """Calls anywhere in the project that invoke ``fn`` directly (not through a runner):
        where a value ``fn`` returns is used. Memoised."""
        return self._ledger.cached(
            "callers",
            id(fn),
            lambda: [
                (call, module)
                for module in self._calls.modules_calling([f"{fn.name}("], fn.name)
                for call in module.all_calls
                if called_name(call.node) == fn.name and any(c is fn for c in self._calls.direct_callees(call, module))
            ],
        )

    def _argument_at(
        self, call: CallInfo, module: ModuleFacts, fn: FunctionInfo, param: str, index: int
    ) -> cst.BaseExpression | None:
        """The value ``call`` gives ``fn``'s parameter (``index`` counts positionals after ``self``),
        when the call invokes ``fn`` directly or hands it to a runner with its arguments."""
        direct = any(c is fn for c in self._calls.direct_callees(call, module))
        if not direct and fn not in self._calls.callback_targets(call, module):
            return None
        for arg in call.node.args:
            if arg.keyword is not None and arg.keyword.value == param:
                return arg.value
        positional = [a.value for a in call.node.args if a.keyword is None and not a.star]
        if not direct:  # ``add_task(fn, a, b)``: fn's arguments follow it
            at, _ = CALLBACK_RUNNERS.get(called_name(call.node) or "", (None, ""))
            if at is None:
                return None
            positional = positional[at + 1 :]
        return positional[index] if 0 <= index < len(positional) else None
