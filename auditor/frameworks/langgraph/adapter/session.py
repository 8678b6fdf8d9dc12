"""One LangGraph graph bound to one durable store and one thread, inside one sweep child."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from resume_audit.dynamic.adapters.base import (
    BREAKPOINT_AFTER,
    BREAKPOINT_BEFORE,
    DurableState,
    Instruments,
    InvalidState,
    Outcome,
    PendingInterrupt,
    PlaneDescription,
    Session,
    SourceLocation,
    function_location,
    is_library_file,
    registration_location,
)
from resume_audit.dynamic.child.validity import describe_schema, validate_values
from resume_audit.dynamic.values import canonical, to_jsonable
from resume_audit.frameworks.langgraph.adapter.build import Closer
from resume_audit.frameworks.langgraph.adapter.instrumentation import (
    NOT_OUTPUT,
    NULL_TASK_ID,
    SaverProbe,
    is_instrumented,
    make_recorder,
)
from resume_audit.frameworks.langgraph.adapter.schedule import RUNNER_SUBMIT_KEY, runner_submit


def _node_function(graph: Any, name: str) -> Any:
    from langgraph._internal._runnable import RunnableCallable

    candidates = []
    spec = getattr(getattr(graph, "builder", None), "nodes", {}).get(name)
    if spec is not None:
        candidates.append(getattr(spec, "runnable", None))
    node = graph.nodes.get(name)
    if node is not None:
        candidates.append(getattr(node, "bound", None))
    while candidates:
        r = candidates.pop(0)
        if r is None:
            continue
        if isinstance(r, RunnableCallable):
            return r.func or r.afunc
        if inspect.isfunction(r) or inspect.ismethod(r):
            return r
        candidates.extend(getattr(r, "steps", []) or [])
        for attr in ("func", "afunc", "bound"):
            inner = getattr(r, attr, None)
            if inner is not None and inner is not r:
                candidates.append(inner)
    return None


class LangGraphSession(Session):
    """A compiled graph persisting through the instrumented saver, on one thread (async graphs on their own loop)."""

    fork_forms = ("bare", "map")

    def __init__(
        self,
        graph: Any,
        saver: Any,
        instruments: Instruments,
        probe: SaverProbe,
        thread_id: str,
        extra: dict[str, Any],
        is_async: bool,
        how: str,
        closers: list[Closer],
    ) -> None:
        self.graph = graph
        self.saver = saver
        self.instruments = instruments
        self.probe = probe
        self.thread_id = thread_id
        self.is_async = is_async
        self.how = how
        self._closers = closers
        self._loop: asyncio.AbstractEventLoop | None = None
        recorder = make_recorder(instruments, is_async)
        configurable: dict[str, Any] = {**extra, "thread_id": thread_id}
        if not is_async:
            configurable[RUNNER_SUBMIT_KEY] = runner_submit
        self.config: dict[str, Any] = {"configurable": configurable, "callbacks": [recorder]}
        self._plain = {"configurable": {**extra, "thread_id": thread_id}}

    # -- invoking ---------------------------------------------------------------------
    def _run(self, coro_factory: Callable[[], Awaitable[Any]]) -> Any:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(coro_factory())

    def _invoke(self, value: Any, config: dict[str, Any]) -> Outcome:
        try:
            if self.is_async:
                self._run(lambda: self.graph.ainvoke(value, config))
            else:
                self.graph.invoke(value, config)
        finally:
            self._flush()
        return self._outcome()

    def _flush(self) -> None:
        if not self.probe.buffer or not is_instrumented(self.saver):
            return
        if self.is_async:
            self._run(self.saver._ra_aflush)
        else:
            self.saver._ra_flush()

    def _state(self, config: dict[str, Any] | None = None, *, subgraphs: bool = False) -> Any:
        cfg = config or self._plain
        if self.is_async:
            return self._run(lambda: self.graph.aget_state(cfg, subgraphs=subgraphs))
        return self.graph.get_state(cfg, subgraphs=subgraphs)

    def _outcome(self) -> Outcome:
        """Parked at dynamic interrupts, at a static breakpoint, or done.

        ``invoke`` returns normally with tasks still to run only when a static
        breakpoint (``interrupt_before`` / ``interrupt_after``) paused it.
        """
        state = self._state(subgraphs=True)
        found = self._interrupts(state)
        if not found and tuple(state.next or ()):
            found = (self._breakpoint(state, durable=False),)
        return Outcome(found)

    def _subgraph_graphs(self) -> dict[str, Any]:
        """Compiled subgraphs by their node path (``approval``, ``approval/inner``)."""
        try:
            return {ns.replace("|", "/"): sub for ns, sub in self.graph.get_subgraphs(recurse=True)}
        except Exception:
            return {}

    def _paused_level(self, state: Any) -> tuple[Any, Any, str]:
        """The innermost (state, graph, path prefix) with tasks left: a breakpoint compiled into a
        subgraph pauses the subgraph, and the parent only shows the subgraph's node as next."""
        graph, prefix = self.graph, ""
        subgraphs: dict[str, Any] | None = None
        while True:
            inner = next(
                (
                    t
                    for t in getattr(state, "tasks", ()) or ()
                    if getattr(t, "state", None) is not None and tuple(getattr(t.state, "next", ()) or ())
                ),
                None,
            )
            if inner is None:
                return state, graph, prefix
            if subgraphs is None:
                subgraphs = self._subgraph_graphs()
            path = prefix + inner.name
            if path not in subgraphs:
                return state, graph, prefix
            state, graph, prefix = inner.state, subgraphs[path], path + "/"

    def _breakpoint(self, state: Any, *, durable: bool) -> PendingInterrupt:
        """The static breakpoint a thread with tasks left (and no interrupt) waits at."""
        level, graph, prefix = self._paused_level(state)
        nxt = tuple(level.next)
        before = getattr(graph, "interrupt_before_nodes", ()) or ()
        gated = [n for n in nxt if before == "*" or n in before]
        kind = BREAKPOINT_BEFORE if gated or durable else BREAKPOINT_AFTER
        node = prefix + (gated or list(nxt))[0]
        step = (state.metadata or {}).get("step")
        return PendingInterrupt(f"breakpoint:{kind}:{node}@{step}", node, None, kind)

    def _gated_by_breakpoint(self, state: Any) -> bool:
        level, graph, _prefix = self._paused_level(state)
        before = getattr(graph, "interrupt_before_nodes", ()) or ()
        return bool(before) and any(before == "*" or n in before for n in getattr(level, "next", ()) or ())

    def _interrupts(self, state: Any) -> tuple[PendingInterrupt, ...]:
        """The pending dynamic interrupts, each named after the innermost unit that raised it: a
        subgraph's node from the state, a functional-API ``@task`` from the interrupt call itself."""

        def innermost(task: Any, ids: set[str], prefix: str) -> str:
            sub = getattr(task, "state", None)
            for inner in getattr(sub, "tasks", ()) or ():
                if {str(i.id) for i in getattr(inner, "interrupts", ()) or ()} & ids:
                    return innermost(inner, ids, f"{prefix}{task.name}/")
            return f"{prefix}{task.name}"

        found = []
        for task in getattr(state, "tasks", ()) or ():
            for intr in getattr(task, "interrupts", ()) or ():
                unit = self.instruments.park_units.get(str(intr.id)) or innermost(task, {str(intr.id)}, "")
                found.append(PendingInterrupt(str(intr.id), unit, to_jsonable(intr.value)))
        if not found:
            for intr in getattr(state, "interrupts", ()) or ():
                found.append(PendingInterrupt(str(intr.id), None, to_jsonable(intr.value)))
        return tuple(found)

    def _command(self, resume: Any) -> Any:
        from langgraph.types import Command

        return Command(resume=resume)

    def start(self, input: Any) -> Outcome:
        return self._invoke(input, self.config)

    def answer(self, answers: list[tuple[PendingInterrupt, Any]], *, at: Any = None, form: str = "auto") -> Outcome:
        config = self.config
        if at is not None:  # the interrupt checkpoint's id: LangGraph's (thread_id, checkpoint_id) address
            config = {**self.config, "configurable": {**self.config["configurable"], "checkpoint_id": at}}
        answers = [(intr, value) for intr, value in answers if intr.takes_value]
        if not answers:  # only static breakpoints pending: the documented resume is invoke(None)
            return self._invoke(None, config)
        if form == "auto":
            form = "bare" if len(answers) == 1 else "map"
        resume = answers[0][1] if form == "bare" else {intr.id: value for intr, value in answers}
        return self._invoke(self._command(resume), config)

    def resume_raw(self, value: Any) -> Outcome:
        return self._invoke(self._command(value), self.config)

    def proceed(self) -> Outcome:
        return self._invoke(None, self.config)

    # -- reading durable state -----------------------------------------------------------
    def _checkpointer(self) -> Any:
        cp = getattr(self.graph, "checkpointer", None)
        return cp if cp not in (None, True, False) else None

    def _get_tuple(self, config: dict[str, Any]) -> Any:
        cp = self._checkpointer()
        if cp is None:
            return None
        if self.is_async:
            return self._run(lambda: cp.aget_tuple(config))
        return cp.get_tuple(config)

    def _list(self) -> list[Any]:
        cp = self._checkpointer()
        if cp is None:
            return []
        if self.is_async:

            async def collect() -> list[Any]:
                return [t async for t in cp.alist(self._plain)]

            tuples: list[Any] = self._run(collect)
            return tuples
        return list(cp.list(self._plain))

    def durable_state(self) -> DurableState:
        tup = self._get_tuple({"configurable": {"thread_id": self.thread_id, "checkpoint_ns": ""}})
        if tup is None:
            return DurableState(False)
        completed = frozenset(
            tid for tid, channel, _ in (tup.pending_writes or []) if tid != NULL_TASK_ID and channel not in NOT_OUTPUT
        )
        state = self._state(subgraphs=True)
        interrupts = self._interrupts(state)
        if not interrupts and self._gated_by_breakpoint(state):
            interrupts = (self._breakpoint(state, durable=True),)
        return DurableState(
            True,
            (tup.metadata or {}).get("step"),
            interrupts,
            tuple(getattr(state, "next", ()) or ()),
            completed,
        )

    def fork_point(self) -> str | None:
        """The thread's head checkpoint id: the interrupt checkpoint while parked."""
        state = self._state()
        checkpoint_id: str | None = (state.config or {}).get("configurable", {}).get("checkpoint_id")
        return checkpoint_id

    def example_input(self) -> Any:
        from resume_audit.dynamic.child.synthesis import example_from_schema, example_from_type

        try:
            schema = self.graph.get_input_jsonschema()
            if isinstance(schema, dict):
                return example_from_schema(schema)
        except Exception:  # pydantic refuses typing.TypedDict before 3.12: read the annotations instead
            pass
        builder = getattr(self.graph, "builder", None)
        tp = getattr(builder, "input_schema", None) or getattr(builder, "state_schema", None)
        return example_from_type(tp) if tp is not None else None

    def describe(self) -> PlaneDescription:
        return PlaneDescription(plane="checkpointer", store=type(self.saver).__name__.replace("Instrumented", "", 1))

    def final_state(self) -> tuple[Any, int | None]:
        state = self._state()
        return to_jsonable(state.values), (state.metadata or {}).get("step")

    def checkpoint_count(self) -> int:
        return len([t for t in self._list() if t.config["configurable"].get("checkpoint_ns", "") == ""])

    def _schema(self) -> Any:
        builder = getattr(self.graph, "builder", None)
        return getattr(builder, "state_schema", None)

    def schema_kind(self) -> str | None:
        schema = self._schema()
        return describe_schema(schema).kind if schema is not None else None

    def audit_checkpoints(self) -> list[InvalidState]:
        schema = self._schema()
        if schema is None:
            return []
        tuples = [t for t in self._list() if t.config["configurable"].get("checkpoint_ns", "") == ""]
        by_id = {t.config["configurable"]["checkpoint_id"]: t for t in tuples}
        task_nodes = dict(self.instruments.task_nodes)
        for run in self.instruments.ledger.node_runs():
            if run.task:
                task_nodes.setdefault(run.task, (run.node, run.step))
        found: list[InvalidState] = []
        seen: set[tuple[str, str]] = set()
        for tup in sorted(
            tuples, key=lambda t: ((t.metadata or {}).get("step", -99), t.config["configurable"]["checkpoint_id"])
        ):
            problems = validate_values(schema, tup.checkpoint.get("channel_values", {}))
            if not problems:
                continue
            step = (tup.metadata or {}).get("step")
            parent_id = ((tup.parent_config or {}).get("configurable") or {}).get("checkpoint_id")
            parent = by_id.get(parent_id)
            for p in problems:
                key = (p.field, canonical(p.value))
                if key in seen:
                    continue
                seen.add(key)
                writers: list[str] = []
                if (tup.metadata or {}).get("source") == "input":
                    writers.append("input")
                elif parent is not None:
                    for tid, channel, _ in parent.pending_writes or []:
                        if channel == p.field:
                            writers.append(
                                task_nodes.get(tid, (f"task {tid[:8]}", None))[0]
                                if tid != NULL_TASK_ID
                                else "state update"
                            )
                found.append(
                    InvalidState(
                        p.field, p.error, to_jsonable(p.value), step, tuple(dict.fromkeys(writers)) or ("unknown",)
                    )
                )
        return found

    def node_locations(self, module: Any = None) -> dict[str, SourceLocation]:
        out: dict[str, SourceLocation] = {}
        # functional-API tasks are not graph nodes; they run under their function's name
        task_function: type | None
        try:
            from langgraph.func import _TaskFunction as task_function
        except ImportError:  # pragma: no cover - older or newer layouts
            task_function = None
        if module is not None and task_function is not None:
            for value in vars(module).values():
                if isinstance(value, task_function):
                    func = getattr(value, "func", None)
                    loc = function_location(func) if func is not None else None
                    if loc is not None:
                        out[getattr(func, "__name__", "")] = loc
        graphs: list[tuple[str, Any]] = [("", self.graph)]
        try:  # compiled graphs added as nodes or invoked by one, at any depth: their nodes are `parent/child`
            graphs += [(ns.replace("|", "/") + "/", sub) for ns, sub in self.graph.get_subgraphs(recurse=True)]
        except Exception:
            pass
        for prefix, graph in graphs:
            for name in getattr(graph, "nodes", {}):
                if name.startswith("__"):
                    continue
                func = _node_function(graph, name)
                loc = function_location(func) if func is not None else None
                if loc is not None and is_library_file(loc.file):
                    # a prebuilt node (ToolNode, a prebuilt agent): where the user's code adds it
                    loc = registration_location(module, "add_node", name) if module is not None else None
                if loc is not None:
                    out.setdefault(prefix + name, loc)
        return out

    def step_on_thread_clock(self, node: str) -> bool:
        return "/" not in node  # `parent/child`: a subgraph's node, stepping on the subgraph's own counter

    def uses_sweep_store(self) -> bool:
        cp = self._checkpointer()
        return cp is self.saver or self.instruments.saver_ops > 0

    def close(self) -> None:
        for close in reversed(self._closers):
            try:
                result = close()
                if inspect.isawaitable(result):
                    self._run(lambda: result)
            except Exception:
                pass
        if self._loop is not None:
            self._loop.close()
            self._loop = None
