"""A direct probe, independent of the sweep: run a fixture graph in fresh interpreters with a real
SIGKILL, and count an effect's calls in a file -- no instrumented saver, no ledger, no sweep code.

    python direct_probe.py PHASE FIXTURE_MODULE FACTORY EFFECT_ATTR LEDGER DB THREAD [JSON_INPUT] [KILL]

PHASE ``start`` invokes the graph with JSON_INPUT; ``resume`` sends ``Command(resume=JSON_INPUT)``;
``recover`` invokes with ``None`` (continue from the last checkpoint; also how a static breakpoint
is passed); ``fork`` sends ``Command(resume=JSON_INPUT)`` at the thread's oldest checkpoint that
holds a pending interrupt (the N-th oldest with ``RA_PROBE_FORK_GATE=N``) (the fork address ``(thread_id, checkpoint_id)``).
Every value ``interrupt()`` returns is appended, as JSON, to the file LEDGER.served. With
``RA_PROBE_BARRIER=FOLDER:N`` in the environment N processes run in lockstep: each waits, after
loading everything and again before each write to the saver, until every other has reached the
same point or finished -- the schedule in which two racers both read the park before either
stores its progress, forced instead of hoped for (a real schedule the OS may pick; left to
chance, a racer on a busy machine read the other's finished run and paid nothing). With
``RA_PROBE_MODEL_CLASS`` (a chat model class in the fixture) and ``RA_PROBE_REPLIES`` (a JSON list
of ``{content, tool_calls}``) that class answers offline: the reply at the index of the number of
AI messages in the call's input. ``RA_PROBE_DURABILITY`` (default ``sync``) is the run's durability; with ``RA_PROBE_STUB=1`` an
effect's call is recorded but not made.
With KILL ``after-effect``
the process SIGKILLs itself right after an effect returns (``after-effect:NAME``: after that one); with ``after-put-writes:NODE`` right
after the saver stored NODE's task writes. EFFECT_ATTR names a module function or a LangChain tool
(its ``func`` is wrapped) or, as ``PACKAGE:Class.method``, an SDK method; every call appends its name
(and `` key=K`` when it passes ``idempotency_key=K``) as a line to LEDGER before the kill can happen.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import signal
import sqlite3
import sys
import threading
import time


def main() -> None:
    phase, module_name, factory, effect_attr, ledger, db, thread = sys.argv[1:8]
    value = json.loads(sys.argv[8]) if len(sys.argv) > 8 else None
    kill = sys.argv[9] if len(sys.argv) > 9 else ""
    module = importlib.import_module(module_name)
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.types import Command

    def record(inner, name):
        def wrapper(*args, **kwargs):
            # RA_PROBE_STUB=1: the call is recorded, not made (an effect that would reach the network);
            # it answers like an API object with an id
            result = {"id": f"{name}-stub"} if os.environ.get("RA_PROBE_STUB") == "1" else inner(*args, **kwargs)
            key = kwargs.get("idempotency_key")
            with open(ledger, "a", encoding="utf-8") as fh:
                fh.write(name + (f" key={key}" if key else "") + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            if kill in ("after-effect", f"after-effect:{name}"):
                os.kill(os.getpid(), signal.SIGKILL)
            return result

        return wrapper

    for attr in effect_attr.split(","):
        if ":" in attr:  # an SDK's method, PACKAGE:Class.method (stripe:Charge.create): replaced on its class
            package, _, dotted = attr.partition(":")
            *path, method = dotted.split(".")
            owner = importlib.import_module(package)
            for part in path:
                owner = getattr(owner, part)
            setattr(owner, method, record(getattr(owner, method), attr))
            continue
        target = getattr(module, attr)
        if hasattr(target, "invoke") and callable(getattr(target, "func", None)):
            object.__setattr__(target, "func", record(target.func, attr))
        elif hasattr(target, "invoke") and callable(getattr(target, "_run", None)):  # a BaseTool subclass
            object.__setattr__(target, "_run", functools.wraps(target._run)(record(target._run, attr)))
        else:
            setattr(module, attr, record(target, attr))

    import langgraph.types

    real_interrupt = langgraph.types.interrupt

    def interrupt(value, *args, **kwargs):
        served = real_interrupt(value, *args, **kwargs)
        with open(ledger + ".served", "a", encoding="utf-8") as fh:
            fh.write(json.dumps(served) + "\n")
        return served

    for mod in list(sys.modules.values()):  # the fixture and any module it imported interrupt into
        if getattr(mod, "interrupt", None) is real_interrupt and mod is not langgraph.types:
            mod.interrupt = interrupt

    if os.environ.get("RA_PROBE_MODEL_CLASS"):  # a chat model class answering offline, by turn
        from langchain_core.messages import AIMessage
        from langchain_core.outputs import ChatGeneration, ChatResult

        replies = json.loads(os.environ["RA_PROBE_REPLIES"])
        model_class = getattr(module, os.environ["RA_PROBE_MODEL_CLASS"])

        def _generate(self, messages, stop=None, run_manager=None, **kwargs):
            reply = replies[min(sum(isinstance(m, AIMessage) for m in messages), len(replies) - 1)]
            calls = [{**c, "id": f"call-{n}"} for n, c in enumerate(reply.get("tool_calls", []))]
            return ChatResult(
                generations=[ChatGeneration(message=AIMessage(content=reply.get("content", ""), tool_calls=calls))]
            )

        model_class._generate = _generate

    saver = SqliteSaver(sqlite3.connect(db, check_same_thread=False))
    lockstep = Lockstep.from_env(os.environ.get("RA_PROBE_BARRIER", ""))
    if lockstep is not None:
        for method in ("put", "put_writes"):
            setattr(saver, method, lockstep.before(getattr(saver, method)))
    if kill.startswith("after-writes-to:"):
        channel_name = kill.split(":", 1)[1]
        inner_put_writes = saver.put_writes

        def put_writes(config, writes, task_id, task_path=""):
            inner_put_writes(config, writes, task_id, task_path)
            if any(channel == channel_name for channel, _ in writes):
                os.kill(os.getpid(), signal.SIGKILL)

        saver.put_writes = put_writes  # type: ignore[method-assign]
    graph = getattr(module, factory)(saver)
    config = {"configurable": {"thread_id": thread}}
    if phase == "fork":
        parked = [snap for snap in graph.get_state_history(config) if snap.interrupts][::-1]  # oldest first
        config = parked[int(os.environ.get("RA_PROBE_FORK_GATE", "0"))].config
    graph_input = value if phase == "start" else Command(resume=value) if phase in ("resume", "fork") else None
    if lockstep is not None:
        lockstep.arrive()
    try:
        # durability="sync": a step's writes are stored before the next step starts, so a kill point
        # after a write is a fixed place in the run, not a race with the background writer;
        # RA_PROBE_DURABILITY=exit runs the graph as a program that asks for exit mode does
        graph.invoke(graph_input, config, durability=os.environ.get("RA_PROBE_DURABILITY", "sync"))
    finally:
        if lockstep is not None:
            lockstep.leave()


class Lockstep:
    """N processes sharing FOLDER move round by round: round k ends when every process has
    arrived at its k-th point (a file ``k.PID``) or left (``done.PID``). Racers run the same
    program, so their k-th points are the same place; one that takes a shorter path leaves and
    stops holding the others. A round waits 60 s at most, so a bug here slows a test, never hangs it."""

    def __init__(self, folder: str, count: int) -> None:
        self.folder, self.count, self.round = folder, count, 0
        self.lock = threading.Lock()  # the saver may write from the loop's background threads

    @classmethod
    def from_env(cls, value: str) -> "Lockstep | None":
        if not value:
            return None
        folder, _, count = value.rpartition(":")
        return cls(folder, int(count))

    def _mark(self, name: str) -> None:
        with open(os.path.join(self.folder, f"{name}.{os.getpid()}"), "w"):
            pass

    def arrive(self) -> None:
        with self.lock:
            self.round += 1
            here = self.round
            self._mark(str(here))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            names = os.listdir(self.folder)
            if sum(n.startswith(f"{here}.") or n.startswith("done.") for n in names) >= self.count:
                return
            time.sleep(0.0005)

    def leave(self) -> None:
        self._mark("done")

    def before(self, write):
        def wrapper(*args, **kwargs):
            self.arrive()
            return write(*args, **kwargs)

        return wrapper


if __name__ == "__main__":
    main()
