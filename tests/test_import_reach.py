"""Cross-file questions parse only the modules that can name the function asked about (issue 35).

``Project.arguments_for`` / ``Project.callers`` once parsed every module that calls something
spelled like the function; now only the modules that can resolve a name to its module -- by
the import graph read from their text -- are summarised and parsed. Counted in parses, not seconds:
doubling the unrelated modules that call a same-named function of their own parses nothing more.
"""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from resume_audit.analysis.importreach import import_words
from resume_audit.analysis.project import Project
from resume_audit.discovery.modulenames import SourceFile, module_name_for
from resume_audit.discovery.walk import discover
from resume_audit.engine.scan import load_module

AGENT = """\
def run(thread_id):
    return thread_id


def main():
    run("shared")
"""

CALLER = """\
from app.agent import run


def handle(request):
    run(request.user_id)
"""

# re-exported by the package, called through it
REEXPORT = "from .agent import run\n"
VIA_PACKAGE = """\
import app


def job():
    app.run(thread_id="job-1")
"""

UNRELATED = """\
def run(x):
    return x


run(1)
"""


def _project(root: Path, unrelated: int) -> tuple[Project, list[str]]:
    tree = {"app/__init__.py": REEXPORT, "app/agent.py": AGENT, "app/caller.py": CALLER, "jobs/nightly.py": VIA_PACKAGE}
    tree.update({f"lib/mod_{i:03d}.py": UNRELATED for i in range(unrelated)})
    write_tree(root, tree)
    files = [
        SourceFile(s.resolved, s.display, *module_name_for(s.resolved, resolved=True))
        for s in discover([root], root, [])
    ]
    texts = {f.path: f.path.read_bytes() for f in files}
    parsed: list[str] = []

    def loader(entry: SourceFile):
        parsed.append(entry.display)
        return load_module(entry.path, entry.display)

    def mentions(word: str) -> list[str]:
        return [str(p) for p, raw in texts.items() if word.encode() in raw]

    return Project(files=files, loader=loader, mentions=mentions, text_of=texts.get), parsed


def _arguments(project: Project) -> list[tuple[str, str]]:
    agent = project.modules_named("app.agent")[0]
    run = agent.find_function("run")
    assert run is not None
    return sorted((a.module.display_path, a.module.code(a.value)) for a in project.arguments_for(run, "thread_id"))


def test_arguments_come_from_every_importer_and_no_unrelated_module_is_parsed(tmp_path: Path):
    project, parsed = _project(tmp_path, unrelated=6)
    assert _arguments(project) == [
        ("app/agent.py", '"shared"'),
        ("app/caller.py", "request.user_id"),
        ("jobs/nightly.py", '"job-1"'),
    ]
    assert not [p for p in parsed if p.startswith("lib/")]


def test_doubling_the_unrelated_callers_parses_nothing_more(tmp_path: Path):
    small, parsed_small = _project(tmp_path / "small", unrelated=10)
    big, parsed_big = _project(tmp_path / "big", unrelated=20)
    assert _arguments(small) == _arguments(big)
    assert len(parsed_small) == len(parsed_big) <= 4


def test_import_words_cover_every_spelling_of_an_import():
    source = b"""\
import os.path as osp, json
from .tools import (
    charge,
    refund as give_back,
)
from pkg.sub \\
    import helper
x = 1; from . import sibling
def f():
    import lazy_mod
"""
    words = import_words(source)
    assert {
        "os",
        "path",
        "osp",
        "json",
        "tools",
        "charge",
        "refund",
        "give_back",
        "pkg",
        "sub",
        "helper",
        "sibling",
        "lazy_mod",
    } <= words
    assert "f" not in words  # a line without the keyword adds nothing (one with it adds its other names: a superset)


# a copy of a library vendored into the tree: a module named like the standard library's, whose
# functions call each other and whose classes derive from computed bases
VENDORED_LOGGING = """\
import threading


def make_base(spec):
    return type(spec.name, (object,), {})


class Handler(make_base(threading.current_thread())):
    def submit(self, record):
        return emit(record)


def emit(record):
    return getLogger(record).handle(record)


def getLogger(name=None):
    return Handler()
"""

ENGINE_AGENT = """\
import logging
import sqlite3

import requests
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, StateGraph

log = logging.getLogger(__name__)


class Worker(logging.Handler):
    def emit(self, record):
        requests.post("https://hooks.example.com/log", json={"m": record})


def notify(state, queue=None):
    log.info("notify")
    if queue is not None:
        queue.submit(state)
    requests.post("https://hooks.example.com/done", json=state)
    return {"done": True}


builder = StateGraph(dict)
builder.add_node("notify", notify)
builder.add_edge(START, "notify")
graph = builder.compile(checkpointer=SqliteSaver(sqlite3.connect("s.db", check_same_thread=False)))
"""


def _vendored_scan(root: Path, copies: int) -> tuple[list[str], list[tuple[str, int, str]]]:
    from resume_audit.analysis import modules
    from resume_audit.config.settings import Config
    from resume_audit.engine.scan import scan

    tree = {"app/agent.py": ENGINE_AGENT}
    for i in range(copies):
        tree[f"vendor{i:02d}/logging/__init__.py"] = VENDORED_LOGGING
        tree[f"vendor{i:02d}/threading.py"] = "def current_thread():\n    return emit_thread()\n"
    write_tree(root, tree)
    parsed: list[str] = []
    original = modules.ModuleIndex.load

    def spy(self, entry):
        if entry.path not in self.loaded:
            parsed.append(entry.display)
        return original(self, entry)

    modules.ModuleIndex.load = spy  # type: ignore[method-assign]
    try:
        result = scan([root], Config(), root, jobs=1)
    finally:
        modules.ModuleIndex.load = original  # type: ignore[method-assign]
    return parsed, sorted((f.span.path, f.span.start_line, f.rule_id) for f in result.findings)


def test_a_vendored_copy_of_a_standard_library_module_is_not_what_the_agent_imports(tmp_path: Path):
    """``import logging`` in ``app/agent.py`` is the standard library's, not ``vendorNN/logging``: the
    value-flow engine's questions (what ``log`` is, who calls ``notify``, what ``queue`` holds, what
    ``Worker`` derives from) parse none of the copies, however many there are."""
    parsed_few, found_few = _vendored_scan(tmp_path / "few", copies=2)
    parsed_many, found_many = _vendored_scan(tmp_path / "many", copies=8)
    assert found_few == found_many == [("app/agent.py", 20, "RA103")]
    assert not [p for p in parsed_few + parsed_many if p.startswith("vendor")], parsed_many
