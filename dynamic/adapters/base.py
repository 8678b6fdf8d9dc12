"""The framework-neutral interface between the sweep and one agent framework.

The sweep's drivers (run to park, crash at a point, recover, fork, race) speak
only this interface; everything a framework does differently -- how a program
is built around the sweep's store, how a run parks and is resumed, how durable
state is read back, where the persistence operations are intercepted -- lives
in one adapter per framework (``resume_audit.frameworks.<name>.adapter``),
registered in ``adapters/__init__.py``.

Vocabulary, chosen so it fits every framework rather than LangGraph's:

- a *unit* is what a framework runs as one piece of work and may re-run: a
  LangGraph node, a CrewAI flow method, a LlamaIndex step, a pydantic-graph node;
- a *park* is a run waiting for a human answer (an ``interrupt()``, an
  ``InputRequiredEvent``, a pydantic-graph node the run stops before);
- a *fork point* is an opaque token for "the durable state at this park"
  (LangGraph's interrupt checkpoint id, a serialized LlamaIndex context, a copy
  of a pydantic-graph persistence file) that ``answer(..., at=token)`` resumes
  from, so the fork probe can answer one park twice;
- a *restore* is what a fresh interpreter does to continue (``proceed``).
"""

from __future__ import annotations

import abc
import inspect
import os
from dataclasses import dataclass, field
from typing import Any

from resume_audit.codec import encode, omit_default
from resume_audit.dynamic.killpoints import EventLog
from resume_audit.dynamic.ledger import Ledger

#: how a run parked: a dynamic ``interrupt()`` (answered with a value) or a static breakpoint
#: (``compile(interrupt_before=...)`` / ``interrupt_after``: answered by continuing, no value)
DYNAMIC, BREAKPOINT_BEFORE, BREAKPOINT_AFTER = "interrupt", "before", "after"


@dataclass(frozen=True)
class PendingInterrupt:
    """A run parked waiting for an answer (a pause point: the sweep calls each one a gate)."""

    id: str
    #: the innermost unit that parked; a subgraph's node is ``parent/child`` at any depth
    node: str | None
    value: Any  # JSON-able rendering of the interrupt's payload
    kind: str = DYNAMIC

    @property
    def takes_value(self) -> bool:
        """Whether answering consumes a ``--resume`` value (a static breakpoint is only continued)."""
        return self.kind == DYNAMIC

    def describe(self) -> str:
        if self.kind == DYNAMIC:
            return f"interrupt() in `{self.node}`"
        return f"static breakpoint interrupt_{self.kind} ({'before' if self.kind == BREAKPOINT_BEFORE else 'after a node, before'} `{self.node}`)"


@dataclass(frozen=True)
class Outcome:
    """What one invocation ended in: parked at interrupts, or done."""

    interrupts: tuple[PendingInterrupt, ...] = ()

    @property
    def parked(self) -> bool:
        return bool(self.interrupts)


@dataclass(frozen=True)
class DurableState:
    """The thread's durable state as a fresh process finds it after a crash."""

    exists: bool
    step: int | None = None
    interrupts: tuple[PendingInterrupt, ...] = ()
    next: tuple[str, ...] = ()
    #: ids of tasks whose own output writes are durable on the head checkpoint
    completed_tasks: frozenset[str] = frozenset()


@dataclass(frozen=True)
class PlaneDescription:
    """The resume plane and store a session exercises, in the words of its framework's documentation."""

    #: the mechanism ("checkpointer", "@persist (class-level)", ...)
    plane: str | None = omit_default(None)
    store: str | None = omit_default(None)
    #: the program promises durable state (a restore after a crash is expected to find some)
    durable: bool = omit_default(False)
    #: how a fresh interpreter continues (the documented restore)
    restore: str | None = omit_default(None)
    #: what the stray probe delivers after completion
    stray: str | None = omit_default(None)

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = encode(self)
        return data


@dataclass(frozen=True)
class SourceLocation:
    """Where a node (or the target itself) is defined; lines and columns are 1-based."""

    file: str
    start_line: int
    start_col: int
    end_line: int
    end_col: int


@dataclass(frozen=True)
class InvalidState:
    """A persisted checkpoint field that fails the state schema."""

    field: str
    error: str
    value: Any
    step: int | None
    writers: tuple[str, ...]


@dataclass(frozen=True)
class StoreSettings:
    """Where the cell's durable state lives and how the instrumented saver orders writes."""

    backend: str  # "sqlite" | "postgres" | "memory"
    location: str = ""  # SQLite file, or PostgreSQL DSN
    schema: str | None = None  # PostgreSQL schema isolating this cell
    write_order: str = "natural"  # "natural" | "deferred" (each put_writes after the following put)
    #: a directory shared by every process of the cell, for file-based stores (JSON checkpoints, snapshot files)
    directory: str = ""


