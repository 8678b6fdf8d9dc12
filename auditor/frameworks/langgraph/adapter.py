"""LangGraph adapter: all framework knowledge the dynamic stage needs, in one module.

Measured against langgraph 1.2.24 / langgraph-checkpoint 4.3.2 (sqlite 3.1.2,
postgres 3.2.0). What it relies on, each checked in the installed source:

- Persistence goes through ``BaseCheckpointSaver.put`` / ``put_writes`` (and
  ``aput`` / ``aput_writes``), submitted by the Pregel loop to its
  ``BackgroundExecutor`` (``langgraph.pregel._executor``); the checkpoint put
  is chained through ``loop._checkpointer_put_after_previous``. Default
  durability is ``"async"``: the next node may start before the previous
  node's write is on disk.
- ``put_writes`` receives ``task_path`` (``"~__pregel_pull, <node>"``) and the
  resume value is written by the null task (``NULL_TASK_ID``) on ``__resume__``.
- Node executions surface as callback ``on_chain_start`` events whose metadata
  carries ``langgraph_node``, ``langgraph_step`` and
  ``langgraph_checkpoint_ns`` (``"<node>:<task id>"``).
- ``interrupt()`` lives in ``langgraph.types``; a parked thread's interrupts are
  on ``get_state(config).tasks[i].interrupts`` (``Interrupt.id``, ``.value``).

The instrumented saver is the user's saver class with a mixin swapped in
(``__class__`` assignment), so every other behaviour of ``SqliteSaver``,
``PostgresSaver`` or ``InMemorySaver`` stays exactly the stock one.

Schedule control. With ``durability="async"`` the order in which background
writes land relative to the next node is a thread race, so an unserialised
sweep would give different verdicts run to run. The adapter therefore runs
every saver operation of a process in submission order (a sequencer wrapped
around the executor's submissions) and lets a node start only once every
operation submitted before it has completed. For sync graphs the tasks of one
superstep also run one after another in the loop's task order (through the
runner-submit hook), so parallel branches interleave the same way every run.
That is one legal schedule of the stock executor -- the one where storage
keeps up -- so every duplicate it exposes can happen in production, and a kill
point names the same durable prefix every time. (The wider async window, where
the next node's effect fires before the previous write lands, is not explored
by this schedule; async graphs keep the framework's own task concurrency.)
"""

from __future__ import annotations

import asyncio
import inspect
import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from resume_audit.dynamic.child.validity import describe_schema, validate_values
from resume_audit.dynamic.values import canonical, to_jsonable
from resume_audit.dynamic.adapters.base import (
    PlaneDescription,
    BREAKPOINT_AFTER,
    BREAKPOINT_BEFORE,
    Adapter,
    DurableState,
    Instruments,
    InvalidState,
    Outcome,
    PendingInterrupt,
    Session,
    ShapeError,
    SourceLocation,
    StoreSettings,
    function_location,
    is_library_file,
    registration_location,
)

if TYPE_CHECKING:
    from concurrent.futures import Future

NULL_TASK_ID = "00000000-0000-0000-0000-000000000000"
INTERRUPT = "__interrupt__"
ERROR = "__error__"
RESUME = "__resume__"
_NOT_OUTPUT = {INTERRUPT, ERROR, RESUME}

#: modules the fork server imports once (missing ones are skipped by multiprocessing)
PRELOAD = [
    "langgraph.graph",
    "langgraph.types",
    "langgraph.config",
    "langgraph.pregel",
    "langgraph.pregel._executor",
    "langgraph.checkpoint.memory",
    "langgraph.checkpoint.sqlite",
    "langgraph.checkpoint.sqlite.aio",
    "langgraph.checkpoint.postgres",
    "langgraph.func",
    "langchain_core.callbacks",
    "pydantic",
    "psycopg",
]

_DRAIN_LIMIT_S = 30.0  # deadlock escape only; reaching it is reported, never part of a verdict


