"""The framework-neutral interface between the sweep and one agent framework.

The sweep's drivers (run to park, crash at a point, recover, fork, race) speak
only this interface; everything a framework does differently -- how a graph is
built around the sweep's store, how a run parks and is resumed, how durable
state is read back, where the persistence operations are intercepted -- lives
in one adapter module per framework (``adapters/langgraph.py`` today; CrewAI
Flows, LlamaIndex Workflows and pydantic-graph adapters slot in beside it).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any

from ..killpoints import EventLog
from ..ledger import Ledger


@dataclass(frozen=True)
class PendingInterrupt:
    """A run parked waiting for an answer."""

    id: str
    node: str | None
    value: Any  # JSON-able rendering of the interrupt's payload


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


@dataclass
class Instruments:
    """The per-process probes an adapter wires into the framework."""

    ledger: Ledger
    events: EventLog
    #: filled by the adapter: task id -> (node, step), for naming writes and blaming invalid state
    task_nodes: dict[str, tuple[str, int | None]] = field(default_factory=dict)
    #: saver operations completed in this process (for the report's statistics)
    saver_ops: int = 0


class Session(abc.ABC):
    """One graph bound to one durable store and one thread, inside one child process."""

    @abc.abstractmethod
    def start(self, input: Any) -> Outcome:
        """Invoke the graph with its input."""

    @abc.abstractmethod
    def answer(self, answers: list[tuple[PendingInterrupt, Any]], *, checkpoint_id: str | None = None, form: str = "auto") -> Outcome:
        """Resume parked interrupts with values (``form``: "bare", "map" or "auto")."""

    @abc.abstractmethod
    def resume_raw(self, value: Any) -> Outcome:
        """Deliver a resume without looking at the thread first (stray and racing deliveries)."""

    @abc.abstractmethod
    def proceed(self) -> Outcome:
        """Continue from the durable state without new input (crash recovery)."""

    @abc.abstractmethod
    def durable_state(self) -> DurableState:
        """Read the thread's durable state back."""

    @abc.abstractmethod
    def head_checkpoint_id(self) -> str | None:
        """The thread's head checkpoint (the interrupt checkpoint while parked)."""

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
        """"pydantic", "typeddict", "dataclass", "other" or None when the graph declares no state schema."""

    @abc.abstractmethod
    def node_locations(self, module: Any = None) -> dict[str, SourceLocation]:
        """Definition sites of the graph's nodes (and of units of work defined in ``module``), for locating findings."""

    @abc.abstractmethod
    def uses_sweep_store(self) -> bool:
        """Whether the graph persists through the sweep's instrumented store."""

    def close(self) -> None:
        """Release connections."""


class Adapter(abc.ABC):
    """Everything framework-specific the sweep needs."""

    name: str

    @abc.abstractmethod
    def preload_modules(self) -> list[str]:
        """Modules the fork server imports once, so children start warm."""

    @abc.abstractmethod
    def prepare_process(self, instruments: Instruments) -> None:
        """Install process-wide hooks; runs in the child before any user code is imported."""

    @abc.abstractmethod
    def open(self, obj: Any, store: StoreSettings, instruments: Instruments, thread_id: str, config: dict[str, Any]) -> Session:
        """Build the user's graph around the sweep's store and return a session on ``thread_id``."""

    @abc.abstractmethod
    def effect_context(self) -> tuple[str | None, int | None, str | None]:
        """(node, step, task id) of the code currently running, for effect records."""
