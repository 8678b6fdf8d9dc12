"""The project model resolves imports the way real projects are run.

Each folder under ``fixtures/projects`` is a small project laid out as real
repositories are (a sub-folder root, ``src/``, namespace packages, ``sys.path``
edits with flat imports, a stray ``__init__.py`` one level too high). Each is
scanned from its own top folder -- as a user scans a repository they cloned --
and must produce exactly the findings its ``# expect:`` markers name: the hazard
twin's effect is reached through a helper in another module, so a missed import
shows up as a missed finding.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REPO
from test_fixtures import markers

from resume_audit.api import ScanRequest, resolve_config
from resume_audit.engine.scan import scan
from resume_audit.findings import NotificationKind

PROJECTS = REPO / "fixtures" / "projects"
LAYOUTS = sorted(p for p in PROJECTS.iterdir() if p.is_dir() and p.name != "unresolved_import")


@pytest.mark.parametrize("project", LAYOUTS, ids=lambda p: p.name)
def test_layout_findings_are_exact(project: Path) -> None:
    config = resolve_config(ScanRequest(paths=[project]))
    result = scan([project], config, project)
    assert result.notifications == [], result.notifications
    assert result.unresolved_imports == 0
    got = {(f.span.path, f.span.start_line, f.rule_id) for f in result.findings}
    assert got == markers(project, project)


def test_every_layout_has_a_hazard_and_a_safe_twin() -> None:
    names = {p.name for p in LAYOUTS}
    for name in names:
        stem, _, kind = name.rpartition("_")
        assert kind in ("hazard", "safe"), name
        assert f"{stem}_hazard" in names and f"{stem}_safe" in names, name
        if kind == "hazard":
            assert markers(PROJECTS / name, PROJECTS / name), f"{name} expects no finding"


def test_unresolved_project_import_is_reported_once() -> None:
    project = PROJECTS / "unresolved_import"
    config = resolve_config(ScanRequest(paths=[project]))
    result = scan([project], config, project)
    notes = [n for n in result.notifications if n.kind is NotificationKind.UNRESOLVED_IMPORTS]
    assert len(notes) == 1
    assert result.unresolved_imports == 1
    assert "`app.notifications` in app/graph.py" in notes[0].message
    assert notes[0].message.startswith("1 project import(s) in 1 file(s)")


def test_installed_package_names_are_not_project_imports(tmp_path: Path) -> None:
    """A folder of examples called ``langgraph/`` does not make ``import langgraph`` local."""
    (tmp_path / "langgraph").mkdir()
    (tmp_path / "langgraph" / "demo.py").write_text(
        "from langgraph.graph import StateGraph\nfrom langgraph.types import interrupt\n", encoding="utf-8"
    )
    config = resolve_config(ScanRequest(paths=[tmp_path]))
    result = scan([tmp_path], config, tmp_path)
    assert result.unresolved_imports == 0


VENDORED_LOGGING = """
class Logger:
    def warning(self, message):
        ...


def getLogger(name=None) -> Logger:
    return Logger()
"""

AGENT_LOGS = """
import logging

log = logging.getLogger(__name__)


def node(state):
    log.warning("refund requested")
    return state
"""


@pytest.mark.parametrize(
    "vendored_at, importable", [("vendor/logging/__init__.py", False), ("app/logging/__init__.py", True)]
)
def test_a_vendored_standard_library_package_counts_only_where_it_is_on_the_path(
    tmp_path: Path, vendored_at: str, importable: bool
) -> None:
    """A copy of ``logging`` in an unrelated folder is not what ``import logging`` gives the agent
    (the standard library comes first on ``sys.path``): following a call's type through it neither
    parses it nor takes its types. Beside the importer (the script's own folder) it shadows."""
    from conftest import write_tree

    from resume_audit.analysis.project import Project
    from resume_audit.discovery.modulenames import SourceFile, module_name_for
    from resume_audit.discovery.walk import discover
    from resume_audit.engine.scan import load_module

    write_tree(tmp_path, {"app/agent.py": AGENT_LOGS, vendored_at: VENDORED_LOGGING})
    files = [
        SourceFile(s.resolved, s.display, *module_name_for(s.resolved, resolved=True))
        for s in discover([tmp_path], tmp_path, [])
    ]
    loaded: list[str] = []

    def loader(entry: SourceFile):
        loaded.append(entry.display)
        return load_module(entry.path, entry.display)

    project = Project(files=files, loader=loader)
    agent = project.load(next(f for f in files if f.display == "app/agent.py"))
    node = agent.find_function("node")
    (call,) = node.calls
    names = project.resolver(agent).call_names(call.node, node)
    assert (vendored_at in loaded) is importable
    assert names == ({"logging.Logger.warning"} if importable else {"logging.getLogger.warning"})
