"""LlamaIndex Workflows adapter: every piece of ``workflows`` knowledge the dynamic stage needs.

Checked against the installed llama-index-workflows 2.26.1 source (the
``llama_index.core.workflow`` package of llama-index-core re-exports the same
classes, so a target built on the alias is the same program):

- A ``Workflow``'s steps are its methods carrying ``_step_config``
  (``workflows.decorators``); the runtime resolves each step at call time with
  ``getattr(workflow, step_name)`` (``runtime/types/step_function.py``), so an
  instance attribute wrapping the bound method is what runs.
- Human-in-the-loop: a step returns or streams an ``InputRequiredEvent``; the
  caller answers with ``handler.ctx.send_event(HumanResponseEvent(...))``.
  Either a second step consumes the ``HumanResponseEvent`` (the two-step
  pattern), or the same step awaits it with ``ctx.wait_for_event`` -- which
  pauses "by throwing an internal control-flow exception and replays the entire
  step when the event arrives" (``Context.wait_for_event`` docstring).
- Durable state is what the application saves: ``ctx.to_dict()`` at the park,
  restored with ``Context.from_dict(workflow, data)`` and
  ``workflow.run(ctx=restored)``. Steps that were running when the snapshot
  was taken are listed under ``workers[*].in_progress`` and re-run on restore.

The adapter plays the documented application: it snapshots the context to the
cell's store when the run parks (a persistence operation, hence a kill point),
and resumes a fresh interpreter from that snapshot. On a restore whose
snapshot holds an in-progress step, the answer is sent once that step is
waiting again (its ``wait_for_event`` raised), otherwise at once -- no sleeps.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import json
import os
import types
from typing import Any, Callable, Coroutine, TypeVar

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
from resume_audit.dynamic.values import canonical, to_jsonable

T = TypeVar("T")

PRELOAD = ["workflows", "workflows.events", "workflows.context", "workflows.handler"]

_CURRENT_STEP: contextvars.ContextVar[str | None] = contextvars.ContextVar("resume_audit_step", default=None)
_INSTRUMENTS: Instruments | None = None
_PATCHED = False
#: the session currently driving a run (one per child process)
_ACTIVE: "LlamaIndexSession | None" = None


def _patch() -> None:
    """Record served answers of ``wait_for_event`` and which step streamed a prompt."""
    global _PATCHED
    if _PATCHED:
        return
    from workflows.context.context import Context
    from workflows.events import InputRequiredEvent

    original_wait = Context.wait_for_event
    original_write = Context.write_event_to_stream

    async def wait_for_event(self: Any, event_type: Any, *args: Any, **kwargs: Any) -> Any:
        event = await original_wait(self, event_type, *args, **kwargs)
        _record_served(event)
        return event

    def write_event_to_stream(self: Any, ev: Any) -> Any:
        if isinstance(ev, InputRequiredEvent) and _ACTIVE is not None:
            _ACTIVE.prompt_step = _CURRENT_STEP.get()
            _ACTIVE.prompt_returned = False
        return original_write(self, ev)

    Context.wait_for_event = wait_for_event  # type: ignore[method-assign]
    Context.write_event_to_stream = write_event_to_stream  # type: ignore[method-assign]
    _PATCHED = True


def _record_served(event: Any) -> None:
    if _INSTRUMENTS is None:
        return
    value = getattr(event, "response", None)
    _INSTRUMENTS.ledger.record_served(_CURRENT_STEP.get(), None, canonical(value))


def _instrument_steps(workflow: Any) -> None:
    """Wrap each step of this workflow instance: unit starts, served answers, prompts, waits."""
    from workflows.events import HumanResponseEvent, InputRequiredEvent

    if getattr(workflow, "_resume_audit_wrapped", False):
        return
    runs: dict[str, int] = {}
    for name, bound in list(workflow._get_steps().items()):
        func = getattr(bound, "__func__", None)
        if func is None:
            continue

        def before(name: str, kwargs: dict[str, Any]) -> contextvars.Token[str | None]:
            token = _CURRENT_STEP.set(name)
            if _INSTRUMENTS is not None:
                runs[name] = runs.get(name, 0) + 1
                _INSTRUMENTS.task_nodes[name] = (name, None)
                _INSTRUMENTS.ledger.record_node_run(name, None, name, runs[name])
                _INSTRUMENTS.events.raise_deferred()
                for value in kwargs.values():
                    if isinstance(value, HumanResponseEvent):
                        _record_served(value)
            return token

        def after(name: str, result: Any) -> None:
            if isinstance(result, InputRequiredEvent) and _ACTIVE is not None:
                _ACTIVE.prompt_step = name
                _ACTIVE.prompt_returned = True

        def waiting(exc: BaseException) -> None:
            if type(exc).__name__ == "WaitingForEvent" and _ACTIVE is not None:
                _ACTIVE.step_waiting()

        if inspect.iscoroutinefunction(func):

            def make(func: Callable[..., Any], name: str) -> Callable[..., Any]:
                @functools.wraps(func)
                async def step_wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
                    token = before(name, kwargs)
                    try:
                        result = await func(self, *args, **kwargs)
                    except BaseException as exc:
                        waiting(exc)
                        raise
                    finally:
                        _CURRENT_STEP.reset(token)
                    after(name, result)
                    return result

                return step_wrapper
        else:

            def make(func: Callable[..., Any], name: str) -> Callable[..., Any]:
                @functools.wraps(func)
                def step_wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
                    token = before(name, kwargs)
                    try:
                        result = func(self, *args, **kwargs)
                    except BaseException as exc:
                        waiting(exc)
                        raise
                    finally:
                        _CURRENT_STEP.reset(token)
                    after(name, result)
                    return result

                return step_wrapper

        wrapper = make(func, name)
        wrapper._step_config = func._step_config  # type: ignore[attr-defined]
        setattr(workflow, name, types.MethodType(wrapper, workflow))
    workflow._resume_audit_wrapped = True


class LlamaIndexSession(Session):
    """One workflow, its parks snapshotted to the cell's store."""

    def __init__(self, workflow: Any, instruments: Instruments, store: StoreSettings, how: str) -> None:
        global _ACTIVE
        self.wf = workflow
        self.instruments = instruments
        self.how = how
        self.dir = store.directory or os.path.join(os.path.dirname(store.location) or ".", "store")
        os.makedirs(self.dir, exist_ok=True)
        self._loop = asyncio.new_event_loop()
        self.handler: Any = None
        self._iter: Any = None
        self._pending_next: Any = None
        self.result: Any = None
        self.done = False
        self.prompt_step: str | None = None
        #: whether the last prompt was a step's return value (two-step) rather than streamed (wait_for_event)
        self.prompt_returned = False
        self.parks = 0
        self._waiting: asyncio.Event | None = None
        self.snapshots_written = 0
        _ACTIVE = self

    # -- the durable store: the application's snapshot at each park -----------------------
    @property
    def _snapshot_path(self) -> str:
        return os.path.join(self.dir, "context.json")

    def _write_snapshot(self, data: dict[str, Any], park: PendingInterrupt) -> None:
        tmp = self._snapshot_path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump({"context": data, "park": {"id": park.id, "node": park.node, "value": park.value}}, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self._snapshot_path)
        self.snapshots_written += 1
        self.instruments.saver_ops += 1
        self.instruments.events.emit(
            "persist", f"snapshot of the context at park {park.id} in step {park.node}", node=park.node
        )

    def _read_snapshot(self) -> dict[str, Any] | None:
        try:
            with open(self._snapshot_path, encoding="utf-8") as fh:
                data: dict[str, Any] = json.load(fh)
                return data
        except FileNotFoundError:
            return None

    # -- driving ------------------------------------------------------------------------
    def step_waiting(self) -> None:
        if self._waiting is not None:
            self._waiting.set()

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self._loop.run_until_complete(coro)

    async def _pump(self, send: Any = None, when: str | None = None) -> Outcome:
        """Consume the event stream until the run parks or ends; optionally send an answer ``when`` "now"/"waiting".

        A prompt a step *returns* parks the run at once (nothing else consumes it).
        A prompt a step *streams* parks it only once that step is waiting
        (its ``wait_for_event`` raised): the replay of a step whose answer has
        already arrived streams the prompt again but does not wait, and that
        stale prompt is no new park.
        """
        from workflows.events import HumanResponseEvent, InputRequiredEvent

        pending = send is not None
        if pending and when == "now":
            self.handler.ctx.send_event(HumanResponseEvent(response=send))  # type: ignore[call-arg]  # Event takes extra fields at runtime
            pending = False
        self._waiting = asyncio.Event()
        waiter = asyncio.ensure_future(self._waiting.wait())
        prompt: Any = None
        waiting_seen = False
        try:
            while True:
                if self._pending_next is None:
                    self._pending_next = asyncio.ensure_future(self._iter.__anext__())
                finished, _ = await asyncio.wait({self._pending_next, waiter}, return_when=asyncio.FIRST_COMPLETED)
                if waiter in finished:
                    self._waiting.clear()
                    waiter = asyncio.ensure_future(self._waiting.wait())
                    if pending:  # the restored step is waiting again: this is when its answer can land
                        self.handler.ctx.send_event(HumanResponseEvent(response=send))  # type: ignore[call-arg]  # Event takes extra fields at runtime
                        pending, prompt = False, None
                        continue
                    if prompt is not None:
                        return self._park(prompt)
                    waiting_seen = True
                    if self._pending_next not in finished:
                        continue
                fut, self._pending_next = self._pending_next, None
                try:
                    event = fut.result()
                except StopAsyncIteration:
                    break
                if isinstance(event, InputRequiredEvent):
                    if self.prompt_returned:
                        return self._park(event)
                    if waiting_seen and not pending:
                        return self._park(event)
                    prompt = event
        finally:
            waiter.cancel()
            self._waiting = None
        self.result = await self.handler
        self.done = True
        return Outcome()

    def _park(self, event: Any) -> Outcome:
        self.parks += 1
        value = to_jsonable(getattr(event, "prefix", None) or event.model_dump(mode="json"))
        park = PendingInterrupt(f"park-{self.parks}", self.prompt_step, value)
        self._write_snapshot(self.handler.ctx.to_dict(), park)
        return Outcome((park,))

    def _begin(self, handler: Any) -> None:
        self.handler = handler
        self._iter = handler.stream_events().__aiter__()
        self._pending_next = None
        self.done = False

    def start(self, input: Any) -> Outcome:
        kwargs = dict(input) if isinstance(input, dict) else {}

        async def go() -> Outcome:
            self._begin(self.wf.run(**kwargs))
            return await self._pump()

        return self._run(go())

    def _restore(self, data: dict[str, Any], answer: Any, has_answer: bool) -> Outcome:
        from workflows.context import Context

        park = data["park"]
        self.parks = int(str(park["id"]).rsplit("-", 1)[-1])
        rerun = any(w.get("in_progress") for w in (data["context"].get("workers") or {}).values())

        async def go() -> Outcome:
            if self.handler is not None and not self.done:
                try:
                    await self.handler.cancel_run()
                except Exception:
                    pass
            self._begin(self.wf.run(ctx=Context.from_dict(self.wf, data["context"])))
            if not has_answer:
                return await self._pump()
            return await self._pump(answer, "waiting" if rerun else "now")

        return self._run(go())

    def answer(self, answers: list[tuple[PendingInterrupt, Any]], *, at: Any = None, form: str = "auto") -> Outcome:
        value = answers[0][1]
        if at is None and self.handler is not None and not self.done:
            return self._run(self._pump(value, "now"))  # the live run: in process, as the app answers it
        data = at if at is not None else self._read_snapshot()
        if data is None:
            raise RuntimeError("no snapshot of the parked context was saved")
        return self._restore(data, value, True)

    def resume_raw(self, value: Any) -> Outcome:
        """A duplicate answer: into the live run if there is one, else into the completed run's context."""
        from workflows.events import HumanResponseEvent

        if self.handler is not None and not self.done:
            return self._run(self._pump(value, "now"))
        if self.handler is not None:

            async def send() -> None:
                sent = self.handler.ctx.send_event(HumanResponseEvent(response=value))  # type: ignore[call-arg]  # Event takes extra fields at runtime
                if inspect.isawaitable(sent):
                    await sent
                await asyncio.sleep(0)

            self._run(send())
            return Outcome()
        data = self._read_snapshot()
        if data is None:
            raise RuntimeError("no snapshot of the parked context was saved")
        return self._restore(data, value, True)

    def proceed(self) -> Outcome:
        data = self._read_snapshot()
        if data is None:
            raise RuntimeError("no snapshot of the context was saved")
        return self._restore(data, None, False)

    def fork_point(self) -> Any:
        return self._read_snapshot()

    def recovery_label(self, state: DurableState) -> str | None:
        if state.interrupts:
            return "Context.from_dict() of the park's snapshot, then the HumanResponseEvent"
        return "Context.from_dict() of the saved snapshot"

    def describe(self) -> PlaneDescription:
        return PlaneDescription(
            plane="Context.to_dict()/from_dict() at InputRequiredEvent",
            durable=True,
            store="JSON snapshot file",
            restore="Context.from_dict(workflow, data); workflow.run(ctx=...)",
            stray="duplicate HumanResponseEvent sent to the run's context after it completed",
        )

    # -- reading durable state -------------------------------------------------------------
    def durable_state(self) -> DurableState:
        data = self._read_snapshot()
        if data is None:
            return DurableState(False)
        park = data["park"]
        return DurableState(
            True, None, (PendingInterrupt(park["id"], park.get("node"), park.get("value")),), (), frozenset()
        )

    def final_state(self) -> tuple[Any, int | None]:
        return {"result": to_jsonable(self.result)}, None

    def checkpoint_count(self) -> int:
        return 1 if os.path.exists(self._snapshot_path) else 0

    def audit_checkpoints(self) -> list[InvalidState]:
        return []

    def schema_kind(self) -> str | None:
        return None

    def node_locations(self, module: Any = None) -> dict[str, SourceLocation]:
        out = {}
        for name in self.wf._get_steps():
            loc = function_location(getattr(type(self.wf), name, None))
            if loc is not None:
                out[name] = loc
        return out

    def uses_sweep_store(self) -> bool:
        return True

    def close(self) -> None:
        try:
            if self.handler is not None and not self.done:
                self._run(self.handler.cancel_run())
        except Exception:
            pass
        self._loop.close()


