"""Wrapping the user's ``--effect`` functions so every call lands in the ledger.

A wrapped effect, per call: performs the real call (or, with ``--stub``,
returns the stub value instead), records one autocommitted ledger INSERT, then
emits the named event "after effect <name> in node <node>" -- which is where a
crash cell may SIGKILL the process -- and only then returns to the caller.

Calls carrying an idempotency key (an ``idempotency_key=`` argument or an
``Idempotency-Key`` header) are counted once per key, as the provider would
deduplicate them; that is how a correctly keyed effect comes out clean.

Every reference to the original function in loaded modules is replaced, so a
graph module that did ``from tools import charge_card`` sees the wrapper too.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import os
import re
import sys
from typing import Any, Callable, Iterator

from resume_audit.dynamic.child.stub_values import typed_value
from resume_audit.dynamic.effect_spec import MADE_UP_NOTE, NO_STUB, TYPED_STUB, EffectSpec, EffectSpecError, MadeUp
from resume_audit.dynamic.killpoints import EventLog
from resume_audit.dynamic.ledger import Ledger

__all__ = ["NO_STUB", "TYPED_STUB", "EffectSpec", "EffectSpecError", "idempotency_key", "install_effects"]

#: where an effect was called from: (node, step, task id)
ContextProvider = Callable[[], tuple[str | None, int | None, str | None]]

#: the ledger note of an effect fired while the program was being built (its factory ran)
BUILD_EFFECT_NOTE = "build-effect"


class _BuildWindow:
    """Whether the program is being built (the adapter calls its factory, compiles it): an effect fired then
    belongs to no node and to no run -- every process that builds the program fires it once, the uninterrupted
    run as much as a restarted worker. It is stubbed and noted, never counted nor made a kill point (a crash
    "after" it, re-run by the restart, would be reported as a node ``?`` that ran again)."""

    open = False

    @contextlib.contextmanager
    def building(self) -> Iterator[None]:
        self.open = True
        try:
            yield
        finally:
            self.open = False


BUILD = _BuildWindow()


#: a keyword argument carrying an idempotency key, and a header carrying one: what the static stage
#: accepts as a key (``resume_audit.analysis.keys``), so a call it calls keyed is counted once per key here
_KEY_KEYWORD = re.compile(r"idempot|dedup|client_?(request_?)?token", re.IGNORECASE)
_KEY_HEADER = re.compile(r"^(x-)?idempotency[-_ ]?key$", re.IGNORECASE)


def idempotency_key(kwargs: dict[str, Any]) -> str | None:
    for name, value in kwargs.items():
        if _KEY_KEYWORD.search(name) and value and isinstance(value, (str, int)):
            return str(value)
    for field in ("headers", "extra_headers"):
        headers = kwargs.get(field)
        if isinstance(headers, dict):
            for k, v in headers.items():
                if _KEY_HEADER.match(str(k)) and v:
                    return str(v)
    return None


def _resolve(spec: EffectSpec) -> tuple[Any, str, Any]:
    """(owner object, attribute name, raw attribute) for ``spec``."""
    try:
        owner: Any = importlib.import_module(spec.module)
    except Exception as exc:
        raise EffectSpecError(f"--effect {spec.module}:{spec.attr}: cannot import {spec.module!r}: {exc}") from exc
    *parents, last = spec.attr.split(".")
    for part in parents:
        try:
            owner = getattr(owner, part)
        except AttributeError as exc:
            raise EffectSpecError(f"--effect {spec.module}:{spec.attr}: {part!r} not found") from exc
    try:
        raw = inspect.getattr_static(owner, last)
    except AttributeError as exc:
        raise EffectSpecError(f"--effect {spec.module}:{spec.attr}: {last!r} not found in {spec.module}") from exc
    func = raw.__func__ if isinstance(raw, (classmethod, staticmethod)) else raw
    if not callable(func) and _tool_functions(raw) == []:
        raise EffectSpecError(
            f"--effect {spec.module}:{spec.attr} is not callable (nor a LangChain tool with a function)"
        )
    return owner, last, raw


def _tool_functions(obj: Any) -> list[str] | None:
    """For a LangChain tool object (``@tool``, ``StructuredTool.from_function``, ``Tool``, a
    ``BaseTool`` subclass): the attributes holding its functions (``func`` and/or ``coroutine``,
    or the subclass's ``_run`` / ``_arun``), which ``invoke``/``ainvoke`` call -- wrapping them
    records every call however the tool is run. None for anything else."""
    if not (hasattr(obj, "invoke") and hasattr(obj, "name")):
        return None
    if hasattr(obj, "func") or hasattr(obj, "coroutine"):
        return [a for a in ("func", "coroutine") if callable(getattr(obj, a, None))]
    # a BaseTool subclass instance: run() / arun() call its own _run / _arun
    overridden = [
        a for a in ("_run", "_arun") if callable(getattr(obj, a, None)) and _defined_below_base_tool(type(obj), a)
    ]
    return overridden or None


def _defined_below_base_tool(cls: type, name: str) -> bool:
    """Whether ``name`` is the tool class's own (not ``BaseTool``'s default that raises NotImplementedError)."""
    for klass in cls.__mro__:
        if name in vars(klass):
            return klass.__name__ != "BaseTool"
    return False


def install_effects(
    specs: list[EffectSpec],
    ledger: Ledger,
    events: EventLog,
    context: ContextProvider,
    stub: Any = NO_STUB,
    stubs: dict[str, Any] | None = None,
    reads: list[EffectSpec] | None = None,
) -> dict[str, str]:
    """Wrap every effect in place; returns {display name: source location} for reports.
    ``stubs`` ("module:function" -> value) overrides ``stub`` for one effect. ``reads`` (``stub-reads``)
    are stubbed the same way but never recorded: no ledger row, no kill point -- a search or a lookup
    the sandbox would refuse, which is not an effect."""
    replaced: dict[int, Any] = {}
    locations: dict[str, str] = {}
    effects = [(spec, False) for spec in specs]
    effects += [(spec, True) for spec in reads or () if spec not in specs]
    for spec, read in effects:
        effect_stub = (stubs or {}).get(f"{spec.module}:{spec.attr}", stub)
        if read and effect_stub is NO_STUB:
            effect_stub = TYPED_STUB  # a read is stubbed whatever the effects do: that is what naming it asks
        owner, attr, raw = _resolve(spec)
        tool_attrs = _tool_functions(raw)
        if tool_attrs:
            # a LangChain tool: wrap its function(s) on the tool object every graph holds
            originals = [getattr(raw, name) for name in tool_attrs]
            for name, inner in zip(tool_attrs, originals):
                object.__setattr__(
                    raw,
                    name,
                    _make_wrapper(
                        inner,
                        spec,
                        ledger,
                        events,
                        context,
                        effect_stub,
                        definition=_source_location(originals[0]),
                        read=read,
                    ),
                )
                replaced[id(inner)] = (inner, getattr(raw, name))
            locations[spec.display] = _source_location(originals[0])
            continue
        func = raw.__func__ if isinstance(raw, (classmethod, staticmethod)) else raw
        wrapper = _make_wrapper(func, spec, ledger, events, context, effect_stub, read=read)
        new_raw = type(raw)(wrapper) if isinstance(raw, (classmethod, staticmethod)) else wrapper
        setattr(owner, attr, new_raw)
        replaced[id(func)] = (func, wrapper)
        locations[spec.display] = _source_location(func)
    _rebind_references(replaced)
    return locations


def _source_location(func: Callable[..., Any]) -> str:
    """``file:line`` of a function's definition, "" when Python cannot tell (a builtin, a C function)."""
    try:
        return f"{inspect.getsourcefile(func)}:{inspect.getsourcelines(func)[1]}"
    except (OSError, TypeError):
        return ""