# -- schedule control -------------------------------------------------------------
class SaverSequencer:
    """Runs saver operations in submission order and lets nodes wait for them.

    ``wrap`` is applied at submission time (in the submitting thread), so
    sequence numbers follow the loop's own order of submission.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._next = 0
        self._done: set[int] = set()
        self._turn = 0
        self.escaped = False

    def _advance(self, seq: int) -> None:
        with self._cond:
            self._done.add(seq)
            while self._turn in self._done:
                self._done.discard(self._turn)
                self._turn += 1
            self._cond.notify_all()

    def wrap(self, fn):
        with self._cond:
            seq = self._next
            self._next += 1

        def run(*args: Any, **kwargs: Any) -> Any:
            with self._cond:
                while self._turn != seq:
                    self._cond.wait()
            try:
                return fn(*args, **kwargs)
            finally:
                self._advance(seq)

        run.__resume_audit_seq__ = seq
        return run

    def wrap_async(self, fn):
        with self._cond:
            seq = self._next
            self._next += 1

        async def run(*args: Any, **kwargs: Any) -> Any:
            while True:
                with self._cond:
                    if self._turn == seq:
                        break
                await asyncio.sleep(0)
            try:
                return await fn(*args, **kwargs)
            finally:
                self._advance(seq)

        return run

    def cancelled(self, seq: int) -> None:
        self._advance(seq)

    def drain(self) -> None:
        """Block until every operation submitted so far has completed."""
        with self._cond:
            target = self._next
            if not self._cond.wait_for(lambda: self._turn >= target, timeout=_DRAIN_LIMIT_S):
                self.escaped = True

    async def adrain(self) -> None:
        with self._cond:
            target = self._next
        while True:
            with self._cond:
                if self._turn >= target:
                    return
            await asyncio.sleep(0)


SEQUENCER = SaverSequencer()
_PATCHED = False

#: LangGraph's documented hook for how the runner submits a superstep's tasks
RUNNER_SUBMIT_KEY = "__pregel_runner_submit"


def inline_submit(fn: Callable[..., Any], *args: Any, __name__: str | None = None, __cancel_on_exit__: bool = False,
                  __reraise_on_exit__: bool = True, __next_tick__: bool = False, **kwargs: Any) -> Future[Any]:
    """Run a task to completion at submission, in its own context copy, and return its future.

    Given to the runner of sync graphs through ``RUNNER_SUBMIT_KEY``: the tasks
    of a superstep then execute one after another in the loop's own task
    order instead of on a thread pool -- a legal schedule of the stock
    executor, and the same one every run, so effects in parallel branches
    land in the same order relative to each other and to the saver's writes.
    Nested calls (functional-API tasks) run inline too, so nothing can wait on
    a task that has not started.
    """
    import concurrent.futures
    import contextvars

    fut: Future[Any] = concurrent.futures.Future()
    try:
        fut.set_result(contextvars.copy_context().run(fn, *args, **kwargs))
    except BaseException as exc:  # the thread pool would have stored it the same way
        fut.set_exception(exc)
    return fut


def _runner_submit():  # what LangGraph calls to get the submit function
    return inline_submit


def _is_saver_op(fn: Any) -> bool:
    """A persistence operation the loop submits: a saver's (a)put_writes, or its chained checkpoint put.

    Any ``BaseCheckpointSaver`` counts, so a user's wrapper around the sweep's
    saver (a fork-aware or validating shim) is sequenced too.
    """
    name = getattr(fn, "__name__", "")
    if name == "_checkpointer_put_after_previous":
        return True
    if name in ("put_writes", "aput_writes"):
        from langgraph.checkpoint.base import BaseCheckpointSaver

        return isinstance(getattr(fn, "__self__", None), BaseCheckpointSaver)
    return False


def _patch_executors() -> None:
    """Route saver operations submitted to LangGraph's executors through ``SEQUENCER``."""
    global _PATCHED
    if _PATCHED:
        return
    from langgraph.pregel import _executor

    sync_submit = _executor.BackgroundExecutor.submit
    async_submit = _executor.AsyncBackgroundExecutor.submit

    def submit(self, fn, *args, **kwargs):
        if _is_saver_op(fn):
            wrapped = SEQUENCER.wrap(fn)
            fut = sync_submit(self, wrapped, *args, **kwargs)
            seq = wrapped.__resume_audit_seq__
            fut.add_done_callback(lambda f: f.cancelled() and SEQUENCER.cancelled(seq))
            return fut
        return sync_submit(self, fn, *args, **kwargs)

    def asubmit(self, fn, *args, **kwargs):
        if _is_saver_op(fn):
            return async_submit(self, SEQUENCER.wrap_async(fn), *args, **kwargs)
        return async_submit(self, fn, *args, **kwargs)

    _executor.BackgroundExecutor.submit = submit  # type: ignore[method-assign]
    _executor.AsyncBackgroundExecutor.submit = asubmit  # type: ignore[method-assign]
    _PATCHED = True


