"""RA501: a custom checkpointer whose ``put_writes`` is not ordered before the next ``put``."""

from __future__ import annotations

from typing import Iterable, Iterator

import libcst as cst

from resume_audit.analysis.resolve import dotted_text
from resume_audit.facts.model import CallInfo, ClassInfo, FunctionInfo
from resume_audit.facts.syntax import argument, is_none, names_in
from resume_audit.findings import Finding, Related, Severity
from resume_audit.frameworks.langgraph import names as langgraph
from resume_audit.rules.base import Example, Rule, RuleContext

#: Calls that hand work to something that runs later, returning before it is done.
_SUBMIT_METHODS = frozenset(
    {
        "submit",
        "run_in_executor",
        "create_task",
        "ensure_future",
        "call_soon",
        "call_soon_threadsafe",
        "run_coroutine_threadsafe",
        "start_soon",
        "apply_async",
        "delay",
        "add_task",
        "put_nowait",
        "spawn",
    }
)
_SUBMIT_FUNCTIONS = frozenset(
    {
        "asyncio.create_task",
        "asyncio.ensure_future",
        "asyncio.run_coroutine_threadsafe",
        "asyncio.tasks.create_task",
        "asyncio.tasks.ensure_future",
    }
)
_THREAD_TYPES = frozenset({"threading.Thread", "multiprocessing.Process", "threading.Timer"})
_QUEUE_TYPES = frozenset(
    {
        "queue.Queue",
        "queue.SimpleQueue",
        "queue.LifoQueue",
        "asyncio.Queue",
        "asyncio.queues.Queue",
        "multiprocessing.Queue",
        "janus.Queue",
    }
)
_WAIT_METHODS = frozenset({"result", "join", "wait", "exception"})
_WAIT_FUNCTIONS = frozenset(
    {
        "concurrent.futures.wait",
        "concurrent.futures.as_completed",
        "asyncio.gather",
        "asyncio.wait",
        "asyncio.wait_for",
        "asyncio.shield",
    }
)
_EXECUTORS = frozenset({"concurrent.futures.ThreadPoolExecutor", "concurrent.futures.thread.ThreadPoolExecutor"})
#: methods of the saver's own dicts, lists and sets: a put_writes that only calls these keeps the writes in memory
_CONTAINER_METHODS = frozenset(
    {"get", "setdefault", "append", "extend", "update", "pop", "items", "keys", "values", "add", "insert", "copy"}
)
#: calls that compute in the process (serialising a value, building a key) and store nothing
_LOCAL_RECEIVERS = ("self.serde", "self.jsonplus_serde")


def saver_base(cls: ClassInfo, ctx: RuleContext, depth: int = 0) -> str | None:
    """The LangGraph saver class ``cls`` derives from (through project bases), if any."""
    if depth > 5:
        return None
    resolver = ctx.project.resolver(cls.module)
    for base in cls.node.bases:
        expr = base.value.value if isinstance(base.value, cst.Subscript) else base.value  # BaseCheckpointSaver[str]
        names = resolver.names(expr, None)
        hit = names & langgraph.STOCK_SAVERS
        if hit:
            return sorted(hit)[0]
        if any(n.startswith("remit.") for n in names):
            return None
        for n in names:
            found = ctx.project.lookup(n, near=cls.module)
            if isinstance(found, ClassInfo) and found is not cls:
                inner = saver_base(found, ctx, depth + 1)
                if inner is not None:
                    return inner
    return None


