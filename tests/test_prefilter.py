"""The pre-filter decides what a scan parses and which rules run on each file.

Measured on a 5,000-file tree of standard-library modules with 100 agent files: ``thread_id`` in
asyncio and ``.state.`` in ``re`` made 21 library files candidates, and every rule then traced
their calls through the library (47 s of a 48 s scan in process). These tests pin the
behaviour that removed that cost without losing a finding a real controller needs.
"""

from __future__ import annotations

from pathlib import Path

from conftest import scan_tree, write_tree

from resume_audit.config.settings import Config
from resume_audit.engine.scan import active_rules, prefilter_of
from resume_audit.reading.prefilter import Trigger, frameworks_in_scan

#: threading code that mentions a thread id -- no agent framework anywhere near it
THREADING = """
import threading

def worker_name():
    thread_id = threading.get_ident()
    return f"worker-{thread_id}"
"""

#: a FastAPI controller driving a graph it imports from the app: no langgraph import, but a run config
CONTROLLER = """
import asyncio
from fastapi import APIRouter

from workflow.graph import graph

router = APIRouter()

@router.post("/approve/{thread_id}")
async def approve(thread_id: str):
    config = {"configurable": {"thread_id": thread_id}}
    state = graph.get_state(config)
    if state.next and state.next[0] == "review":
        graph.update_state(config, {"approved": True})
        asyncio.create_task(graph.ainvoke(None, config))
    return {"ok": True}
"""

GRAPH = """
from typing import TypedDict
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import StateGraph, START, END
import sqlite3

class S(TypedDict):
    approved: bool

def review(state: S) -> dict:
    return {}

builder = StateGraph(S)
builder.add_node("review", review)
builder.add_edge(START, "review")
builder.add_edge("review", END)
graph = builder.compile(checkpointer=SqliteSaver(sqlite3.connect("x.db", check_same_thread=False)), interrupt_before=["review"])
"""

#: a state machine with ``.state.`` in it: a CrewAI hand-rolled restore only if the scan uses crewai
STATE_MACHINE = """
class Parser:
    def step(self):
        try:
            self.state.position += 1
        except Exception:
            self.state.position = 0
"""


def _prefilter():
    return prefilter_of(active_rules(Config()))


def test_a_thread_id_alone_is_not_agent_code() -> None:
    pre = _prefilter()
    match = pre.match(THREADING.encode())
    assert match.empty
    assert not pre.is_candidate(match, frozenset({"langgraph"}))


def test_a_run_config_marks_a_controller_as_langgraph_code(tmp_path: Path) -> None:
    pre = _prefilter()
    match = pre.match(CONTROLLER.encode())
    assert match.frameworks == {"langgraph"}
    ra301 = next(type(r) for r in active_rules(Config()) if r.id == "RA301")
    assert pre.applies(ra301, match, frozenset({"langgraph"}))
    # and the scan really checks it: the get_state check that gates the resume is reported
    write_tree(
        tmp_path,
        {
            "workflow/__init__.py": "",
            "workflow/graph.py": GRAPH,
            "controllers/chat.py": CONTROLLER,
            "util/threads.py": THREADING,
        },
    )
    result = scan_tree(tmp_path)
    assert {(f.rule_id, f.span.path) for f in result.findings} >= {("RA301", "controllers/chat.py")}
    assert result.files_analysed == 2  # the graph and the controller; the threading helper is not parsed


def test_a_framework_bound_trigger_counts_only_when_the_scan_uses_the_framework(tmp_path: Path) -> None:
    pre = _prefilter()
    match = pre.match(STATE_MACHINE.encode())
    assert match.frameworks == frozenset() and match.triggers
    assert not pre.is_candidate(match, frozenset({"langgraph"}))
    assert pre.is_candidate(match, frozenset({"crewai"}))
    ra605 = next(type(r) for r in active_rules(Config()) if r.id == "RA605")
    ra101 = next(type(r) for r in active_rules(Config()) if r.id == "RA101")
    assert pre.applies(ra605, match, frozenset({"crewai"}))
    assert not pre.applies(ra101, match, frozenset({"crewai"}))  # the trigger is RA605's, not every rule's

    write_tree(tmp_path, {"lib/parser.py": STATE_MACHINE, "app/graph.py": GRAPH})
    assert scan_tree(tmp_path).files_analysed == 1
    write_tree(tmp_path, {"app/flow.py": "from crewai.flow.flow import Flow\n\nclass F(Flow):\n    pass\n"})
    assert scan_tree(tmp_path).files_analysed == 3


def test_frameworks_in_scan_and_multi_word_triggers() -> None:
    pre = _prefilter()
    assert frameworks_in_scan([pre.match(GRAPH.encode()), pre.match(THREADING.encode())]) == {"langgraph"}
    assert pre.match(b"thread_id only").empty
    assert pre.match(b'{"configurable": {"thread_id": t}}').frameworks == {"langgraph"}
    assert pre.match(b"flow.kickoff(inputs={})").frameworks == {"crewai"}
    try:
        Trigger(())
    except ValueError:
        pass
    else:  # pragma: no cover - the assertion is the point
        raise AssertionError("an empty trigger would match every file")