# -- instrumented saver -------------------------------------------------------------
class SaverProbe:
    """Names each persistence operation, crashes at the kill point, defers writes on request."""

    def __init__(self, instruments: Instruments, defer: bool) -> None:
        self.instruments = instruments
        self.defer = defer
        self.buffer: list[tuple] = []
        self.cp_steps: dict[str, int | None] = {}
        self.saver: Any = None
        self.is_async = False
        self._lock = threading.Lock()

    @staticmethod
    def _where(config: dict) -> str:
        """" in subgraph <node>" for a nested graph's own checkpoint namespace, else ""."""
        ns = (config.get("configurable") or {}).get("checkpoint_ns") or ""
        return f" in subgraph {ns.split('|')[-1].split(':')[0]}" if ns else ""

    def after_put(self, config: dict, checkpoint: dict, metadata: dict) -> None:
        step = metadata.get("step")
        self.cp_steps[checkpoint["id"]] = step
        self.instruments.saver_ops += 1
        what = f"put of checkpoint step {step} ({metadata.get('source', '?')}){self._where(config)}"
        self.instruments.events.emit("put", what, step=step)

    def after_put_writes(self, config: dict, writes: Any, task_id: str, task_path: str) -> None:
        self.instruments.saver_ops += 1
        node, step, what = self.describe_writes(config, writes, task_id, task_path)
        self.instruments.events.emit("put_writes", what + self._where(config), step=step, node=node)

    def _checkpoint_step(self, config: dict) -> int | None:
        cid = config.get("configurable", {}).get("checkpoint_id")
        if cid in self.cp_steps:
            return self.cp_steps[cid]
        tup = None
        if not self.is_async:  # an async saver's sync read would block its own event loop
            try:
                tup = self.saver.get_tuple(config)
            except Exception:
                tup = None
        step = tup.metadata.get("step") if tup is not None else None
        self.cp_steps[cid] = step
        return step

    def describe_writes(self, config: dict, writes: Any, task_id: str, task_path: str) -> tuple[str | None, int | None, str]:
        channels = [w[0] for w in writes]
        cp_step = self._checkpoint_step(config)
        step = cp_step + 1 if isinstance(cp_step, int) else None
        if task_id == NULL_TASK_ID:
            if channels and all(c == RESUME for c in channels):
                return None, step, f"put_writes of resume value, step {step}"
            return None, step, f"put_writes of state update, step {step}"
        node = None
        parts = task_path.lstrip("~").split(", ") if task_path else []
        if len(parts) >= 2 and parts[0] == "__pregel_pull":
            node = parts[1]
        if node is None:
            node = self.instruments.task_nodes.get(task_id, (None, None))[0]
        if node is None:
            node = f"task {task_id[:8]}"
        if node == "__start__":
            return None, step, f"put_writes of input, step {step}"
        if INTERRUPT in channels:
            return node, step, f"put_writes of interrupt in node {node}, step {step}"
        if ERROR in channels:
            return node, step, f"put_writes of error in node {node}, step {step}"
        return node, step, f"put_writes of node {node}, step {step}"


def _instrumented_class(cls: type) -> type:
    """A subclass of the stock saver class that observes, names, defers and crashes.

    Defined as a direct subclass (not a mixin placed in front) so that its
    instance layout is the stock class's and ``__class__`` can be swapped on a
    saver the user's code already holds.
    """

    class Instrumented(cls):
        __slots__ = ()
        _ra_instrumented = True
        _ra_probe: SaverProbe

        def put(self, config, checkpoint, metadata, new_versions):
            result = super().put(config, checkpoint, metadata, new_versions)
            self._ra_probe.after_put(config, checkpoint, metadata)
            self._ra_flush()
            return result

        def put_writes(self, config, writes, task_id, task_path=""):
            probe = self._ra_probe
            if probe.defer:
                with probe._lock:
                    probe.buffer.append((config, list(writes), task_id, task_path))
                return None
            super().put_writes(config, writes, task_id, task_path)
            probe.after_put_writes(config, writes, task_id, task_path)
            return None

        def _ra_flush(self) -> None:
            probe = self._ra_probe
            while True:
                with probe._lock:
                    if not probe.buffer:
                        return
                    item = probe.buffer.pop(0)
                super().put_writes(*item)
                probe.after_put_writes(*item)

        async def aput(self, config, checkpoint, metadata, new_versions):
            result = await super().aput(config, checkpoint, metadata, new_versions)
            self._ra_probe.after_put(config, checkpoint, metadata)
            await self._ra_aflush()
            return result

        async def aput_writes(self, config, writes, task_id, task_path=""):
            probe = self._ra_probe
            if probe.defer:
                with probe._lock:
                    probe.buffer.append((config, list(writes), task_id, task_path))
                return None
            await super().aput_writes(config, writes, task_id, task_path)
            probe.after_put_writes(config, writes, task_id, task_path)
            return None

        async def _ra_aflush(self) -> None:
            probe = self._ra_probe
            while True:
                with probe._lock:
                    if not probe.buffer:
                        return
                    item = probe.buffer.pop(0)
                await super().aput_writes(*item)
                probe.after_put_writes(*item)

    Instrumented.__name__ = Instrumented.__qualname__ = f"Instrumented{cls.__name__}"
    return Instrumented


