"""A direct probe, independent of the sweep: run a fixture graph in fresh interpreters with a real
SIGKILL, and count an effect's calls in a file -- no instrumented saver, no ledger, no sweep code.

    python direct_probe.py PHASE FIXTURE_MODULE FACTORY EFFECT_ATTR LEDGER DB THREAD [JSON_INPUT] [KILL]

PHASE ``start`` invokes the graph with JSON_INPUT; ``resume`` sends ``Command(resume=JSON_INPUT)``;
``recover`` invokes with ``None`` (continue from the last checkpoint). With KILL ``after-effect``
the process SIGKILLs itself right after the effect returns; with ``after-put-writes:NODE`` right
after the saver stored NODE's task writes. EFFECT_ATTR names a module function or a LangChain tool
(its ``func`` is wrapped); every call appends its name as a line to LEDGER before the kill can happen.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import sqlite3
import sys


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
            if kill == "after-effect":
                os.kill(os.getpid(), signal.SIGKILL)
            return result

        return wrapper

    for attr in effect_attr.split(","):
        target = getattr(module, attr)
        if hasattr(target, "invoke") and callable(getattr(target, "func", None)):
            object.__setattr__(target, "func", record(target.func, attr))
        else:
            setattr(module, attr, record(target, attr))

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
    graph_input = value if phase == "start" else Command(resume=value) if phase == "resume" else None
    # durability="sync": a step's writes are stored before the next step starts, so a kill point
    # after a write is a fixed place in the run, not a race with the background writer
    graph.invoke(graph_input, config, durability="sync")


if __name__ == "__main__":
    main()
