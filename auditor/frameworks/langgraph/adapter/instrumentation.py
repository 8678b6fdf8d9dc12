"""What the sweep observes of a LangGraph run: every persistence operation, every node run, every served value.

The instrumented saver is the user's saver class with a subclass swapped in
(``__class__`` assignment), so every other behaviour of ``SqliteSaver``,
``PostgresSaver`` or ``InMemorySaver`` stays exactly the stock one: it names
each ``put`` / ``put_writes`` as an event (where a crash cell may kill the
process) and, for the write-order probe, defers each ``put_writes`` past the
next ``put``. A callback handler records node executions (after the
sequencer's drain, :mod:`.schedule`), and a wrapped ``interrupt()`` records
the value each park was served -- the fork probe's oracle.
"""

from __future__ import annotations

import threading
from typing import Any

from resume_audit.dynamic.adapters.base import Instruments
from resume_audit.dynamic.values import canonical
from resume_audit.frameworks.langgraph.adapter.schedule import SEQUENCER

NULL_TASK_ID = "00000000-0000-0000-0000-000000000000"
INTERRUPT = "__interrupt__"
ERROR = "__error__"
RESUME = "__resume__"
#: write channels that are not a task's output
NOT_OUTPUT = {INTERRUPT, ERROR, RESUME}


class SaverProbe:
    """Names each persistence operation, crashes at the kill point, defers writes on request."""

    def __init__(self, instruments: Instruments, defer: bool) -> None:
        self.instruments = instruments
        self.defer = defer
        self.buffer: list[tuple[dict[str, Any], list[Any], str, str]] = []
        self.cp_steps: dict[str, int | None] = {}
        self.saver: Any = None
        self.is_async = False
        self._lock = threading.Lock()

    @staticmethod
    def _where(config: dict[str, Any]) -> str:
        """ " in subgraph <node>" for a nested graph's own checkpoint namespace, else ""."""
        ns = (config.get("configurable") or {}).get("checkpoint_ns") or ""
        return f" in subgraph {ns.split('|')[-1].split(':')[0]}" if ns else ""

    def after_put(self, config: dict[str, Any], checkpoint: dict[str, Any], metadata: dict[str, Any]) -> None:
        step = metadata.get("step")
        self.cp_steps[checkpoint["id"]] = step
        self.instruments.saver_ops += 1
        what = f"put of checkpoint step {step} ({metadata.get('source', '?')}){self._where(config)}"
        self.instruments.events.emit("put", what, step=step)

    def after_put_writes(self, config: dict[str, Any], writes: Any, task_id: str, task_path: str) -> None:
        self.instruments.saver_ops += 1
        node, step, what = self.describe_writes(config, writes, task_id, task_path)
        self.instruments.events.emit("put_writes", what + self._where(config), step=step, node=node)

    def _checkpoint_step(self, config: dict[str, Any]) -> int | None:
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

    def describe_writes(
        self, config: dict[str, Any], writes: Any, task_id: str, task_path: str
    ) -> tuple[str | None, int | None, str]:
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

    base: Any = cls

    class Instrumented(base):  # type: ignore[misc]  # the stock class is only known at run time
        __slots__ = ()
        _ra_instrumented = True
        _ra_probe: SaverProbe

        def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            result = super().put(config, checkpoint, metadata, new_versions)
            self._ra_probe.after_put(config, checkpoint, metadata)
            self._ra_flush()
            return result

        def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
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

        async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            result = await super().aput(config, checkpoint, metadata, new_versions)
            self._ra_probe.after_put(config, checkpoint, metadata)
            await self._ra_aflush()
            return result

        async def aput_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
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


def make_recorder(instruments: Instruments, is_async: bool) -> Any:
    """The callback handler that records every node execution of the graph (after the sequencer's drain)."""
    from langchain_core.callbacks import AsyncCallbackHandler, BaseCallbackHandler

    runs: dict[Any, str] = {}
    attempts: dict[str, int] = {}

    def node_start(run_id: Any, parent_run_id: Any, metadata: dict[str, Any] | None) -> tuple[str, str, Any] | None:
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

            async def on_chain_start(
                self,
                serialized: Any,
                inputs: Any,
                *,
                run_id: Any,
                parent_run_id: Any = None,
                tags: Any = None,
                metadata: dict[str, Any] | None = None,
                **kwargs: Any,
            ) -> None:
                started = node_start(run_id, parent_run_id, metadata)
                if started:
                    await SEQUENCER.adrain()
                    record(*started)

        return AsyncNodeRecorder()

    class NodeRecorder(BaseCallbackHandler):
        run_inline = True

        def on_chain_start(
            self,
            serialized: Any,
            inputs: Any,
            *,
            run_id: Any,
            parent_run_id: Any = None,
            tags: Any = None,
            metadata: dict[str, Any] | None = None,
            **kwargs: Any,
        ) -> None:
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


def current_context() -> tuple[str | None, int | None, str | None]:
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


def patch_interrupt(instruments: Instruments) -> None:
    """Record the value every ``interrupt()`` call is served (the FD oracle)."""
    import sys

    import langgraph.types as lg_types

    original = lg_types.interrupt
    if getattr(original, "__resume_audit__", False):
        return

    from langgraph.errors import GraphInterrupt

    def interrupt(value: Any, *args: Any, **kwargs: Any) -> Any:
        node, step, _task = current_context()
        try:
            served = original(value, *args, **kwargs)
        except GraphInterrupt as exc:  # parking: remember which unit raised it (a @task hides behind its caller)
            if node:
                for intr in exc.args[0] if exc.args else ():
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
