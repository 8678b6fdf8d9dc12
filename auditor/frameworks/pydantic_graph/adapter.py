"""pydantic-graph adapter: every piece of pydantic-graph knowledge the dynamic stage needs.

Checked against the installed pydantic-graph 1.107.10 source:

- The persistence runner is ``pydantic_graph.graph.Graph`` (the top-level
  ``pydantic_graph.Graph`` of 1.x, deprecated there); the builder-based
  ``pydantic_graph.graph_builder.Graph`` is a different class -- the only
  ``Graph`` of 2.x, which removed ``pydantic_graph.persistence`` outright. The
  adapter resolves the class by module and, on 2.x, says so instead of failing.
- ``GraphRun.next(node)`` snapshots the node if new (``snapshot_node_if_new``),
  marks it running inside ``persistence.record_run`` (status ``running``, then
  ``success``/``error``), runs it, then snapshots the returned node
  (``snapshot_node``, status ``created``) or the end (``snapshot_end``).
- ``FileStatePersistence`` (``pydantic_graph.persistence.file``) rewrites one
  JSON file per operation under a lock file. ``Graph.iter_from_persistence``
  takes the first ``created`` node snapshot (``load_next`` marks it
  ``pending``) and raises ``GraphRuntimeError('Unable to restore snapshot from
  state persistence.')`` when there is none.

pydantic-graph has no interrupt: a human-in-the-loop run *stops before* a node
that needs an answer (its snapshot stays ``created``) and is resumed later
from persistence. The target names those nodes, and the answer reaches the
resumed node as ``ctx.deps``. A target is a no-argument factory returning
``{"graph": Graph, "start": node, "state": state, "park_at": ["NodeName"]}``
(or the tuple ``(graph, start[, state])``), or a ``Graph`` with
``--config '{"start": "NodeName", "park_at": [...]}'`` (the start node is
built from ``--input``, the state from its type's defaults).
"""

from __future__ import annotations

import asyncio
import contextvars
import importlib
import json
import os
from pathlib import Path
from typing import Any, Coroutine, TypeVar

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
    class_location,
)
from resume_audit.dynamic.child.validity import describe_schema, validate_values
from resume_audit.dynamic.values import to_jsonable

T = TypeVar("T")

PRELOAD = ["pydantic_graph", "pydantic_graph.graph", "pydantic_graph.persistence.file"]

_CURRENT_NODE: contextvars.ContextVar[str | None] = contextvars.ContextVar("resume_audit_node", default=None)


def persistence_available() -> tuple[bool, str]:
    """(whether ``pydantic_graph.persistence`` exists, the installed version) -- False on 2.x."""
    from importlib import metadata

    try:
        version = metadata.version("pydantic-graph")
    except metadata.PackageNotFoundError:
        version = "?"
    try:
        importlib.import_module("pydantic_graph.persistence.file")
    except ImportError:
        return False, version
    return True, version


def _graph_classes() -> tuple[type, ...]:
    """Every pydantic-graph class named ``Graph`` this version has (legacy runner and builder-based)."""
    found = []
    for module in ("pydantic_graph.graph", "pydantic_graph.graph_builder"):
        try:
            cls = getattr(importlib.import_module(module), "Graph", None)
        except ImportError:
            continue
        if isinstance(cls, type):
            found.append(cls)
    return tuple(found)


def _legacy_graph_class() -> type | None:
    try:
        from pydantic_graph.graph import Graph
    except ImportError:
        return None
    return Graph if hasattr(Graph, "iter_from_persistence") else None


def _instrumented_persistence(instruments: Instruments, path: Path) -> Any:
    """A FileStatePersistence whose every write is a named event (a kill point)."""
    from pydantic_graph.persistence.file import FileStatePersistence

    def emit(what: str, node: str | None) -> None:
        instruments.saver_ops += 1
        instruments.events.emit("persist", what, node=node)

    def name_of(node: Any) -> str:
        return type(node).__name__

    class InstrumentedFileStatePersistence(FileStatePersistence):
        async def snapshot_node(self, state: Any, next_node: Any) -> None:
            await super().snapshot_node(state, next_node)
            emit(f"snapshot of node {name_of(next_node)} (created)", name_of(next_node))

        async def snapshot_node_if_new(self, snapshot_id: Any, state: Any, next_node: Any) -> None:
            before = len(await self.load_all())
            await super().snapshot_node_if_new(snapshot_id, state, next_node)
            if len(await self.load_all()) > before:
                emit(f"snapshot of node {name_of(next_node)} (created)", name_of(next_node))

        async def snapshot_end(self, state: Any, end: Any) -> None:
            await super().snapshot_end(state, end)
            emit("snapshot of the end", _CURRENT_NODE.get())

        def record_run(self, snapshot_id: Any) -> Any:
            inner = super().record_run(snapshot_id)
            node = _CURRENT_NODE.get()

            class Recorded:
                async def __aenter__(self_inner) -> None:
                    await inner.__aenter__()
                    emit(f"snapshot of node {node} marked running", node)

                async def __aexit__(self_inner, *exc: Any) -> Any:
                    result = await inner.__aexit__(*exc)
                    emit(f"snapshot of node {node} marked {'error' if exc[0] else 'success'}", node)
                    return result

            return Recorded()

    return InstrumentedFileStatePersistence(path)