def _user_site(caller: Any, skip: tuple[str, ...]) -> str | None:
    """``file:line`` of the innermost frame from ``caller`` outwards that is the user's code."""
    frame = caller
    while frame is not None and frame.f_code.co_filename.startswith(skip):
        frame = frame.f_back
    return f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else None


def _stub_value(func: Callable[..., Any], spec: EffectSpec, stub: Any) -> tuple[Any, MadeUp | None]:
    """What the stub of ``func`` returns: the given value, or with :data:`TYPED_STUB` a typed one, and what
    of it was made up (noted in the ledger at the first call, so a finding resting on it can be told from
    the program's own)."""
    if stub is not TYPED_STUB:
        return stub, None
    return typed_value(func, spec.module, spec.attr, spec.display)


def _make_wrapper(
    func: Callable[..., Any],
    spec: EffectSpec,
    ledger: Ledger,
    events: EventLog,
    context: ContextProvider,
    stub: Any,
    definition: str | None = None,
    read: bool = False,
) -> Callable[..., Any]:
    """The recorder around one effect. The call site recorded is the user's line that called it; an
    effect only ever called from library code (a tool run by ``ToolNode``) is sited at ``definition``.
    A ``read`` is only stubbed."""
    name = spec.display
    skip = _library_roots() + _own_roots() if definition else ()
    made_up: list[MadeUp] = []
    if stub is not NO_STUB:
        stub, first = _stub_value(func, spec, stub)
        made_up += [first] if first is not None else []

    def record(kwargs: dict[str, Any], caller: Any) -> None:
        if made_up:
            ledger.note(MADE_UP_NOTE, made_up.pop().to_note())
        if read:
            return
        node, step, task = context()
        site = f"{caller.f_code.co_filename}:{caller.f_lineno}" if caller is not None else None
        if definition and (caller is None or caller.f_code.co_filename.startswith(skip)):
            site = _user_site(caller, skip) or definition
        if BUILD.open and node is None:
            ledger.note(
                BUILD_EFFECT_NOTE,
                f"{name} fired while the program was built, outside any node"
                f"{' (' + site + ')' if site else ''}: stubbed, not counted, no kill point",
            )
            return
        ledger.record_effect(name, node, step, task, idempotency_key(kwargs), site)
        events.emit("effect", f"effect {name} in node {node or '?'}", step=step, node=node)

    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            caller = sys._getframe(1)
            result = stub if stub is not NO_STUB else await func(*args, **kwargs)
            record(kwargs, caller)
            return result

        async_wrapper.__resume_audit_effect__ = name  # type: ignore[attr-defined]
        return async_wrapper

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        caller = sys._getframe(1)
        result = stub if stub is not NO_STUB else func(*args, **kwargs)
        record(kwargs, caller)
        return result

    wrapper.__resume_audit_effect__ = name  # type: ignore[attr-defined]
    return wrapper


