"""CrewAI Flows adapter: every piece of CrewAI knowledge the dynamic stage needs.

Checked against the installed crewai 1.15.30 source:

- ``Flow`` (``crewai.flow.flow``, defined in ``crewai.flow.runtime``) is a
  pydantic model; a flow *method* is the unit of work. ``_execute_method``
  runs each one with ``current_flow_method_name`` set
  (``crewai.flow.flow_context``), sync methods in a thread.
- Two durable planes, chosen by the flow:
  - **checkpointing**: ``Flow(checkpoint=CheckpointConfig(...) | True)``.
    ``crewai.state.checkpoint_listener`` writes a checkpoint from a sync
    event-bus handler (``_do_checkpoint``) whenever an event named in
    ``on_events`` fires (default ``["task_completed"]``, which a flow of
    plain methods never emits). The provider (``JsonProvider`` /
    ``SqliteProvider``) returns each checkpoint's location. Restore is
    ``Flow.from_checkpoint(CheckpointConfig(restore_from=path)).kickoff()``
    or ``Flow().kickoff(from_checkpoint=cfg)`` (``apply_checkpoint`` in
    ``crewai/state/checkpoint_config.py``, which also sets the restored
    flow's ``checkpoint`` to ``cfg`` minus ``restore_from``).
  - **@persist** (class- or method-level): ``_persist_method_completion`` calls
    ``PersistenceDecorator.persist_state`` after each persisted method;
    resume is ``kickoff(inputs={"id": <state id>})``, which reloads state only
    when the flow itself has a persistence backend (class level).
- Sync event handlers run on a ``ThreadPoolExecutor``; ``emit`` returns their
  future.

Schedule control: the adapter waits for every event's handlers before the
emitter goes on -- the schedule where checkpoint storage keeps up. It is one
legal schedule of the stock bus, the same every run, so a kill point names the
same durable prefix each time (and the ``flow_created`` checkpoint a restore
writes lands before the restore reads its completed methods, as it does
whenever the handler thread is scheduled promptly).

Stores: every checkpoint location is redirected into the cell's store
directory, and every ``SQLiteFlowPersistence`` (the default one, made through
``set_flow_persistence_factory``, and explicit ones found on the class and its
methods) points at one database there, so a fresh interpreter finds what the
crashed one wrote. CrewAI never calls an LLM or the network here: fixtures use
plain methods, and telemetry/tracing are off (:mod:`resume_audit.dynamic.child.env`).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import uuid
from types import MethodType
from typing import Any, Callable, Iterator, cast

from resume_audit.dynamic.adapters.base import (
    Adapter,
    DurableState,
    Instruments,
    InvalidState,
    Outcome,
    PendingInterrupt,
    PlaneDescription,
    Session,
    ShapeError,
    SourceLocation,
    StoreSettings,
    function_location,
    is_class_or_instance_of,
    required_parameters,
)
from resume_audit.dynamic.child.validity import describe_schema, validate_values
from resume_audit.dynamic.killpoints import InjectedCrash
from resume_audit.dynamic.values import to_jsonable

PRELOAD = [
    "crewai",
    "crewai.flow.flow",
    "crewai.flow.persistence",
    "crewai.state.checkpoint_config",
    "crewai.state.checkpoint_listener",
    "crewai.state.provider.json_provider",
    "crewai.state.provider.sqlite_provider",
    # every Flow builds a Memory whose storage imports lancedb (~9 s): once in the fork server, not per child
    "crewai.memory.unified_memory",
    "crewai.memory.storage.lancedb_storage",
]

#: the process's instruments (one sweep child drives one flow)
_INSTRUMENTS: Instruments | None = None
_STORE: StoreSettings | None = None
_PATCHED = False
_RUNS: dict[str, int] = {}
#: while set, events are not dispatched (building a flow only to learn its resume plane)
_QUIET = threading.Event()


def _store_dir() -> str:
    assert _STORE is not None
    path = _STORE.directory or os.path.join(os.path.dirname(_STORE.location) or ".", "store")
    os.makedirs(path, exist_ok=True)
    return path


def _flow_db() -> str:
    return os.path.join(_store_dir(), "flow_states.db")


def _journal_path() -> str:
    return os.path.join(_store_dir(), "checkpoints.journal")


def _journal() -> list[str]:
    try:
        with open(_journal_path(), encoding="utf-8") as fh:
            return [line.rstrip("\n") for line in fh if line.strip()]
    except FileNotFoundError:
        return []


def _emit(kind: str, what: str, node: str | None) -> None:
    if _INSTRUMENTS is None:
        return
    _INSTRUMENTS.saver_ops += 1
    _INSTRUMENTS.events.emit(kind, what, node=node)


def _on_handler_thread() -> bool:
    from crewai.events.event_bus import crewai_event_bus

    current = threading.current_thread()
    return current.name.startswith("CrewAISyncHandler") or current is getattr(crewai_event_bus, "_loop_thread", None)


def _patch() -> None:
    """Instrument CrewAI's persistence paths and unit starts, once per process."""
    global _PATCHED
    if _PATCHED:
        return
    from crewai.events.event_bus import CrewAIEventsBus
    from crewai.flow import runtime as flow_runtime
    from crewai.flow.persistence.decorators import PersistenceDecorator
    from crewai.state import checkpoint_listener
    from crewai.state.provider.json_provider import JsonProvider
    from crewai.state.provider.sqlite_provider import SqliteProvider

    # 1. every event's handlers complete before the emitter goes on (schedule control)
    original_emit = CrewAIEventsBus.emit

    def emit(self: Any, source: Any, event: Any) -> Any:
        if _QUIET.is_set():
            return None
        future = original_emit(self, source, event)
        if future is not None and not _on_handler_thread():
            try:
                future.result(timeout=60)
            except Exception:
                pass
        return future

    CrewAIEventsBus.emit = emit  # type: ignore[method-assign]

    # 2. checkpoint writes: journal the location, then the kill point
    for provider_cls in (JsonProvider, SqliteProvider):
        original = provider_cls.checkpoint

        def checkpoint(
            self: Any,
            data: Any,
            location: Any,
            *,
            parent_id: Any = None,
            branch: str = "main",
            __original: Any = original,
        ) -> Any:
            result = __original(self, data, location, parent_id=parent_id, branch=branch)
            if os.path.realpath(str(result).split("#")[0]).startswith(os.path.realpath(_store_dir()) + os.sep):
                with open(_journal_path(), "a", encoding="utf-8") as fh:
                    fh.write(result + "\n")
                    fh.flush()
                    os.fsync(fh.fileno())
            return result

        provider_cls.checkpoint = checkpoint  # type: ignore[method-assign]

    original_do = checkpoint_listener._do_checkpoint

    def do_checkpoint(state: Any, cfg: Any, event: Any = None) -> None:
        original_do(state, cfg, event)
        trigger = getattr(event, "type", None) or "manual"
        method = getattr(event, "method_name", None)
        try:
            _emit("persist", f"checkpoint on {trigger}" + (f" of method {method}" if method else ""), method)
        except InjectedCrash as exc:  # raised on a handler thread, which the listener would swallow
            if _INSTRUMENTS is not None:
                _INSTRUMENTS.events.defer(exc)

    checkpoint_listener._do_checkpoint = do_checkpoint

    # 2b. every CheckpointConfig made in this process stores into the cell (the flow_created checkpoint
    #     is written inside the Flow constructor, before any instance could be redirected)
    from crewai.state.checkpoint_config import CheckpointConfig

    original_init = CheckpointConfig.__init__

    def config_init(self: Any, **data: Any) -> None:
        original_init(self, **data)
        if self.restore_from is None:
            object.__setattr__(self, "location", _store_location(self))

    CheckpointConfig.__init__ = config_init  # type: ignore[method-assign]

    # 3. @persist saves (class- and method-level both go through persist_state)
    original_persist = cast(
        MethodType, PersistenceDecorator.persist_state
    ).__func__  # a classmethod, bound to the class

    def persist_state(
        cls: Any, flow_instance: Any, method_name: Any, persistence_instance: Any, verbose: bool = False
    ) -> None:
        original_persist(cls, flow_instance, method_name, persistence_instance, verbose)
        _emit("persist", f"save_state of method {method_name}", str(method_name))

    PersistenceDecorator.persist_state = classmethod(persist_state)  # type: ignore[assignment]

    # 4. unit starts: record the method run, raise a crash deferred from a handler thread
    original_execute = flow_runtime.Flow._execute_method

    async def execute_method(self: Any, method_name: Any, method: Any, *args: Any, **kwargs: Any) -> Any:
        if _INSTRUMENTS is not None:
            _INSTRUMENTS.events.raise_deferred()
            name = str(method_name)
            _RUNS[name] = _RUNS.get(name, 0) + 1
            _INSTRUMENTS.task_nodes[name] = (name, None)
            _INSTRUMENTS.ledger.record_node_run(name, None, name, _RUNS[name])
        return await original_execute(self, method_name, method, *args, **kwargs)

    flow_runtime.Flow._execute_method = execute_method  # type: ignore[method-assign]
    _PATCHED = True