class PydanticGraphSession(Session):
    """One graph run persisted to a FileStatePersistence file in the cell's store."""

    def __init__(
        self,
        graph: Any,
        start: Any,
        state: Any,
        park_at: tuple[str, ...],
        instruments: Instruments,
        store: StoreSettings,
        how: str,
    ) -> None:
        self.graph = graph
        self.start_node = start
        self.initial_state = state
        self.park_at = park_at
        self.instruments = instruments
        self.how = how
        directory = store.directory or os.path.join(os.path.dirname(store.location) or ".", "store")
        os.makedirs(directory, exist_ok=True)
        self.path = Path(directory) / "graph_run.json"
        self.persistence = _instrumented_persistence(instruments, self.path)
        self.persistence.set_graph_types(graph)
        self.state: Any = state
        self.output: Any = None
        self._loop = asyncio.new_event_loop()
        self._runs: dict[str, int] = {}

    # -- driving ----------------------------------------------------------------------------
    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self._loop.run_until_complete(coro)

    def _parks_at(self, node: Any) -> bool:
        return type(node).__name__ in self.park_at

    async def _drive(self, run: Any, first: Any, served: Any = None, answering: bool = False) -> Outcome:
        from pydantic_graph import End

        node = first
        while True:
            if isinstance(node, End):
                self.output = node.data
                self.state = run.state
                return Outcome()
            if self._parks_at(node) and not answering:
                self.state = run.state
                return Outcome((PendingInterrupt(str(node.get_snapshot_id()), type(node).__name__, to_jsonable(node)),))
            name = type(node).__name__
            token = _CURRENT_NODE.set(name)
            try:
                self._runs[name] = self._runs.get(name, 0) + 1
                self.instruments.task_nodes[str(node.get_snapshot_id())] = (name, None)
                self.instruments.ledger.record_node_run(name, None, str(node.get_snapshot_id()), self._runs[name])
                if answering:
                    from resume_audit.dynamic.values import canonical

                    self.instruments.ledger.record_served(name, None, canonical(served))
                    answering = False
                node = await run.next(node)
            finally:
                _CURRENT_NODE.reset(token)

    def start(self, input: Any) -> Outcome:
        async def go() -> Outcome:
            async with self.graph.iter(
                self.start_node, state=self.initial_state, persistence=self.persistence, infer_name=False
            ) as run:
                return await self._drive(run, run.next_node)

        return self._run(go())

    def _from_persistence(self, deps: Any, answering: bool) -> Outcome:
        async def go() -> Outcome:
            async with self.graph.iter_from_persistence(self.persistence, deps=deps, infer_name=False) as run:
                return await self._drive(run, run.next_node, deps, answering)

        return self._run(go())

    def answer(self, answers: list[tuple[PendingInterrupt, Any]], *, at: Any = None, form: str = "auto") -> Outcome:
        if at is not None:  # the fork point: the persistence file as it was at the park
            self.path.write_bytes(at)
        return self._from_persistence(answers[0][1], True)

    def resume_raw(self, value: Any) -> Outcome:
        return self._from_persistence(value, True)

    def proceed(self) -> Outcome:
        """Continue from persistence -- or, when the run already ended, read its end (as the app would)."""
        from pydantic_graph.persistence import EndSnapshot

        ended = [s for s in self._snapshots() if isinstance(s, EndSnapshot)]
        if ended:
            self.state, self.output = ended[-1].state, ended[-1].result.data
            return Outcome()
        return self._from_persistence(None, False)

    def fork_point(self) -> Any:
        return self.path.read_bytes() if self.path.exists() else None

    def recovery_label(self, state: DurableState) -> str | None:
        if state.interrupts:
            return "graph.iter_from_persistence(persistence, deps=answer) at the parked node"
        return "graph.iter_from_persistence(persistence)"

    def describe(self) -> PlaneDescription:
        return PlaneDescription(
            plane="FileStatePersistence + Graph.iter_from_persistence",
            durable=True,
            store="FileStatePersistence JSON file",
            restore="graph.iter_from_persistence(persistence, deps=answer)",
            stray="iter_from_persistence of the consumed snapshot",
        )

    # -- reading durable state ---------------------------------------------------------------
    def _snapshots(self) -> list[Any]:
        return self._run(self.persistence.load_all()) if self.path.exists() else []

    def durable_state(self) -> DurableState:
        from pydantic_graph.persistence import NodeSnapshot

        snaps = self._snapshots()
        if not snaps:
            return DurableState(False)
        parked = tuple(
            PendingInterrupt(str(s.id), type(s.node).__name__, to_jsonable(s.node))
            for s in snaps
            if isinstance(s, NodeSnapshot) and s.status == "created" and self._parks_at(s.node)
        )
        done = frozenset(str(s.id) for s in snaps if isinstance(s, NodeSnapshot) and s.status == "success")
        nxt = tuple(type(s.node).__name__ for s in snaps if isinstance(s, NodeSnapshot) and s.status == "created")
        return DurableState(True, None, parked[:1], nxt, done)

    def final_state(self) -> tuple[Any, int | None]:
        return {"state": to_jsonable(self.state), "output": to_jsonable(self.output)}, None

    def checkpoint_count(self) -> int:
        return len(self._snapshots())

    def _state_type(self) -> Any:
        return getattr(self.graph, "_state_type", None) or (
            type(self.initial_state) if self.initial_state is not None else None
        )

    def schema_kind(self) -> str | None:
        st = self._state_type()
        return describe_schema(st).kind if isinstance(st, type) and st not in (type(None),) else None

    def audit_checkpoints(self) -> list[InvalidState]:
        st = self._state_type()
        if not isinstance(st, type) or not self.path.exists():
            return []
        found = []
        for raw in json.loads(self.path.read_bytes()):
            for p in validate_values(st, raw.get("state") or {}):
                found.append(InvalidState(p.field, p.error, to_jsonable(p.value), None, ("unknown",)))
        return found

    def node_locations(self, module: Any = None) -> dict[str, SourceLocation]:
        out = {}
        for node_id, node_def in getattr(self.graph, "node_defs", {}).items():
            node_class = getattr(node_def, "node", None)
            loc = class_location(node_class) if isinstance(node_class, type) else None
            if loc is not None:
                out[node_id] = loc
        return out

    def uses_sweep_store(self) -> bool:
        return True

    def close(self) -> None:
        self._loop.close()


