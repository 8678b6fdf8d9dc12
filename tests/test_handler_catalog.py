"""The handler catalog: registrations matched by qualified name, the project's own entries, the listing.

The fixture pairs under ``fixtures/projects/*_handler_{hazard,safe}`` (aiogram, python-telegram-bot,
discord.py, slack_bolt, Celery, Streamlit, Gradio, A2A) are scanned with their exact findings by
``tests/test_project_model.py``; this file checks what those cannot: that a registration is matched
by what the receiver *is* (not by its text), that ``handlers = [...]`` in [tool.resume-audit] adds a
user's own registration forms (and rejects a bad entry with its key), and the ``handlers`` command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, write_tree

from resume_audit.api import ScanRequest, resolve_config
from resume_audit.config.settings import ConfigError, config_from_table
from resume_audit.engine.scan import scan
from resume_audit.handlers.catalog import Concurrency, Registration
from resume_audit.handlers.listing import served_functions

GRAPH = """
import sqlite3

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from typing_extensions import TypedDict


class S(TypedDict, total=False):
    ok: bool


def ask(state: S) -> dict:
    return {"ok": interrupt("approve?") == "yes"}


builder = StateGraph(S)
builder.add_node("ask", ask)
builder.add_edge(START, "ask")
builder.add_edge("ask", END)
graph = builder.compile(checkpointer=SqliteSaver(sqlite3.connect("s.db", check_same_thread=False)))
"""

#: an event bus of the project's own: ``@bus.on(...)`` runs per published event
BUS = """
class EventBus:
    def __init__(self):
        self.handlers = {}

    def on(self, topic):
        def register(fn):
            self.handlers.setdefault(topic, []).append(fn)
            return fn
        return register


bus = EventBus()
"""

SUBSCRIBER = """
from langgraph.types import Command

from app.events import bus
from app.graph import graph


@bus.on("approval.answered")
def on_answer(event):
    graph.invoke(Command(resume=event["answer"]), {"configurable": {"thread_id": event["thread_id"]}})
"""


def _scan(root: Path) -> set[tuple[str, int, str]]:
    result = scan([root], resolve_config(ScanRequest(paths=[root])), root)
    assert result.notifications == [], result.notifications
    return {(f.span.path, f.span.start_line, f.rule_id) for f in result.findings}


def _project(tmp_path: Path, pyproject: str | None) -> Path:
    files = {"app/__init__.py": "", "app/graph.py": GRAPH, "app/events.py": BUS, "app/subscribers.py": SUBSCRIBER}
    if pyproject is not None:
        files["pyproject.toml"] = pyproject
    write_tree(tmp_path, files)
    return tmp_path


def test_a_projects_own_decorator_entry_makes_its_functions_served(tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        '[tool.resume-audit]\nhandlers = [{ decorator = "app.events.EventBus.on", kind = "event-bus subscriber" }]\n',
    )
    assert ("app/subscribers.py", 10, "RA302") in _scan(root)


def test_without_the_entry_the_bus_subscriber_is_not_served(tmp_path: Path) -> None:
    root = _project(tmp_path, None)
    assert not {f for f in _scan(root) if f[2] == "RA302"}


def test_a_call_entry_resolves_the_function_passed_by_name(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pyproject.toml": '[tool.resume-audit]\nhandlers = [{ call = "app.jobs.schedule", argument = 0, concurrency = "retried" }]\n',
            "app/__init__.py": "",
            "app/graph.py": GRAPH,
            "app/jobs.py": "def schedule(fn, *args):\n    ...\n",
            "app/work.py": (
                "from langgraph.types import Command\n\nfrom app.graph import graph\nfrom app.jobs import schedule\n\n\n"
                "def answer(thread_id, value):\n"
                "    graph.invoke(Command(resume=value), {'configurable': {'thread_id': thread_id}})\n\n\n"
                "handler = answer\nschedule(handler, 't', 'yes')\n"
            ),
        },
    )
    config = resolve_config(ScanRequest(paths=[tmp_path]))
    found = {s.function: s for s in served_functions([tmp_path], tmp_path, config)}
    assert found["answer"].concurrency == Concurrency.RETRIED.value
    assert found["answer"].registered_at == "app/work.py:12"
    assert ("app/work.py", 8, "RA302") in _scan(tmp_path)


def test_a_decorator_is_matched_by_what_its_receiver_is_not_by_its_text(tmp_path: Path) -> None:
    """``@router.callback_query`` on an aiogram Router made in another module is a handler; the same
    text on a router class of the project's own is not."""
    write_tree(
        tmp_path,
        {
            "bot/__init__.py": "",
            "bot/loader.py": "from aiogram import Router\n\nrouter = Router()\n",
            "bot/own.py": "class Router:\n    def callback_query(self, *filters):\n        return lambda fn: fn\n\n\nrouter = Router()\n",
            "bot/real.py": "from aiogram.types import CallbackQuery\n\nfrom bot.loader import router\n\n\n"
            "@router.callback_query()\nasync def pressed(q: CallbackQuery):\n    ...\n",
            "bot/fake.py": "import aiogram\n\nfrom bot.own import router\n\n\n@router.callback_query()\nasync def pressed(q):\n    ...\n",
        },
    )
    config = resolve_config(ScanRequest(paths=[tmp_path]))
    found = {(s.path, s.function): s for s in served_functions([tmp_path], tmp_path, config)}
    assert ("bot/real.py", "pressed") in found
    assert found[("bot/real.py", "pressed")].why == "aiogram: @aiogram.Router.callback_query"
    assert ("bot/fake.py", "pressed") not in found