def _store_location(cfg: Any) -> str:
    from crewai.state.provider.sqlite_provider import SqliteProvider

    return os.path.join(_store_dir(), "checkpoints.db" if isinstance(cfg.provider, SqliteProvider) else "checkpoints")


def _fresh_runtime() -> None:
    """Forget every flow this process built so far: a checkpoint serializes all registered entities, and
    ``Flow.from_checkpoint`` restores the first one of the class -- the app's process holds only its flow."""
    from crewai.events.event_bus import crewai_event_bus

    crewai_event_bus.reset_runtime_state()


def _redirect_persistence(flow_cls: type) -> list[Any]:
    """Point every SQLiteFlowPersistence the flow class (or its methods) was decorated with at the store."""
    from crewai.flow.persistence.sqlite import SQLiteFlowPersistence

    found: list[Any] = []
    holders = [flow_cls] + [
        v for k in dir(flow_cls) if not k.startswith("__") for v in [getattr(flow_cls, k, None)] if callable(v)
    ]
    for holder in holders:
        config = getattr(holder, "__flow_persistence_config__", None)
        backend = getattr(config, "persistence", None)
        if backend is None or any(b is backend for b in found):
            continue
        found.append(backend)
        if isinstance(backend, SQLiteFlowPersistence) and os.path.realpath(backend.db_path) != os.path.realpath(
            _flow_db()
        ):
            backend.db_path = _flow_db()
            backend._lock_name = f"sqlite:{os.path.realpath(backend.db_path)}"
            backend.init_db()
    return found