class UnorderedPutWrites(Rule):
    id = "RA501"
    confirmed_by = ("RA707",)
    name = "unordered-put-writes"
    properties = ("RD",)
    severity = Severity.WARNING
    frameworks = ("langgraph",)
    #: a saver can inherit BaseCheckpointSaver through a project base class in another module
    triggers = ("def put_writes", "def aput_writes")
    summary = "Custom checkpointer whose put_writes returns before the writes are stored (fire-and-forget), or never stores them (a no-op, or only a dict in process memory): recovery depends on the race with the next put, or loses the writes."
    description = """
A subclass of LangGraph's `BaseCheckpointSaver` (or of a stock saver)
implements `put_writes` / `aput_writes` by handing the work to something
that runs later -- `executor.submit(...)`, `loop.run_in_executor(...)`,
`asyncio.create_task(...)`, a `threading.Thread(...).start()`, a queue a
background worker drains -- and returns without waiting for it; or never
stores them at all: `put_writes` is a no-op (`pass`), or keeps the writes
only in a dict or list of the saver object while `put` stores checkpoints
in a database.
"""
    runtime = """
LangGraph treats the return of `put_writes` as "this task's writes are
stored": the loop already calls the saver from a background executor (the
default `durability="async"`), and in `"sync"` mode it waits for the step's
`put` future only, trusting that writes submitted earlier are done. When
the saver itself defers the write, the next `put` (the step's checkpoint)
can reach storage first. A crash in between leaves a checkpoint whose
pending writes are missing: recovery re-runs a completed node, or not,
depending on which write won the race (RD; LangGraph #8039). Even the stock
loop's durable order varies between runs (measured on langgraph 1.2.24: a
START->{a,b}->END graph performs `put, put_writes(START), put, put_writes(a),
put_writes(b), put` in varying order, even under `sync`); a deferring saver
adds a window the loop cannot see at all. A saver that never stores the
writes loses them on every crash or restart: the completed tasks of the
interrupted step re-run with their effects, and the interrupts and resume
values LangGraph records as writes are gone.
"""
    fix = """
Store the writes before returning: call the storage synchronously, or wait
for what you submitted (`self._executor.submit(...).result()`, `await
loop.run_in_executor(...)`, `thread.join()`). If you batch writes in the
background for speed, make `put` / `aput` wait for every pending write
first (`for f in self._pending: f.result()`).
"""
    no_autofix = """
Making a custom saver's `put_writes` wait for its storage is a change to
the saver's concurrency design (futures, transactions), not to one line.
"""
    not_flagged = """
- `put_writes` that waits for what it submitted (`.result()`, `await`, `join()`, `concurrent.futures.wait`, `asyncio.gather`) -- including the sync-over-async bridge `asyncio.run_coroutine_threadsafe(self.aput_writes(...), self.loop).result()` the stock async savers use;
- savers that keep the futures (`self._pending.append(fut)`) and wait for them in `put` / `aput` before storing the checkpoint;
- savers whose `put` and `put_writes` both go through one single-worker executor (`ThreadPoolExecutor(max_workers=1)`): it runs them in submission order;
- classes that are not LangGraph savers, and remit's wrapper (it journals writes in its own sequencer);
- savers that keep everything in memory, checkpoints included (an in-memory saver: RA601's concern when it is served), and a `put_writes` that raises (the run fails loudly instead).
"""

    INVALID = (
        Example(
            """
            from concurrent.futures import ThreadPoolExecutor

            from langgraph.checkpoint.base import BaseCheckpointSaver

            class BatchingSaver(BaseCheckpointSaver):
                def __init__(self, store):
                    super().__init__()
                    self.store = store
                    self.pool = ThreadPoolExecutor(max_workers=4)

                def put(self, config, checkpoint, metadata, new_versions):
                    self.store.save_checkpoint(config, checkpoint, metadata)
                    return config

                def put_writes(self, config, writes, task_id, task_path=""):  # expect: RA501
                    self.pool.submit(self.store.save_writes, config, writes, task_id)
            """,
            note="Fire-and-forget on a thread pool.",
        ),
        Example(
            """
            import asyncio

            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

            class FastSaver(AsyncPostgresSaver):
                async def aput_writes(self, config, writes, task_id, task_path=""):  # expect: RA501
                    asyncio.create_task(super().aput_writes(config, writes, task_id, task_path))
            """,
            note="Async: a task created and never awaited, subclassing a stock saver.",
        ),
        Example(
            {
                "infra/base.py": """
                    from langgraph.checkpoint.base import BaseCheckpointSaver as Base

                    class KVSaver(Base):
                        def __init__(self, kv):
                            super().__init__()
                            self.kv = kv
                    """,
                "infra/saver.py": """
                    import queue
                    import threading

                    from .base import KVSaver

                    class QueuedSaver(KVSaver):
                        def __init__(self, kv):
                            super().__init__(kv)
                            self.outbox = queue.Queue()
                            threading.Thread(target=self._drain, daemon=True).start()

                        def _drain(self):
                            while True:
                                key, value = self.outbox.get()
                                self.kv.set(key, value)

                        def put(self, config, checkpoint, metadata, new_versions):
                            self.kv.set(config["configurable"]["thread_id"], checkpoint)
                            return config

                        def put_writes(self, config, writes, task_id, task_path=""):  # expect: RA501
                            self.outbox.put((task_id, writes))
                    """,
                "infra/__init__.py": "",
            },
            note="A queue drained by a background thread; the saver base class is in a sibling module.",
        ),
        Example(
            """
            from langgraph.checkpoint.base import BaseCheckpointSaver

            class RedisSaver(BaseCheckpointSaver):
                def __init__(self, redis):
                    super().__init__()
                    self.redis = redis

                def put(self, config, checkpoint, metadata, new_versions):
                    self.redis.set(config["configurable"]["thread_id"], self.serde.dumps_typed(checkpoint))
                    return config

                async def aput_writes(self, config, writes, task_id, task_path=""):  # expect: RA501
                    \"\"\"Store pending writes.\"\"\"
                    pass
            """,
            note="A no-op: every pending write (interrupts and resume values among them) is dropped.",
        ),
        Example(
            """
            from collections import defaultdict

            from langgraph.checkpoint.base import BaseCheckpointSaver

            class EventStoreSaver(BaseCheckpointSaver):
                def __init__(self, client):
                    super().__init__()
                    self.client = client
                    self.writes = defaultdict(dict)

                def put(self, config, checkpoint, metadata, new_versions):
                    self.client.append_to_stream(config["configurable"]["thread_id"], checkpoint)
                    return config

                def put_writes(self, config, writes, task_id, task_path=""):  # expect: RA501
                    key = (config["configurable"]["thread_id"], config["configurable"]["checkpoint_id"])
                    for idx, (channel, value) in enumerate(writes):
                        self.writes[key][(task_id, idx)] = (task_id, channel, self.serde.dumps_typed(value))

                async def aput_writes(self, config, writes, task_id, task_path=""):  # expect: RA501
                    self.put_writes(config, writes, task_id, task_path)
            """,
            note="Checkpoints go to the event store, pending writes only to a dict of the saver object.",
        ),
    )
    VALID = (
        Example(
            """
            import asyncio

            from langgraph.checkpoint.base import BaseCheckpointSaver

            class BridgedSaver(BaseCheckpointSaver):
                def __init__(self, loop):
                    super().__init__()
                    self.loop = loop

                def put_writes(self, config, writes, task_id, task_path=""):
                    return asyncio.run_coroutine_threadsafe(
                        self.aput_writes(config, writes, task_id, task_path), self.loop
                    ).result()
            """,
            note="The stock sync-over-async bridge waits for the result.",
        ),
        Example(
            """
            from concurrent.futures import ThreadPoolExecutor, wait

            from langgraph.checkpoint.base import BaseCheckpointSaver

            class DeferredSaver(BaseCheckpointSaver):
                def __init__(self, store):
                    super().__init__()
                    self.store = store
                    self.pool = ThreadPoolExecutor(max_workers=8)
                    self.pending = []

                def put_writes(self, config, writes, task_id, task_path=""):
                    self.pending.append(self.pool.submit(self.store.save_writes, config, writes, task_id))

                def put(self, config, checkpoint, metadata, new_versions):
                    wait(self.pending)
                    self.pending.clear()
                    self.store.save_checkpoint(config, checkpoint, metadata)
                    return config
            """,
            note="Deferred, but put waits for every pending write first: ordered.",
        ),
        Example(
            """
            from concurrent.futures import ThreadPoolExecutor

            from langgraph.checkpoint.base import BaseCheckpointSaver

            class SerialSaver(BaseCheckpointSaver):
                def __init__(self, store):
                    super().__init__()
                    self.store = store
                    self.worker = ThreadPoolExecutor(max_workers=1)

                def put(self, config, checkpoint, metadata, new_versions):
                    self.worker.submit(self.store.save_checkpoint, config, checkpoint, metadata).result()
                    return config

                def put_writes(self, config, writes, task_id, task_path=""):
                    self.worker.submit(self.store.save_writes, config, writes, task_id)
            """,
            note="One single-worker executor for both: the writes run before the next put.",
        ),
        Example(
            """
            from concurrent.futures import ThreadPoolExecutor

            class ReportWriter:
                def __init__(self):
                    self.pool = ThreadPoolExecutor()

                def put_writes(self, config, writes, task_id):
                    self.pool.submit(print, writes)
            """,
            note="Not a LangGraph saver.",
        ),
        Example(
            """
            from langgraph.checkpoint.base import BaseCheckpointSaver

            class DictSaver(BaseCheckpointSaver):
                def __init__(self):
                    super().__init__()
                    self.checkpoints = {}
                    self.writes = {}

                def put(self, config, checkpoint, metadata, new_versions):
                    self.checkpoints[config["configurable"]["thread_id"]] = checkpoint
                    return config

                def put_writes(self, config, writes, task_id, task_path=""):
                    self.writes.setdefault(config["configurable"]["thread_id"], []).extend(writes)
            """,
            note="Everything in memory, checkpoints too: the writes live exactly as long as the checkpoints.",
        ),
        Example(
            """
            from langgraph.checkpoint.base import BaseCheckpointSaver

            class ReadOnlySaver(BaseCheckpointSaver):
                def __init__(self, db):
                    super().__init__()
                    self.db = db

                def put(self, config, checkpoint, metadata, new_versions):
                    self.db.insert(checkpoint)
                    return config

                def put_writes(self, config, writes, task_id, task_path=""):
                    raise NotImplementedError("this saver does not support pending writes")
            """,
            note="Raises: the run fails loudly rather than losing the writes.",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        for cls in ctx.module.classes:
            base = None
            for name in langgraph.PUT_WRITES_METHODS:
                fn = cls.methods.get(name)
                if fn is None:
                    continue
                if base is None:
                    base = saver_base(cls, ctx)
                    if base is None:
                        break
                deferred = self._deferred(fn, cls, ctx)
                if deferred is None:
                    kept = self._never_stored(fn, cls, ctx)
                    if kept is not None:
                        yield ctx.finding(
                            fn.node.name,
                            f"{cls.name}.{name} {kept}, while {cls.name} stores its checkpoints outside the process. "
                            f"LangGraph takes the return as 'writes durable': after a crash or restart the thread's "
                            f"checkpoint has none of its pending writes, so the completed tasks of the step re-run "
                            f"with their effects and recorded interrupts and resume values are lost (RD).",
                        )
                    continue
                call, how = deferred
                yield ctx.finding(
                    fn.node.name,
                    f"{cls.name}.{name} {how} and returns before the writes are stored. LangGraph takes the return "
                    f"as 'writes durable', so the step's next put can reach storage first; a crash in between "
                    f"leaves a checkpoint without these writes and recovery depends on the race (RD, #8039).",
                    related=(Related(ctx.span(call.node), "handed off here, never waited for"),),
                )

    # -- analysis ---------------------------------------------------------
    def _deferred(self, fn: FunctionInfo, cls: ClassInfo, ctx: RuleContext) -> tuple[CallInfo, str] | None:
        for call in fn.calls:
            how = self._hand_off(call, fn, ctx)
            if how is None:
                continue
            if self._awaited_or_waited(call, fn, ctx):
                continue
            holder = self._stored_in(call, fn, ctx)
            if holder is not None and self._put_waits_for(holder, cls, ctx):
                continue
            if self._serial_with_put(call, cls, ctx):
                continue
            return call, how
        return None

    def _never_stored(self, fn: FunctionInfo, cls: ClassInfo, ctx: RuleContext) -> str | None:
        """How ``fn`` (a ``put_writes``) fails to store the writes anywhere durable -- it does nothing,
        or keeps them only in the saver object's containers -- when ``put``/``aput`` does store outside
        the process; None otherwise."""
        if _does_nothing(fn):
            how = "does nothing (the writes are dropped)"
        elif self._in_memory(fn, cls, ctx, 0):
            how = "keeps the writes only in process memory (the saver object's own containers)"
        else:
            return None
        puts = [cls.methods[n] for n in langgraph.PUT_METHODS if n in cls.methods]
        if not puts or all(_does_nothing(p) or self._in_memory(p, cls, ctx, 0, need_store=False) for p in puts):
            return None  # the checkpoints are not stored outside the process either
        return how

    def _in_memory(
        self, fn: FunctionInfo, cls: ClassInfo, ctx: RuleContext, depth: int, need_store: bool = True
    ) -> bool:
        """Does ``fn`` touch nothing but the process: its calls are the saver's container methods,
        builtins, serialisation, or methods of the class that are in memory too (and, with
        ``need_store``, it stores into ``self``: ``self.writes[key] = ...``, ``self.writes.append(...)``)?"""
        stores = self._stores_in_memory(fn, cls, ctx, depth)
        return stores is not None and (stores or not need_store)

    def _stores_in_memory(self, fn: FunctionInfo, cls: ClassInfo, ctx: RuleContext, depth: int) -> bool | None:
        """None when ``fn`` may touch something outside the process; else whether it stores into ``self``
        (itself or through the class's own in-memory methods, each walked once)."""
        if depth > 3 or any(isinstance(n, (cst.Raise, cst.Yield)) for n in _walk(fn.node.body)):
            return None
        stores = any(_stores_into_self(n) for n in _walk(fn.node.body))
        for call in fn.calls:
            f = call.node.func
            text = dotted_text(f) or ""
            if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.value.value == "self":
                helper = cls.methods.get(f.attr.value)
                if helper is None or helper is fn:
                    return None
                inner = self._stores_in_memory(helper, cls, ctx, depth + 1)
                if inner is None:
                    return None
                stores = stores or inner
                continue
            if text.startswith(_LOCAL_RECEIVERS):
                continue
            if isinstance(f, cst.Attribute) and f.attr.value in _CONTAINER_METHODS:
                if text.startswith("self.") and f.attr.value not in ("get", "items", "keys", "values", "copy"):
                    stores = True
                continue
            names = ctx.resolver.call_names(call.node, fn)
            if names and all(n.startswith("builtins.") for n in names):
                continue
            return None
        return stores

    def _hand_off(self, call: CallInfo, fn: FunctionInfo, ctx: RuleContext) -> str | None:
        node = call.node
        names = ctx.resolver.call_names(node, fn)
        f = node.func
        if names & _SUBMIT_FUNCTIONS:
            return f"hands the writes to {ctx.describe_call(node)}"
        if isinstance(f, cst.Attribute):
            method = f.attr.value
            if method in _SUBMIT_METHODS:
                return f"hands the writes to {ctx.describe_call(node)}"
            if (
                method == "start"
                and isinstance(f.value, cst.Call)
                and ctx.resolver.call_names(f.value, fn) & _THREAD_TYPES
            ):
                return "starts a thread to store them"
            if method == "start" and isinstance(f.value, cst.Name):
                found = ctx.resolver.binding_value(f.value.value, fn, call.order)
                if (
                    found is not None
                    and isinstance(found[0].value, cst.Call)
                    and ctx.resolver.call_names(found[0].value, found[1]) & _THREAD_TYPES
                ):
                    return "starts a thread to store them"
            if method == "put":
                receiver = ctx.resolver.names(f.value, fn)
                text = dotted_text(f.value) or ""
                if receiver & _QUEUE_TYPES or "queue" in text.lower() or "outbox" in text.lower():
                    return f"puts them on a queue ({ctx.module.code(f.value)})"
        return None

    def _awaited_or_waited(self, call: CallInfo, fn: FunctionInfo, ctx: RuleContext) -> bool:
        module = ctx.module
        parent = module.parent(call.node)
        if isinstance(parent, cst.Await):
            return True
        if isinstance(parent, cst.Attribute) and parent.attr.value in _WAIT_METHODS:
            return True
        # fut = ex.submit(...); ...; fut.result() / await fut / wait([fut]) / t.join()
        bound = None
        if (
            isinstance(parent, cst.Assign)
            and len(parent.targets) == 1
            and isinstance(parent.targets[0].target, cst.Name)
        ):
            bound = parent.targets[0].target.value
        f = call.node.func
        if bound is None and isinstance(f, cst.Attribute) and f.attr.value == "start" and isinstance(f.value, cst.Name):
            bound = f.value.value  # t = Thread(...); t.start(); t.join()
        if bound is None:
            return False
        for other in fn.calls:
            if other.order <= call.order:
                continue
            of = other.node.func
            if (
                isinstance(of, cst.Attribute)
                and of.attr.value in _WAIT_METHODS
                and isinstance(of.value, cst.Name)
                and of.value.value == bound
            ):
                return True
            if ctx.resolver.call_names(other.node, fn) & _WAIT_FUNCTIONS and bound in names_in(
                other.node, self_attributes=True
            ):
                return True
        for aw in fn.awaits:
            if module.order(aw) > call.order and bound in names_in(aw.expression, self_attributes=True):
                return True
        return False

    def _stored_in(self, call: CallInfo, fn: FunctionInfo, ctx: RuleContext) -> str | None:
        """``self.pending.append(<call>)`` / ``self.fut = <call>`` / the queue the call puts on."""
        module = ctx.module
        parent = module.parent(call.node)
        if isinstance(parent, cst.Arg):
            outer = module.parent(parent)
            if (
                isinstance(outer, cst.Call)
                and isinstance(outer.func, cst.Attribute)
                and outer.func.attr.value in ("append", "add", "put", "extend")
            ):
                text = dotted_text(outer.func.value)
                if text and text.startswith("self."):
                    return text
        if isinstance(parent, cst.Assign):
            t = parent.targets[0].target
            if isinstance(t, cst.Attribute):
                return dotted_text(t)
            if isinstance(t, cst.Subscript):
                return dotted_text(t.value)
            if isinstance(t, cst.Name):
                # fut = ...; self.pending.append(fut)
                for other in fn.calls:
                    of = other.node.func
                    if (
                        other.order > call.order
                        and isinstance(of, cst.Attribute)
                        and of.attr.value in ("append", "add")
                    ):
                        if any(isinstance(a.value, cst.Name) and a.value.value == t.value for a in other.node.args):
                            text = dotted_text(of.value)
                            if text and text.startswith("self."):
                                return text
        f = call.node.func
        if isinstance(f, cst.Attribute) and f.attr.value in ("put", "put_nowait"):
            text = dotted_text(f.value)
            if text and text.startswith("self."):
                return text
        return None

    def _put_waits_for(self, holder: str, cls: ClassInfo, ctx: RuleContext) -> bool:
        """Does ``put`` / ``aput`` (or a self-method it calls) wait for ``holder``?"""
        attr = holder.split(".", 1)[1] if "." in holder else holder
        for name in langgraph.PUT_METHODS:
            put = cls.methods.get(name)
            if put is None:
                continue
            if self._waits_in(put, attr, cls, 0):
                return True
        return False

    def _waits_in(self, fn: FunctionInfo, attr: str, cls: ClassInfo, depth: int) -> bool:
        if depth > 3:
            return False
        stack: list[cst.CSTNode] = [fn.node.body]
        while stack:
            cur = stack.pop()
            if isinstance(cur, cst.Call):
                f = cur.func
                mentions = f"self.{attr}" in names_in(cur, self_attributes=True)
                if mentions and (
                    (isinstance(f, cst.Attribute) and f.attr.value in _WAIT_METHODS | {"gather", "as_completed"})
                    or (isinstance(f, cst.Name) and f.value in ("wait", "gather", "as_completed"))
                ):
                    return True
                if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.value.value == "self":
                    helper = cls.methods.get(f.attr.value)
                    if helper is not None and helper is not fn and self._waits_in(helper, attr, cls, depth + 1):
                        return True
            if isinstance(cur, (cst.For, cst.Await)) and f"self.{attr}" in names_in(cur, self_attributes=True):
                body_calls = [n for n in _walk(cur) if isinstance(n, cst.Call)]
                if isinstance(cur, cst.Await) or any(
                    isinstance(c.func, cst.Attribute) and c.func.attr.value in _WAIT_METHODS for c in body_calls
                ):
                    return True
            stack.extend(cur.children)
        return False

    def _serial_with_put(self, call: CallInfo, cls: ClassInfo, ctx: RuleContext) -> bool:
        """``put`` submits to the same single-worker executor (FIFO), so the writes run first."""
        f = call.node.func
        if not (isinstance(f, cst.Attribute) and f.attr.value == "submit"):
            return False
        text = dotted_text(f.value)
        if not text or not text.startswith("self."):
            return False
        attr = text.split(".", 1)[1]
        single = False
        for binding in cls.attributes.get(attr, []):
            value = binding.value
            if (
                isinstance(value, cst.Call)
                and ctx.project.resolver(cls.module).call_names(value, cls.module.enclosing_function(value))
                & _EXECUTORS
            ):
                workers = argument(value, 0, "max_workers")
                single = isinstance(workers, cst.Integer) and workers.value == "1"
        if not single:
            return False
        for name in langgraph.PUT_METHODS:
            put = cls.methods.get(name)
            if put is None:
                continue
            for c in put.calls:
                pf = c.node.func
                if isinstance(pf, cst.Attribute) and pf.attr.value == "submit" and dotted_text(pf.value) == text:
                    return True
        return False


def _does_nothing(fn: FunctionInfo) -> bool:
    """A body of only a docstring, ``pass``, ``...`` and bare ``return``."""
    for i, stmt in enumerate(fn.node.body.body if isinstance(fn.node.body, cst.IndentedBlock) else [fn.node.body]):
        lines = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else None
        if lines is None:
            return False
        for small in lines:
            if isinstance(small, cst.Pass) or (
                isinstance(small, cst.Return) and (small.value is None or is_none(small.value))
            ):
                continue
            if isinstance(small, cst.Expr) and (
                isinstance(small.value, cst.Ellipsis)
                or (i == 0 and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)))
            ):
                continue
            return False
    return True


def _stores_into_self(node: cst.CSTNode) -> bool:
    """``self.x[...] = ...`` / ``self.x = ...`` / ``self.x[...] += ...``."""
    targets: list[cst.BaseExpression] = []
    if isinstance(node, cst.Assign):
        targets = [t.target for t in node.targets]
    elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
        targets = [node.target]
    for target in targets:
        root = target
        while isinstance(root, (cst.Subscript, cst.Attribute)):
            if isinstance(root, cst.Attribute) and isinstance(root.value, cst.Name) and root.value.value == "self":
                return True
            root = root.value
    return False


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack = [node]
    while stack:
        cur = stack.pop()
        yield cur
        stack.extend(cur.children)