def is_instrumented(saver: Any) -> bool:
    return bool(getattr(type(saver), "_ra_instrumented", False))


_CLASS_CACHE: dict[type, type] = {}


def instrument_saver(saver: Any, probe: SaverProbe) -> Any:
    """Swap the instrumented subclass in for ``saver``'s own class, in place."""
    cls = type(saver)
    if not is_instrumented(saver):
        sub = _CLASS_CACHE.get(cls)
        if sub is None:
            sub = _CLASS_CACHE[cls] = _instrumented_class(cls)
        saver.__class__ = sub
    saver._ra_probe = probe
    probe.saver = saver
    return saver


# -- node executions and served values -----------------------------------------------
def _make_recorder(instruments: Instruments, is_async: bool):
    from langchain_core.callbacks import AsyncCallbackHandler, BaseCallbackHandler

    runs: dict[Any, str] = {}
    attempts: dict[str, int] = {}

    def node_start(run_id: Any, parent_run_id: Any, metadata: dict | None) -> tuple[str, str, Any] | None:
        """(node, namespace, step) when this chain start is a node execution of the graph itself."""
        md = metadata or {}
        node = md.get("langgraph_node")
        ns = md.get("langgraph_checkpoint_ns")
        if not node or not isinstance(ns, str):
            return None
        if parent_run_id is not None and runs.get(parent_run_id) == ns:
            runs[run_id] = ns  # a runnable nested inside the node's own run
            return None
        runs[run_id] = ns
        return qualified_node(node, ns, md.get("langgraph_path")), ns, md.get("langgraph_step")

    def record(node: str, ns: str, step: Any) -> None:
        task_id = ns.rsplit(":", 1)[-1]
        attempts[ns] = attempts.get(ns, 0) + 1
        instruments.task_nodes[task_id] = (node, step)
        instruments.ledger.record_node_run(node, step, task_id, attempts[ns])

    # The drain comes first: a node counts as started once the writes before it are durable.
    if is_async:

        class AsyncNodeRecorder(AsyncCallbackHandler):
            run_inline = True

            async def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, tags=None, metadata=None, **kwargs):
                started = node_start(run_id, parent_run_id, metadata)
                if started:
                    await SEQUENCER.adrain()
                    record(*started)

        return AsyncNodeRecorder()

    class NodeRecorder(BaseCallbackHandler):
        run_inline = True

        def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, tags=None, metadata=None, **kwargs):
            started = node_start(run_id, parent_run_id, metadata)
            if started:
                SEQUENCER.drain()
                record(*started)

    return NodeRecorder()


def qualified_node(node: str, ns: str, path: Any = ()) -> str:
    """A node's name as the sweep reports it: a subgraph's node is ``parent/child``, at any depth.

    ``ns`` is ``langgraph_checkpoint_ns``: ``"<node>:<task id>"`` at the top,
    ``"<parent>:<id>|<node>:<id>"`` inside a subgraph (a compiled graph added
    as a node, or one a node invokes). A functional-API task called from a
    node (``langgraph_path`` starting ``__pregel_push``) keeps its own name.
    """
    if not isinstance(ns, str) or "|" not in ns:
        return node
    if path and path[0] == "__pregel_push" and len(path) > 1 and isinstance(path[1], tuple):
        return node
    parents = [part.split(":", 1)[0] for part in ns.split("|")[:-1]]
    return "/".join([*parents, node])