class CrewAISession(Session):
    """One flow class bound to the cell's store; each invocation builds a fresh flow instance."""

    stray_after_restore = True

    def __init__(
        self, make: Callable[[], Any], instruments: Instruments, thread_id: str, config: dict[str, Any], how: str
    ) -> None:
        self.make = make
        self.instruments = instruments
        self.how = how
        self.restore_mode = str(config.get("restore", "from_checkpoint"))
        if self.restore_mode not in ("from_checkpoint", "kickoff"):
            raise ShapeError("--config restore must be 'from_checkpoint' or 'kickoff'")
        self.flow_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"resume-audit:{thread_id}"))
        _QUIET.set()
        try:
            probe = make()
        finally:
            _QUIET.clear()
        _fresh_runtime()
        self.flow_cls = type(probe)
        self.persist_backends = _redirect_persistence(self.flow_cls)
        self.cfg = probe.checkpoint if self._is_config(probe.checkpoint) else None
        self.plane = "checkpoint" if self.cfg is not None else ("persist" if self._persists(probe) else "none")
        self.flow: Any = probe
        self.restored_from: str | None = None

    # -- building ----------------------------------------------------------------------
    @staticmethod
    def _is_config(value: Any) -> bool:
        from crewai.state.checkpoint_config import CheckpointConfig

        return isinstance(value, CheckpointConfig)

    def _persists(self, flow: Any) -> bool:
        definition = flow._definition
        return bool(
            (definition.persist and definition.persist.enabled)
            or any(m.persist is not None and m.persist.enabled for m in definition.methods.values())
        )

    def _redirected(self, cfg: Any) -> Any:
        return cfg.model_copy(update={"location": _store_location(cfg)})

    def _new(self) -> Any:
        _fresh_runtime()
        flow = self.make()
        if self._is_config(flow.checkpoint):
            flow.checkpoint = self._redirected(flow.checkpoint)
        return flow

    def _finish(self) -> Outcome:
        from crewai.events.event_bus import crewai_event_bus

        crewai_event_bus.flush()
        self.instruments.events.raise_deferred()
        return Outcome()

    def _inputs(self, input: Any) -> dict[str, Any] | None:
        data = dict(input) if isinstance(input, dict) else {}
        if self.plane == "persist":
            data["id"] = self.flow_id
        return data or None

    # -- invoking ----------------------------------------------------------------------
    def start(self, input: Any) -> Outcome:
        self.flow = self._new()
        try:
            self.flow.kickoff(inputs=self._inputs(input))
        finally:
            self.instruments.events.raise_deferred()
        return self._finish()

    def _restore(self, location: str) -> Outcome:
        from crewai.state.checkpoint_config import CheckpointConfig

        self.restored_from = location
        _fresh_runtime()
        if self.restore_mode == "kickoff":
            self.flow = self._new()
            self.flow.kickoff(from_checkpoint=self._redirected(self.cfg).model_copy(update={"restore_from": location}))
        else:
            self.flow = self.flow_cls.from_checkpoint(CheckpointConfig(restore_from=location))
            self.flow.kickoff()
        return self._finish()

    def proceed(self) -> Outcome:
        if self.plane == "checkpoint":
            journal = _journal()
            if not journal:
                raise RuntimeError("no checkpoint was written: nothing to restore")
            return self._restore(journal[-1])
        self.flow = self._new()
        self.flow.kickoff(inputs=self._inputs({}))
        return self._finish()

    def resume_raw(self, value: Any) -> Outcome:
        """The stray delivery: restore the same checkpoint (or re-kick the same id) once more."""
        if self.plane == "checkpoint":
            journal = _journal()
            target = self.restored_from or (journal[-1] if journal else None)
            if target is None:
                raise RuntimeError("no checkpoint was written: nothing to restore")
            return self._restore(target)
        return self.proceed()

    def answer(self, answers: list[tuple[PendingInterrupt, Any]], *, at: Any = None, form: str = "auto") -> Outcome:
        raise RuntimeError("a CrewAI flow of plain methods never parks")

    def fork_point(self) -> Any:
        return None

    def recovery_label(self, state: DurableState) -> str | None:
        if self.plane == "checkpoint":
            return str(self.describe().restore) + " of the latest checkpoint"
        if self.plane == "persist":
            return 'kickoff(inputs={"id": ...}) with the persisted id'
        return "kickoff() again (nothing was persisted)"

    def describe(self) -> PlaneDescription:
        if self.plane == "checkpoint":
            cfg = self.cfg
            assert cfg is not None  # the checkpoint plane is chosen only with a CheckpointConfig
            return PlaneDescription(
                plane=f"CheckpointConfig(on_events={list(cfg.on_events)})",
                durable=True,
                store=type(cfg.provider).__name__,
                restore=(
                    "Flow.from_checkpoint(cfg).kickoff()"
                    if self.restore_mode == "from_checkpoint"
                    else "Flow().kickoff(from_checkpoint=cfg)"
                ),
                stray="second restore of the same checkpoint",
            )
        if self.plane == "persist":
            level = "class" if self.flow._definition.persist else "method"
            return PlaneDescription(
                plane=f"@persist ({level}-level)",
                store="SQLiteFlowPersistence",
                durable=True,
                restore='kickoff(inputs={"id": ...})',
                stray='second kickoff(inputs={"id": ...}) of the completed flow',
            )
        return PlaneDescription(plane="none", store="-", restore="kickoff() again")

    # -- reading durable state -----------------------------------------------------------
    def _checkpoint_entity(self, location: str) -> dict[str, Any]:
        from crewai.state.provider.utils import detect_provider

        raw = json.loads(detect_provider(location).from_checkpoint(location))
        return next((e for e in raw.get("entities", []) if "checkpoint_completed_methods" in e), {})

    def _persist_rows(self) -> list[tuple[str, dict[str, Any]]]:
        if not os.path.exists(_flow_db()):
            return []
        with sqlite3.connect(_flow_db(), timeout=30) as conn:
            rows = conn.execute(
                "SELECT method_name, state_json FROM flow_states WHERE flow_uuid = ? ORDER BY id", (self.flow_id,)
            ).fetchall()
        return [(m, json.loads(s)) for m, s in rows]

    def durable_state(self) -> DurableState:
        if self.plane == "checkpoint":
            journal = _journal()
            if not journal:
                return DurableState(False)
            done = self._checkpoint_entity(journal[-1]).get("checkpoint_completed_methods") or []
            return DurableState(True, None, (), (), frozenset(done))
        if self.plane == "persist":
            rows = self._persist_rows()
            return DurableState(bool(rows), None, (), (), frozenset(m for m, _ in rows))
        return DurableState(False)

    def final_state(self) -> tuple[Any, int | None]:
        state = to_jsonable(self.flow.state)
        if isinstance(state, dict):
            state.pop("id", None)  # a random uuid per flow (or the persisted id): not part of the outcome
        return state, None

    def checkpoint_count(self) -> int:
        if self.plane == "checkpoint":
            return len(_journal())
        if self.plane == "persist":
            return len(self._persist_rows())
        return 0

    def _state_model(self) -> Any:
        from pydantic import BaseModel

        state = self.flow.state
        return type(state) if isinstance(state, BaseModel) else None

    def schema_kind(self) -> str | None:
        model = self._state_model()
        return describe_schema(model).kind if model is not None else None

    def audit_checkpoints(self) -> list[InvalidState]:
        model = self._state_model()
        if model is None:
            return []
        states: list[tuple[dict[str, Any], str]] = []
        if self.plane == "checkpoint":
            for location in _journal():
                try:
                    states.append((self._checkpoint_entity(location).get("checkpoint_state") or {}, location))
                except (OSError, ValueError):
                    continue
        elif self.plane == "persist":
            states = [(s, m) for m, s in self._persist_rows()]
        found, seen = [], set()
        for values, _where in states:
            for p in validate_values(model, values):
                if (p.field, repr(p.value)) not in seen:
                    seen.add((p.field, repr(p.value)))
                    found.append(InvalidState(p.field, p.error, to_jsonable(p.value), None, ("unknown",)))
        return found

    def node_locations(self, module: Any = None) -> dict[str, SourceLocation]:
        out = {}
        for name in self.flow._definition.methods:
            loc = function_location(getattr(self.flow_cls, name, None))
            if loc is not None:
                out[name] = loc
        return out

    def uses_sweep_store(self) -> bool:
        return self.plane != "none"


