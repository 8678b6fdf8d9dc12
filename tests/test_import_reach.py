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