def _library_roots() -> tuple[str, ...]:
    import site
    import sysconfig

    roots = {sysconfig.get_paths().get("stdlib", ""), sysconfig.get_paths().get("platstdlib", "")}
    roots.update(site.getsitepackages() if hasattr(site, "getsitepackages") else [])
    return tuple(r for r in roots if r)


def _own_roots() -> tuple[str, ...]:
    """This package's own directories (the sweep's child code calls the graph)."""
    top = sys.modules[__name__.partition(".")[0]]  # the top-level package: loaded before any module of it
    here = os.path.dirname(os.path.abspath(__file__))
    return (here + os.sep, os.path.dirname(os.path.abspath(str(top.__file__))) + os.sep)


def _rebind_references(replaced: dict[int, tuple[Any, Any]]) -> None:
    """Point module-level aliases of the originals (``from x import f``) at the wrappers.

    Only the user's own modules are scanned (not the standard library or
    installed packages, which cannot have imported a user's effect by name and
    would make every sweep child pay for walking a few thousand namespaces).
    """
    if not replaced:
        return
    libraries = _library_roots()
    owners = {getattr(func, "__module__", None) for func, _ in replaced.values()}
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None) or ""
        if name not in owners and (not file or file.startswith(libraries)):
            continue
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict):
            continue
        for key, value in list(namespace.items()):
            hit = replaced.get(id(value))
            if hit is not None and hit[0] is value:
                namespace[key] = hit[1]