class LlamaIndexAdapter(Adapter):
    name = "llamaindex"
    distributions = ("llama-index-workflows", "llama-index-core")

    def preload_modules(self) -> list[str]:
        return list(PRELOAD)

    def accepts(self, obj: Any) -> bool:
        return is_class_or_instance_of(obj, "workflows", "Workflow")

    def prepare_process(self, instruments: Instruments, store: StoreSettings) -> None:
        global _INSTRUMENTS
        _INSTRUMENTS = instruments
        _patch()

    def effect_context(self) -> tuple[str | None, int | None, str | None]:
        return _CURRENT_STEP.get(), None, None

    def open(
        self, obj: Any, store: StoreSettings, instruments: Instruments, thread_id: str, config: dict[str, Any]
    ) -> Session:
        from workflows import Workflow

        timeout = float(config.get("timeout", 30))
        if isinstance(obj, type):
            missing = required_parameters(obj)
            if missing:
                raise ShapeError(
                    f"the Workflow needs constructor arguments the sweep cannot give: {', '.join(p.name for p in missing)}"
                )
            workflow, how = obj(timeout=timeout), f"instantiated the Workflow subclass {obj.__name__}"
        elif isinstance(obj, Workflow):
            workflow, how = obj, "used the Workflow instance"
        else:
            raise ShapeError(f"{type(obj).__name__} is not a LlamaIndex Workflow")
        _instrument_steps(workflow)
        return LlamaIndexSession(workflow, instruments, store, how)