def _current_context() -> tuple[str | None, int | None, str | None]:
    from langgraph.config import get_config

    try:
        cfg = get_config()
    except RuntimeError:
        return None, None, None
    md = cfg.get("metadata") or {}
    node = md.get("langgraph_node")
    if node:
        node = qualified_node(node, md.get("langgraph_checkpoint_ns") or "", md.get("langgraph_path"))
    return node, md.get("langgraph_step"), (cfg.get("configurable") or {}).get("__pregel_task_id")


def _patch_interrupt(instruments: Instruments) -> None:
    """Record the value every ``interrupt()`` call is served (the FD oracle)."""
    import sys

    import langgraph.types as lg_types

    original = lg_types.interrupt
    if getattr(original, "__resume_audit__", False):
        return

    from langgraph.errors import GraphInterrupt

    def interrupt(value: Any, *args: Any, **kwargs: Any) -> Any:
        node, step, _task = _current_context()
        try:
            served = original(value, *args, **kwargs)
        except GraphInterrupt as exc:  # parking: remember which unit raised it (a @task hides behind its caller)
            if node:
                for intr in (exc.args[0] if exc.args else ()):
                    instruments.park_units[str(getattr(intr, "id", ""))] = node
            raise
        instruments.ledger.record_served(node, step, canonical(served))
        return served

    interrupt.__resume_audit__ = True  # type: ignore[attr-defined]
    interrupt.__wrapped__ = original  # type: ignore[attr-defined]
    interrupt.__doc__ = original.__doc__
    for module in list(sys.modules.values()):
        ns = getattr(module, "__dict__", None)
        if isinstance(ns, dict) and ns.get("interrupt") is original:
            ns["interrupt"] = interrupt


# -- building the user's graph ---------------------------------------------------------
class GraphShapeError(ShapeError):
    """The target is not a LangGraph graph, builder or factory the sweep can drive."""


def _is_builder(obj: Any) -> bool:
    from langgraph.graph import StateGraph

    return isinstance(obj, StateGraph)


def _is_compiled(obj: Any) -> bool:
    from langgraph.pregel import Pregel

    return isinstance(obj, Pregel)


def build_graph(obj: Any, saver: Any) -> tuple[Any, str]:
    """The compiled graph persisting through ``saver``, and how it was obtained."""
    if _is_builder(obj):
        return obj.compile(checkpointer=saver), "compiled the StateGraph builder with the sweep's checkpointer"
    if _is_compiled(obj):
        return obj.copy(update={"checkpointer": saver}), "replaced the compiled graph's checkpointer"
    if not callable(obj):
        raise GraphShapeError(
            f"{type(obj).__name__} is not a StateGraph builder, a compiled graph, or a factory taking a checkpointer"
        )
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        sig = None
    required = []
    if sig is not None:
        required = [
            p for p in sig.parameters.values()
            if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        ]
    if sig is not None and "checkpointer" in sig.parameters:
        others = [p for p in required if p.name != "checkpointer"]
        if others:
            raise GraphShapeError(f"the factory needs arguments the sweep cannot give: {', '.join(p.name for p in others)}")
        result, how = obj(checkpointer=saver), "called the factory with checkpointer="
    elif not required:
        result, how = obj(), "called the factory"
    elif len(required) == 1 and required[0].kind != required[0].KEYWORD_ONLY:
        result, how = obj(saver), "called the factory with the checkpointer"
    else:
        raise GraphShapeError(f"the factory needs arguments the sweep cannot give: {', '.join(p.name for p in required)}")
    if _is_builder(result):
        return result.compile(checkpointer=saver), how + " and compiled the builder it returned"
    if _is_compiled(result):
        if result.checkpointer is None or result.checkpointer is True:
            return result.copy(update={"checkpointer": saver}), how + " (it compiled without a checkpointer; the sweep's was set)"
        return result, how
    raise GraphShapeError(f"the factory returned {type(result).__name__}, not a LangGraph graph")


def _needs_async(graph: Any) -> bool:
    from langgraph._internal._runnable import RunnableCallable

    for node in getattr(graph, "nodes", {}).values():
        bound = getattr(node, "bound", None)
        stack = [bound]
        while stack:
            r = stack.pop()
            if isinstance(r, RunnableCallable) and r.func is None and r.afunc is not None:
                return True
            stack.extend(getattr(r, "steps", []) or [])
    return False


