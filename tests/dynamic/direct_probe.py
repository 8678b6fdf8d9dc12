"""A direct probe, independent of the sweep: run a fixture graph in fresh interpreters with a real
SIGKILL, and count an effect's calls in a file -- no instrumented saver, no ledger, no sweep code.

    python direct_probe.py PHASE FIXTURE_MODULE FACTORY EFFECT_ATTR LEDGER DB THREAD [JSON_INPUT] [KILL]

PHASE ``start`` invokes the graph with JSON_INPUT; ``resume`` sends ``Command(resume=JSON_INPUT)``;
``recover`` invokes with ``None`` (continue from the last checkpoint; also how a static breakpoint
is passed); ``fork`` sends ``Command(resume=JSON_INPUT)`` at the thread's oldest checkpoint that
holds a pending interrupt (the N-th oldest with ``RA_PROBE_FORK_GATE=N``) (the fork address ``(thread_id, checkpoint_id)``).
Every value ``interrupt()`` returns is appended, as JSON, to the file LEDGER.served. With
``RA_PROBE_BARRIER=FOLDER:N`` in the environment the process waits, after loading everything,
until N processes are ready, so several processes started together resume at once. With
``RA_PROBE_MODEL_CLASS`` (a chat model class in the fixture) and ``RA_PROBE_REPLIES`` (a JSON list
of ``{content, tool_calls}``) that class answers offline: the reply at the index of the number of
AI messages in the call's input. With KILL ``after-effect``
the process SIGKILLs itself right after an effect returns (``after-effect:NAME``: after that one); with ``after-put-writes:NODE`` right
after the saver stored NODE's task writes. EFFECT_ATTR names a module function or a LangChain tool
(its ``func`` is wrapped); every call appends its name as a line to LEDGER before the kill can happen.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import signal
import sqlite3
import sys
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
            result = inner(*args, **kwargs)
            with open(ledger, "a", encoding="utf-8") as fh:
                fh.write(name + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            if kill in ("after-effect", f"after-effect:{name}"):
                os.kill(os.getpid(), signal.SIGKILL)
            return result

        return wrapper

    for attr in effect_attr.split(","):
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
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content=reply.get("content", ""), tool_calls=calls))])

        model_class._generate = _generate

    saver = SqliteSaver(sqlite3.connect(db, check_same_thread=False))
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
    wait_for_racers(os.environ.get("RA_PROBE_BARRIER", ""))
    # durability="sync": a step's writes are stored before the next step starts, so a kill point
    # after a write is a fixed place in the run, not a race with the background writer
    graph.invoke(graph_input, config, durability="sync")


def wait_for_racers(barrier: str) -> None:
    """``FOLDER:N``: say this process is ready (a file named after its pid in FOLDER) and wait
    until N are, so racers resume together however long each took to load (a wall-clock start
    time let a racer loading slowly on a busy machine arrive after the other had finished)."""
    if not barrier:
        return
    folder, _, count = barrier.rpartition(":")
    with open(os.path.join(folder, str(os.getpid())), "w"):
        pass
    deadline = time.monotonic() + 120
    while len(os.listdir(folder)) < int(count) and time.monotonic() < deadline:
        time.sleep(0.0005)


if __name__ == "__main__":
    main()
