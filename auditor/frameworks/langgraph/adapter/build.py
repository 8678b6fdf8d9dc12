"""The user's LangGraph program built around the sweep's saver, and the saver for each backend.

A target is a ``StateGraph`` builder (compiled with the sweep's checkpointer),
a compiled graph (its checkpointer replaced), or a factory taking a
checkpointer (called with it). A graph with async-only nodes is rebuilt
around an async saver (``ainvoke``).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable
from typing import Any

from resume_audit.dynamic.adapters.base import ShapeError, StoreSettings, settled


class GraphShapeError(ShapeError):
    """The target is not a LangGraph graph, builder or factory the sweep can drive."""


def is_builder(obj: Any) -> bool:
    from langgraph.graph import StateGraph

    return isinstance(obj, StateGraph)


def is_compiled(obj: Any) -> bool:
    from langgraph.pregel import Pregel

    return isinstance(obj, Pregel)


def build_graph(obj: Any, saver: Any) -> tuple[Any, str]:
    """The compiled graph persisting through ``saver``, and how it was obtained."""
    if is_builder(obj):
        return obj.compile(checkpointer=saver), "compiled the StateGraph builder with the sweep's checkpointer"
    if is_compiled(obj):
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
            p
            for p in sig.parameters.values()
            if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        ]
    if sig is not None and "checkpointer" in sig.parameters:
        others = [p for p in required if p.name != "checkpointer"]
        if others:
            raise GraphShapeError(
                f"the factory needs arguments the sweep cannot give: {', '.join(p.name for p in others)}"
            )
        result, how = obj(checkpointer=saver), "called the factory with checkpointer="
    elif not required:
        result, how = obj(), "called the factory"
    elif len(required) == 1 and required[0].kind != required[0].KEYWORD_ONLY:
        result, how = obj(saver), "called the factory with the checkpointer"
    else:
        raise GraphShapeError(
            f"the factory needs arguments the sweep cannot give: {', '.join(p.name for p in required)}"
        )
    result = settled(result)  # an ``async def`` factory is awaited
    if is_builder(result):
        return result.compile(checkpointer=saver), how + " and compiled the builder it returned"
    if is_compiled(result):
        if result.checkpointer is None or result.checkpointer is True:
            return result.copy(
                update={"checkpointer": saver}
            ), how + " (it compiled without a checkpointer; the sweep's was set)"
        return result, how
    raise GraphShapeError(f"the factory returned {type(result).__name__}, not a LangGraph graph")


def needs_async(graph: Any) -> bool:
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


def custom_saver(store: StoreSettings) -> Any:
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


#: runs a coroutine factory to completion on the session's event loop
LoopRunner = Callable[[Callable[[], Awaitable[Any]]], Any]
#: releases what a saver holds (a connection); may return an awaitable
Closer = Callable[[], Any]


def make_saver(store: StoreSettings, is_async: bool, loop_runner: LoopRunner | None) -> tuple[Any, list[Closer]]:
    """The saver of the cell's backend (async with ``is_async``, built on ``loop_runner``'s loop), and its closers."""
    closers: list[Closer] = []
    if store.backend == "custom":
        return custom_saver(store), closers
    if store.backend == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        return InMemorySaver(), closers
    if store.backend == "sqlite":
        if is_async:
            import aiosqlite
            from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

            async def make_sqlite() -> tuple[Any, Any]:  # the async savers bind to the running loop at construction
                conn = await aiosqlite.connect(store.location)
                return conn, AsyncSqliteSaver(conn)

            assert loop_runner is not None
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
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
            from psycopg import AsyncConnection

            async def make_postgres() -> tuple[Any, Any]:
                c = await AsyncConnection.connect(
                    store.location, autocommit=True, prepare_threshold=0, row_factory=dict_row, options=options
                )
                await c.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
                saver = AsyncPostgresSaver(c)
                await saver.setup()
                return c, saver

            assert loop_runner is not None
            conn, saver = loop_runner(make_postgres)
            closers.append(conn.close)
            return saver, closers
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver

        conn = psycopg.connect(
            store.location, autocommit=True, prepare_threshold=0, row_factory=dict_row, options=options
        )
        conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        closers.append(conn.close)
        saver = PostgresSaver(conn)
        saver.setup()
        return saver, closers
    raise ValueError(f"unknown backend {store.backend!r}")
