"""Schedule control: one legal, repeatable schedule of LangGraph's executor.

With ``durability="async"`` the order in which background writes land
relative to the next node is a thread race, so an unserialised sweep would
give different verdicts run to run. The adapter therefore runs every saver
operation of a process in submission order (a sequencer wrapped around the
executor's submissions) and lets a node start only once every operation
submitted before it has completed. For sync graphs the tasks of one superstep
also run one after another in the loop's task order (through the
runner-submit hook), so parallel branches interleave the same way every run.
That is one legal schedule of the stock executor -- the one where storage
keeps up -- so every duplicate it exposes can happen in production, and a kill
point names the same durable prefix every time. (The wider async window, where
the next node's effect fires before the previous write lands, is not explored
by this schedule; async graphs keep the framework's own task concurrency.)
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from concurrent.futures import Future

_DRAIN_LIMIT_S = 30.0  # deadlock escape only; reaching it is reported, never part of a verdict


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

    def wrap(self, fn: Callable[..., Any]) -> tuple[Callable[..., Any], int]:
        """``fn`` held back until every operation submitted before it has completed, and its sequence number."""
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

        return run, seq

    def wrap_async(self, fn: Callable[..., Any]) -> Callable[..., Any]:
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


def inline_submit(
    fn: Callable[..., Any],
    *args: Any,
    __name__: str | None = None,
    __cancel_on_exit__: bool = False,
    __reraise_on_exit__: bool = True,
    __next_tick__: bool = False,
    **kwargs: Any,
) -> Future[Any]:
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


def runner_submit() -> Callable[..., Future[Any]]:  # what LangGraph calls to get the submit function
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


def patch_executors() -> None:
    """Route saver operations submitted to LangGraph's executors through ``SEQUENCER``."""
    global _PATCHED
    if _PATCHED:
        return
    from langgraph.pregel import _executor

    sync_submit = _executor.BackgroundExecutor.submit
    async_submit = _executor.AsyncBackgroundExecutor.submit

    def submit(self: Any, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if _is_saver_op(fn):
            wrapped, seq = SEQUENCER.wrap(fn)
            fut = sync_submit(self, wrapped, *args, **kwargs)

            def done(f: Future[Any]) -> None:
                if f.cancelled():
                    SEQUENCER.cancelled(seq)

            fut.add_done_callback(done)
            return fut
        return sync_submit(self, fn, *args, **kwargs)

    def asubmit(self: Any, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if _is_saver_op(fn):
            return async_submit(self, SEQUENCER.wrap_async(fn), *args, **kwargs)
        return async_submit(self, fn, *args, **kwargs)

    _executor.BackgroundExecutor.submit = submit  # type: ignore[method-assign]
    _executor.AsyncBackgroundExecutor.submit = asubmit  # type: ignore[method-assign]
    _PATCHED = True