_function_location = function_location


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


# -- the session -------------------------------------------------------------------------
class LangGraphSession(Session):
    fork_forms = ("bare", "map")

    def __init__(self, graph: Any, saver: Any, instruments: Instruments, probe: SaverProbe, thread_id: str,
                 extra: dict[str, Any], is_async: bool, how: str, closers: list) -> None:
        self.graph = graph
        self.saver = saver
        self.instruments = instruments
        self.probe = probe
        self.thread_id = thread_id
        self.is_async = is_async
        self.how = how
        self._closers = closers
        self._loop: asyncio.AbstractEventLoop | None = None
        recorder = _make_recorder(instruments, is_async)
        configurable: dict[str, Any] = {**extra, "thread_id": thread_id}
        if not is_async:
            configurable[RUNNER_SUBMIT_KEY] = _runner_submit
        self.config: dict[str, Any] = {"configurable": configurable, "callbacks": [recorder]}
        self._plain = {"configurable": {**extra, "thread_id": thread_id}}

    # -- invoking ---------------------------------------------------------------------
    def _run(self, coro_factory):
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

    def _state(self, config: dict[str, Any] | None = None, *, subgraphs: bool = False):
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
            inner = next((t for t in getattr(state, "tasks", ()) or ()
                          if getattr(t, "state", None) is not None and tuple(getattr(t.state, "next", ()) or ())), None)
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
            return prefix + task.name

        found = []
        for task in getattr(state, "tasks", ()) or ():
            for intr in getattr(task, "interrupts", ()) or ():
                unit = self.instruments.park_units.get(str(intr.id)) or innermost(task, {str(intr.id)}, "")
                found.append(PendingInterrupt(str(intr.id), unit, to_jsonable(intr.value)))
        if not found:
            for intr in getattr(state, "interrupts", ()) or ():
                found.append(PendingInterrupt(str(intr.id), None, to_jsonable(intr.value)))
        return tuple(found)

    def _command(self, resume: Any):
        from langgraph.types import Command

        return Command(resume=resume)

    def start(self, input: Any) -> Outcome:
        return self._invoke(input, self.config)

    def answer(self, answers, *, at=None, form="auto") -> Outcome:
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

    def _get_tuple(self, config: dict[str, Any]):
        cp = self._checkpointer()
        if cp is None:
            return None
        if self.is_async:
            return self._run(lambda: cp.aget_tuple(config))
        return cp.get_tuple(config)

    def _list(self) -> list:
        cp = self._checkpointer()
        if cp is None:
            return []
        if self.is_async:
            async def collect():
                return [t async for t in cp.alist(self._plain)]

            return self._run(collect)
        return list(cp.list(self._plain))

    def durable_state(self) -> DurableState:
        tup = self._get_tuple({"configurable": {"thread_id": self.thread_id, "checkpoint_ns": ""}})
        if tup is None:
            return DurableState(False)
        completed = frozenset(
            tid for tid, channel, _ in (tup.pending_writes or []) if tid != NULL_TASK_ID and channel not in _NOT_OUTPUT
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
        return (state.config or {}).get("configurable", {}).get("checkpoint_id")

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
        for tup in sorted(tuples, key=lambda t: ((t.metadata or {}).get("step", -99), t.config["configurable"]["checkpoint_id"])):
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
                            writers.append(task_nodes.get(tid, (f"task {tid[:8]}", None))[0] if tid != NULL_TASK_ID else "state update")
                found.append(InvalidState(p.field, p.error, to_jsonable(p.value), step, tuple(dict.fromkeys(writers)) or ("unknown",)))
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
                    loc = _function_location(func) if func is not None else None
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
                loc = _function_location(func) if func is not None else None
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


def _custom_saver(store: StoreSettings) -> Any:
    """A user's ``BaseCheckpointSaver`` from ``package.module:factory`` (``store.location``).

    The factory is called with a directory private to the cell (shared by the
    cell's processes) when it takes one argument, else with none; what it
    returns is the saver every process of the cell uses.
    """
    import importlib

    from langgraph.checkpoint.base import BaseCheckpointSaver

    module, _, attr = store.location.partition(":")
    factory: Any = importlib.import_module(module)
    for part in attr.split("."):
        factory = getattr(factory, part)
    import os

    os.makedirs(store.directory, exist_ok=True)
    params = inspect.signature(factory).parameters
    saver = factory(store.directory) if len(params) >= 1 else factory()
    if not isinstance(saver, BaseCheckpointSaver):
        raise GraphShapeError(f"--saver {store.location} returned {type(saver).__name__}, not a BaseCheckpointSaver")
    return saver


# -- the adapter --------------------------------------------------------------------------
class LangGraphAdapter(Adapter):
    name = "langgraph"
    keeps_factory = True
    distributions = ("langgraph", "langgraph-checkpoint", "langgraph-checkpoint-sqlite", "langgraph-checkpoint-postgres")

    def preload_modules(self) -> list[str]:
        return list(PRELOAD)

    def accepts(self, obj: Any) -> bool:
        """A StateGraph builder or a compiled Pregel graph (a factory is decided by :func:`detect`)."""
        import sys

        if "langgraph.graph" not in sys.modules and "langgraph.pregel" not in sys.modules:
            return False
        return _is_builder(obj) or _is_compiled(obj)

    def prepare_process(self, instruments: Instruments, store: StoreSettings) -> None:
        _patch_executors()
        _patch_interrupt(instruments)

    def schedule_escaped(self) -> bool:
        return SEQUENCER.escaped

    def effect_context(self) -> tuple[str | None, int | None, str | None]:
        return _current_context()

    def _make_saver(self, store: StoreSettings, is_async: bool, loop_runner) -> tuple[Any, list]:
        closers: list = []
        if store.backend == "custom":
            return _custom_saver(store), closers
        if store.backend == "memory":
            from langgraph.checkpoint.memory import InMemorySaver

            return InMemorySaver(), closers
        if store.backend == "sqlite":
            if is_async:
                import aiosqlite
                from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

                async def make_sqlite():  # the async savers bind to the running loop at construction
                    conn = await aiosqlite.connect(store.location)
                    return conn, AsyncSqliteSaver(conn)

                conn, saver = loop_runner(make_sqlite)
                closers.append(conn.close)
                return saver, closers
            import sqlite3

            from langgraph.checkpoint.sqlite import SqliteSaver

            conn = sqlite3.connect(store.location, check_same_thread=False, timeout=60)
            closers.append(conn.close)
            return SqliteSaver(conn), closers
        if store.backend == "postgres":
            from psycopg.rows import dict_row

            schema = store.schema or "public"
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", schema):
                raise ValueError(f"invalid PostgreSQL schema name {schema!r}")
            options = f"-c search_path={schema}"
            if is_async:
                from psycopg import AsyncConnection
                from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

                async def make_postgres():
                    c = await AsyncConnection.connect(store.location, autocommit=True, prepare_threshold=0,
                                                      row_factory=dict_row, options=options)
                    await c.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
                    saver = AsyncPostgresSaver(c)
                    await saver.setup()
                    return c, saver

                conn, saver = loop_runner(make_postgres)
                closers.append(conn.close)
                return saver, closers
            import psycopg
            from langgraph.checkpoint.postgres import PostgresSaver

            conn = psycopg.connect(store.location, autocommit=True, prepare_threshold=0, row_factory=dict_row, options=options)
            conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
            closers.append(conn.close)
            saver = PostgresSaver(conn)
            saver.setup()
            return saver, closers
        raise ValueError(f"unknown backend {store.backend!r}")

    def open(self, obj: Any, store: StoreSettings, instruments: Instruments, thread_id: str, config: dict[str, Any]) -> Session:
        probe = SaverProbe(instruments, defer=store.write_order == "deferred")
        saver, closers = self._make_saver(store, False, None)
        instrument_saver(saver, probe)
        graph, how = build_graph(obj, saver)
        if not _needs_async(graph):
            return LangGraphSession(graph, saver, instruments, probe, thread_id, config, False, how, closers)
        # Async-only nodes need ainvoke and an async saver: rebuild around one.
        for close in closers:
            close()
        loop = asyncio.new_event_loop()

        def runner(factory):
            return loop.run_until_complete(factory())

        probe.is_async = True
        saver, closers = self._make_saver(store, True, runner)
        instrument_saver(saver, probe)
        graph, how = build_graph(obj, saver)
        session = LangGraphSession(graph, saver, instruments, probe, thread_id, config, True, how, closers)
        session._loop = loop
        return session