@dataclass
class Instruments:
    """The per-process probes an adapter wires into the framework."""

    ledger: Ledger
    events: EventLog
    #: filled by the adapter: task id -> (node, step), for naming writes and blaming invalid state
    task_nodes: dict[str, tuple[str, int | None]] = field(default_factory=dict)
    #: saver operations completed in this process (for the report's statistics)
    saver_ops: int = 0
    #: filled by the adapter: interrupt id -> the innermost unit whose code raised it (a task the
    #: framework's own state shows only as its caller)
    park_units: dict[str, str] = field(default_factory=dict)


class Session(abc.ABC):
    """One graph bound to one durable store and one thread, inside one child process."""

    @abc.abstractmethod
    def start(self, input: Any) -> Outcome:
        """Invoke the graph with its input."""

    #: fork probe forms this framework has (each one fork cell); LangGraph has two wire forms
    fork_forms: tuple[str, ...] = ("restore",)
    #: whether the stray probe is "restore the same durable state again after a successful restore"
    #: (frameworks without parks, e.g. CrewAI) rather than "resume again after completion"
    stray_after_restore: bool = False

    @abc.abstractmethod
    def answer(self, answers: list[tuple[PendingInterrupt, Any]], *, at: Any = None, form: str = "auto") -> Outcome:
        """Resume parked interrupts with values; ``at`` is a :meth:`fork_point` token to resume from."""

    @abc.abstractmethod
    def resume_raw(self, value: Any) -> Outcome:
        """Deliver a resume without looking at the thread first (stray and racing deliveries)."""

    @abc.abstractmethod
    def proceed(self) -> Outcome:
        """Continue from the durable state without new input (crash recovery)."""

    def describe(self) -> PlaneDescription:
        """The plane and store this session exercises, for reports and the conformance matrix."""
        return PlaneDescription()

    def recovery_label(self, state: DurableState) -> str | None:
        """How a fresh interpreter continues from ``state`` (None: the sweep's LangGraph-style wording)."""
        return None

    @abc.abstractmethod
    def durable_state(self) -> DurableState:
        """Read the thread's durable state back."""

    @abc.abstractmethod
    def fork_point(self) -> Any:
        """An opaque token for the durable state of the current park (resumable by ``answer(..., at=token)``)."""

    @abc.abstractmethod
    def final_state(self) -> tuple[Any, int | None]:
        """(JSON-able state values, step of the head checkpoint)."""

    @abc.abstractmethod
    def checkpoint_count(self) -> int:
        """How many checkpoints the thread has."""

    @abc.abstractmethod
    def audit_checkpoints(self) -> list[InvalidState]:
        """Validate every persisted checkpoint of the thread against the state schema."""

    @abc.abstractmethod
    def schema_kind(self) -> str | None:
        """ "pydantic", "typeddict", "dataclass", "other" or None when the graph declares no state schema."""

    @abc.abstractmethod
    def node_locations(self, module: Any = None) -> dict[str, SourceLocation]:
        """Definition sites of the graph's nodes (and of units of work defined in ``module``), for locating findings."""

    def step_on_thread_clock(self, node: str) -> bool:
        """Whether ``node``'s recorded step counts on the same clock as ``DurableState.step``.

        A LangGraph subgraph's nodes count their own steps, so a durable
        parent step says nothing about them.
        """
        return True

    @abc.abstractmethod
    def uses_sweep_store(self) -> bool:
        """Whether the graph persists through the sweep's instrumented store."""

    def close(self) -> None:
        """Release connections."""

    def example_input(self) -> Any:
        """An input built from the program's input schema (:mod:`resume_audit.dynamic.child.synthesis`); None: unknown."""
        return None


class Adapter(abc.ABC):
    """Everything framework-specific the sweep needs."""

    name: str
    #: distributions whose versions a report names
    distributions: tuple[str, ...] = ()
    #: whether ``open`` wants a no-argument factory itself (to call per run) rather than the object it returns
    keeps_factory: bool = False

    @abc.abstractmethod
    def preload_modules(self) -> list[str]:
        """Modules the fork server imports once, so children start warm."""

    @abc.abstractmethod
    def accepts(self, obj: Any) -> bool:
        """Whether ``obj`` (an imported target) is a program of this framework.

        Must not import the framework when it is not already imported: a target
        of another framework never loaded it.
        """

    @abc.abstractmethod
    def prepare_process(self, instruments: Instruments, store: StoreSettings) -> None:
        """Install process-wide hooks; runs in the child, before user code is imported when the framework is known."""

    @abc.abstractmethod
    def open(
        self, obj: Any, store: StoreSettings, instruments: Instruments, thread_id: str, config: dict[str, Any]
    ) -> Session:
        """Build the user's graph around the sweep's store and return a session on ``thread_id``."""

    @abc.abstractmethod
    def effect_context(self) -> tuple[str | None, int | None, str | None]:
        """(node, step, task id) of the code currently running, for effect records."""

    def schedule_escaped(self) -> bool:
        """Whether this process's schedule control had to give up waiting (reported, never a verdict)."""
        return False

    def building(self) -> Any:
        """A context manager around calling a target factory only to learn what it builds (quiet by default)."""
        import contextlib

        return contextlib.nullcontext()