def test_handler_entries_are_checked_with_their_key() -> None:
    with pytest.raises(ConfigError, match=r"handlers\[0\] needs exactly one of"):
        config_from_table({"handlers": [{"kind": "x"}]}, None, ["RA302"])
    with pytest.raises(ConfigError, match=r"handlers\[1\]: unknown key 'decorater'"):
        config_from_table({"handlers": [{"decorator": "a.b"}, {"decorater": "a.b"}]}, None, ["RA302"])
    with pytest.raises(ConfigError, match=r"handlers\[0\]\.concurrency must be one of"):
        config_from_table({"handlers": [{"call": "a.b", "concurrency": "sometimes"}]}, None, ["RA302"])
    with pytest.raises(ConfigError, match=r"a subclass entry needs methods"):
        config_from_table({"handlers": [{"subclass": "a.Base"}]}, None, ["RA302"])
    shapes = config_from_table(
        {"handlers": [{"subclass": "a.Base", "methods": ["handle"]}, {"call": "a.run"}]}, None, []
    ).handler_shapes
    assert [s.registration for s in shapes] == [Registration.SUBCLASS_METHOD, Registration.CALL]
    assert shapes[1].position == 0


def test_handler_entries_change_the_cache_fingerprint() -> None:
    plain = config_from_table({}, None, [])
    own = config_from_table({"handlers": [{"decorator": "a.on"}]}, None, [])
    assert plain.fingerprint() != own.fingerprint()


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "resume_audit", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_handlers_command_lists_served_functions_and_why() -> None:
    out = _cli("handlers", "fixtures/projects/ptb_handler_hazard", "--format", "json", cwd=REPO)
    assert out.returncode == 0, out.stderr
    rows = {r["function"]: r for r in json.loads(out.stdout)}
    assert rows["on_button"]["registered_at"] == "fixtures/projects/ptb_handler_hazard/main.py:13"
    assert (
        rows["on_button"]["why"]
        == "python-telegram-bot: telegram.ext.CallbackQueryHandler(...), the function as argument 0 / callback="
    )
    assert rows["refund"]["path"] == "fixtures/projects/ptb_handler_hazard/handlers.py"
    text = _cli("handlers", "fixtures/projects/celery_handler_hazard", cwd=REPO)
    assert text.returncode == 0, text.stderr
    assert "resume_refund" in text.stdout and "retried" in text.stdout


def test_handlers_catalog_lists_built_in_and_own_entries(tmp_path: Path) -> None:
    write_tree(
        tmp_path, {"pyproject.toml": '[tool.resume-audit]\nhandlers = [{ decorator = "myapp.bus.on" }]\n', "m.py": ""}
    )
    out = _cli("handlers", ".", "--catalog", "--format", "json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    entries = json.loads(out.stdout)
    assert entries[0]["targets"] == ["myapp.bus.on"] and entries[0]["source"].endswith("pyproject.toml")
    frameworks = {e["framework"] for e in entries}
    assert {
        "aiogram",
        "python-telegram-bot",
        "discord.py",
        "slack_bolt",
        "Celery",
        "RQ",
        "arq",
        "Streamlit",
        "Gradio",
        "Chainlit",
        "A2A",
        "MCP",
        "AWS Lambda",
        "EdgeOne Pages",
    } <= frameworks


def test_a_constant_thread_set_in_a_constructor_is_not_called_shared_by_the_handler(tmp_path: Path) -> None:
    """A Streamlit page reaching ``Machine.__init__`` (its own in-memory store, one object per session):
    the handler does not say whether the object outlives a delivery, so RA303 does not claim it."""
    write_tree(
        tmp_path,
        {
            "machine.py": (
                "import sqlite3\n\nfrom langgraph.checkpoint.sqlite import SqliteSaver\nfrom langgraph.graph import StateGraph\n\n\n"
                "class Machine:\n"
                "    def __init__(self, state, node):\n"
                "        self.memory = SqliteSaver(sqlite3.connect(':memory:', check_same_thread=False))\n"
                "        builder = StateGraph(state)\n"
                "        builder.add_node('n', node)\n"
                "        self.thread = {'configurable': {'thread_id': '2'}}\n"
                "        self.chain = builder.compile(checkpointer=self.memory, interrupt_after=['n'])\n\n"
                "    def start(self):\n"
                "        return self.chain.invoke({}, self.thread)\n"
            ),
            "page.py": (
                "import streamlit as st\n\nfrom machine import Machine\n\n"
                "if 'machine' not in st.session_state:\n    st.session_state.machine = Machine(dict, lambda s: s)\n"
                "st.session_state.machine.start()\n"
            ),
        },
    )
    assert not {f for f in _scan(tmp_path) if f[2] == "RA303"}