class CrewAIAdapter(Adapter):
    name = "crewai"
    distributions = ("crewai",)
    keeps_factory = True

    def preload_modules(self) -> list[str]:
        return list(PRELOAD)

    def accepts(self, obj: Any) -> bool:
        return is_class_or_instance_of(obj, "crewai.flow.runtime", "Flow")

    def prepare_process(self, instruments: Instruments, store: StoreSettings) -> None:
        global _INSTRUMENTS, _STORE
        _INSTRUMENTS, _STORE = instruments, store
        from crewai.flow.persistence.factory import set_flow_persistence_factory
        from crewai.flow.persistence.sqlite import SQLiteFlowPersistence

        # the default @persist() backend, made at decoration time, lands in the cell's store
        set_flow_persistence_factory(lambda: SQLiteFlowPersistence(_flow_db()))
        _patch()

    def building(self) -> Any:
        import contextlib

        @contextlib.contextmanager
        def quiet() -> Iterator[None]:
            _QUIET.set()
            try:
                yield
            finally:
                _QUIET.clear()
                if _INSTRUMENTS is not None:
                    _fresh_runtime()

        return quiet()

    def effect_context(self) -> tuple[str | None, int | None, str | None]:
        from crewai.flow.flow_context import current_flow_method_name

        name = current_flow_method_name.get()
        return (str(name) if name else None), None, None

    def open(
        self, obj: Any, store: StoreSettings, instruments: Instruments, thread_id: str, config: dict[str, Any]
    ) -> Session:
        from crewai.flow.runtime import Flow

        make: Callable[[], Any]
        if isinstance(obj, type):
            missing = required_parameters(obj)
            make, how = obj, f"instantiated the Flow subclass {obj.__name__}"
        elif isinstance(obj, Flow):
            cls, checkpoint = type(obj), obj.checkpoint

            def rebuild() -> Any:
                return cls(checkpoint=checkpoint) if checkpoint is not None else cls()

            make = rebuild
            how = f"rebuilt the {cls.__name__} instance the target holds (with its checkpoint setting) for each kickoff"
            missing = None
        elif callable(obj):
            make, how, missing = obj, "called the factory for each kickoff", required_parameters(obj)
        else:
            raise ShapeError(f"{type(obj).__name__} is not a CrewAI Flow")
        if missing:
            raise ShapeError(
                f"the Flow needs constructor arguments the sweep cannot give: {', '.join(p.name for p in missing)}"
            )
        return CrewAISession(make, instruments, thread_id, config, how)