class ShapeError(ValueError):
    """The target is not a program of the framework in a shape the sweep can drive."""


def function_location(func: Any) -> SourceLocation | None:
    """Where ``func`` is defined: its ``def`` line to its last line (the decorator's first
    line when no ``def`` is found in its source)."""
    return _definition_location(inspect.unwrap(func), ("def ", "async def "), fallback=True)


def is_library_file(path: str) -> bool:
    """Whether ``path`` belongs to an installed package or the standard library, not the user's project
    (a finding located there -- LangGraph's own ``ToolNode`` -- tells the user nothing)."""
    import sysconfig

    real = os.path.realpath(path)
    if any(part in ("site-packages", "dist-packages") for part in real.split(os.sep)):
        return True
    stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
    return real.startswith(stdlib + os.sep)


def module_source_lines(module: Any) -> tuple[str, list[str]] | None:
    """(file, lines) of a loaded module's source, read from disk; None when it has none."""
    file = getattr(module, "__file__", None)
    if not file:
        return None
    try:
        with open(file, encoding="utf-8") as fh:
            return file, fh.read().splitlines()
    except OSError:
        return None


def registration_location(module: Any, call: str, name: str) -> SourceLocation | None:
    """The line of ``module``'s source that registers ``name`` (``add_node("tools", ...)``)."""
    import re

    source = module_source_lines(module)
    if source is None:
        return None
    file, lines = source
    pattern = re.compile(rf"{re.escape(call)}\(\s*[\"']{re.escape(name)}[\"']")
    for n, line in enumerate(lines, start=1):
        m = pattern.search(line)
        if m:
            return SourceLocation(file, n, m.start() + 1, n, len(line) + 1)
    return None


def class_location(cls: type) -> SourceLocation | None:
    """Where a class is defined (for units that are classes: pydantic-graph nodes)."""
    return _definition_location(cls, ("class ",), fallback=False)


def _definition_location(obj: Any, keywords: tuple[str, ...], *, fallback: bool) -> SourceLocation | None:
    """From the line starting with one of ``keywords`` (past decorators) to the last line."""
    try:
        file = inspect.getsourcefile(obj)
        lines, start = inspect.getsourcelines(obj)
    except (OSError, TypeError):
        return None
    if not file:
        return None
    last = lines[-1].rstrip("\r\n")
    end = (start + len(lines) - 1, len(last) + 1)
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        if stripped.startswith(keywords):
            return SourceLocation(file, start + i, len(line) - len(stripped) + 1, *end)
    return SourceLocation(file, start, 1, *end) if fallback else None


def is_class_or_instance_of(obj: Any, module: str, name: str) -> bool:
    """``obj`` is the class ``module.name``, a subclass, or an instance -- answered without
    importing ``module`` when it is not loaded yet (then no target of that framework was)."""
    import sys

    if module not in sys.modules:
        return False
    cls = getattr(sys.modules[module], name)
    return (isinstance(obj, type) and issubclass(obj, cls)) or isinstance(obj, cls)


def required_parameters(func: Any) -> list[inspect.Parameter] | None:
    """The parameters a factory needs and has no default for (None when its signature is unknown)."""
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return None
    return [
        p
        for p in sig.parameters.values()
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]


def with_arguments(target: Any, kwargs: dict[str, Any]) -> Any:
    """A factory target with the keyword arguments the project's own callers pass bound (``audit`` finds
    them statically: ``interrupt_before=["approve"]``); anything else as it is. The bound factory keeps
    its other parameters, so the checkpointer is still passed as before."""
    if not kwargs or not callable(target) or isinstance(target, type):
        return target
    import functools

    return functools.update_wrapper(functools.partial(target, **kwargs), target)


def settled(value: Any) -> Any:
    """What an ``async def`` factory returns, awaited: a coroutine is run to completion on a loop of its
    own (left open: what the factory built may keep a reference to it); anything else as it is."""
    if not inspect.isawaitable(value):
        return value
    import asyncio

    async def wait() -> Any:
        return await value

    return asyncio.new_event_loop().run_until_complete(wait())