class PydanticGraphAdapter(Adapter):
    name = "pydantic-graph"
    distributions = ("pydantic-graph",)

    def preload_modules(self) -> list[str]:
        return list(PRELOAD)

    def accepts(self, obj: Any) -> bool:
        import sys

        if "pydantic_graph" not in sys.modules:
            return False
        classes = _graph_classes()
        if isinstance(obj, classes):
            return True
        if isinstance(obj, dict):
            return isinstance(obj.get("graph"), classes)
        if isinstance(obj, tuple) and obj:
            return isinstance(obj[0], classes)
        return False

    def prepare_process(self, instruments: Instruments, store: StoreSettings) -> None:
        pass

    def effect_context(self) -> tuple[str | None, int | None, str | None]:
        return _CURRENT_NODE.get(), None, None

    def open(
        self, obj: Any, store: StoreSettings, instruments: Instruments, thread_id: str, config: dict[str, Any]
    ) -> Session:
        available, version = persistence_available()
        # Any: the graph is duck-typed (node_defs, _state_type), as those differ across pydantic-graph versions
        legacy: Any = _legacy_graph_class()
        if not available or legacy is None:
            raise ShapeError(
                f"pydantic-graph {version} has no persistence module (pydantic_graph.persistence was removed in 2.x, "
                "and its Graph is the builder-based one): there is no documented resume path to sweep"
            )
        park_at: list[str] = list(config.get("park_at") or [])
        graph: Any
        start: Any
        state: Any
        if isinstance(obj, dict):
            graph, start, state = obj.get("graph"), obj.get("start"), obj.get("state")
            park_at += list(obj.get("park_at") or [])
        elif isinstance(obj, tuple):
            graph, start, state = (list(obj) + [None, None])[:3]
        else:
            graph, start, state = obj, None, None
        if not isinstance(graph, legacy):
            raise ShapeError(
                f"{type(graph).__module__}.{type(graph).__name__} is pydantic-graph's builder-based Graph, which has no "
                "persistence; only pydantic_graph.graph.Graph with FileStatePersistence can be swept"
            )
        if start is None:
            name = config.get("start")
            node_def = graph.node_defs.get(name) if name else None
            if node_def is None:
                raise ShapeError(
                    "the pydantic-graph target needs a start node: return {'graph': ..., 'start': Node(...)} "
                    'from a factory, or pass --config \'{"start": "NodeName"}\''
                )
            start = node_def.node(**(config.get("start_args") or {}))
        if state is None and getattr(graph, "_state_type", None) not in (None, type(None)):
            try:
                state = graph._state_type()
            except TypeError as exc:
                raise ShapeError(
                    f"cannot build the graph's state from defaults ({exc}); return it from a factory"
                ) from None
        return PydanticGraphSession(
            graph,
            start,
            state,
            tuple(park_at),
            instruments,
            store,
            "drove Graph.iter/iter_from_persistence over the sweep's FileStatePersistence",
        )
