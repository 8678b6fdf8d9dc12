"""Rules that check consequences: a hazard is only as severe as what can follow from it.

RA302 on a served resume: a warning when a node of the resumed graph reaches an effect (the
effect fires once per delivery), a note when every node is known and pure (the answer is
consumed twice, nothing outside repeats).
"""

from __future__ import annotations

from pathlib import Path

from resume_audit.api import ScanRequest, resolve_config
from resume_audit.engine.scan import scan
from resume_audit.findings import Severity

GRAPH = """
import sqlite3

import requests
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import StateGraph
from langgraph.types import interrupt


def review(state: dict) -> dict:
    return {{"ok": interrupt("approve?")}}


def act(state: dict) -> dict:
    {body}
    return {{"done": True}}


builder = StateGraph(dict)
builder.add_node("review", review)
builder.add_node("act", act)
builder.set_entry_point("review")
builder.add_edge("review", "act")
graph = builder.compile(checkpointer=SqliteSaver(sqlite3.connect("runs.db", check_same_thread=False)))
"""

API = """
from fastapi import FastAPI
from langgraph.types import Command

from app.graph import graph

app = FastAPI()


@app.post("/threads/{thread_id}/answer")
def answer(thread_id: str, ok: bool) -> dict:
    return graph.invoke(Command(resume=ok), {"configurable": {"thread_id": thread_id}})
"""


def _ra302(tmp_path: Path, body: str) -> list:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("")
    (tmp_path / "app" / "graph.py").write_text(GRAPH.format(body=body))
    (tmp_path / "app" / "api.py").write_text(API)
    config = resolve_config(ScanRequest(paths=[tmp_path], select=["RA302"]))
    return [f for f in scan([tmp_path], config, tmp_path).findings if f.rule_id == "RA302"]


def test_served_resume_of_an_effectful_graph_is_a_warning(tmp_path: Path) -> None:
    found = _ra302(tmp_path, 'requests.post("https://payments.example.com/refunds", json=state)')
    assert [(f.span.path, f.severity) for f in found] == [("app/api.py", Severity.WARNING)]
    assert "both run the gated node" in found[0].message


def test_served_resume_of_a_pure_graph_is_a_note(tmp_path: Path) -> None:
    found = _ra302(tmp_path, 'print("acting on", state)')
    assert [(f.span.path, f.severity) for f in found] == [("app/api.py", Severity.NOTE)]
    assert "nothing outside fires twice" in found[0].message
