"""LangGraph adapter: all framework knowledge the dynamic stage needs about LangGraph.

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

One module per job:

- :mod:`.schedule`         schedule control: saver operations in submission order, a superstep's tasks inline
- :mod:`.instrumentation`  the instrumented saver (named events, kill points, deferred writes), node runs and
                           served values recorded, the running node for effect records
- :mod:`.build`            the user's graph built around the sweep's saver (builder, compiled graph, factory),
                           the saver for each backend
- :mod:`.session`          one graph on one thread: invoking, parks, durable state, validity, node locations

and :class:`LangGraphAdapter` here, which ties them to the framework-neutral interface.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from resume_audit.dynamic.adapters.base import Adapter, Instruments, Session, StoreSettings
from resume_audit.frameworks.langgraph.adapter.build import (
    GraphShapeError,
    build_graph,
    is_builder,
    is_compiled,
    make_saver,
    needs_async,
)
from resume_audit.frameworks.langgraph.adapter.instrumentation import (
    SaverProbe,
    current_context,
    instrument_saver,
    is_instrumented,
    patch_interrupt,
    qualified_node,
)
from resume_audit.frameworks.langgraph.adapter.schedule import SEQUENCER, patch_executors
from resume_audit.frameworks.langgraph.adapter.session import LangGraphSession

__all__ = [
    "GraphShapeError",
    "LangGraphAdapter",
    "LangGraphSession",
    "SaverProbe",
    "build_graph",
    "instrument_saver",
    "is_instrumented",
    "qualified_node",
]

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


class LangGraphAdapter(Adapter):
    name = "langgraph"
    keeps_factory = True
    distributions = (
        "langgraph",
        "langgraph-checkpoint",
        "langgraph-checkpoint-sqlite",
        "langgraph-checkpoint-postgres",
    )

    def preload_modules(self) -> list[str]:
        return list(PRELOAD)

    def accepts(self, obj: Any) -> bool:
        """A StateGraph builder or a compiled Pregel graph (a factory is decided by :func:`detect`)."""
        import sys

        if "langgraph.graph" not in sys.modules and "langgraph.pregel" not in sys.modules:
            return False
        return is_builder(obj) or is_compiled(obj)

    def prepare_process(self, instruments: Instruments, store: StoreSettings) -> None:
        patch_executors()
        patch_interrupt(instruments)

    def schedule_escaped(self) -> bool:
        return SEQUENCER.escaped

    def effect_context(self) -> tuple[str | None, int | None, str | None]:
        return current_context()

    def open(
        self, obj: Any, store: StoreSettings, instruments: Instruments, thread_id: str, config: dict[str, Any]
    ) -> Session:
        probe = SaverProbe(instruments, defer=store.write_order == "deferred")
        saver, closers = make_saver(store, False, None)
        instrument_saver(saver, probe)
        graph, how = build_graph(obj, saver)
        if not needs_async(graph):
            return LangGraphSession(graph, saver, instruments, probe, thread_id, config, False, how, closers)
        # Async-only nodes need ainvoke and an async saver: rebuild around one.
        for close in closers:
            close()
        loop = asyncio.new_event_loop()

        def runner(factory: Callable[[], Awaitable[Any]]) -> Any:
            return loop.run_until_complete(factory())

        probe.is_async = True
        saver, closers = make_saver(store, True, runner)
        instrument_saver(saver, probe)
        graph, how = build_graph(obj, saver)
        session = LangGraphSession(graph, saver, instruments, probe, thread_id, config, True, how, closers)
        session._loop = loop
        return session
