"""`resume-audit audit` on projects laid out and written as real ones are (issue 34).

- ``fixtures/audit-shapes/invoicer``: a clone whose folder has the package's name (``invoicer/invoicer``),
  graphs compiled at import with ``SqliteSaver`` -- the layout that used to be named ``invoicer.invoicer.app``
  and swept nothing;
- ``fixtures/audit-shapes/shipdesk``: a declared ``src/`` layout holding the shapes discovery used to miss
  (a graph returned through a local, ``self.graph = ...compile()``, a factory its server calls with
  ``interrupt_before=[...]``, a file importing no framework, an ``async def`` factory, a module-level
  ``graph = create_graph()``, and a cloud runtime's ``@app.entrypoint`` that is not LangGraph's).

Both are swept with no configuration, as a user runs the command after ``git clone``.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from resume_audit.audit.importroots import ImportRoots

REPO = Path(__file__).resolve().parent.parent
SHAPES = REPO / "fixtures" / "audit-shapes"


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "resume_audit", "audit", ".", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
    )


def listed(cwd: Path, *args: str) -> list[str]:
    proc = run(cwd, "--list", *args)
    assert proc.returncode == 0, proc.stderr
    return [line.split("  ")[1] for line in proc.stdout.splitlines()]


# -- import roots ------------------------------------------------------------------------------------


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def placed(root: Path, file: str, imported: tuple[str, ...] = ()) -> tuple[str, str, str]:
    where = ImportRoots(root.resolve()).place(root / file, imported)
    return where.module, str(where.root.relative_to(root.resolve())) if where.root != root.resolve() else ".", where.how


def test_a_clone_folder_named_like_its_package_is_the_import_root(tmp_path):
    clone = write(
        tmp_path / "invoicer",
        {"invoicer/__init__.py": "", "invoicer/app.py": "from invoicer.graph import g\n", "invoicer/graph.py": ""},
    )
    assert placed(clone, "invoicer/app.py", ("invoicer",)) == ("invoicer.app", ".", "layout")


def test_a_package_defined_in_its_init_is_named_from_above_its_folder(tmp_path):
    project = write(
        tmp_path / "cvmaker",
        {
            "app/__init__.py": "",
            "app/services/__init__.py": "",
            "app/services/workflow/__init__.py": "from app.services import x\n",
        },
    )
    assert placed(project, "app/services/workflow/__init__.py", ("app",)) == ("app.services.workflow", ".", "layout")


def test_a_namespace_folder_the_file_imports_itself_through_is_still_climbed(tmp_path):
    project = write(
        tmp_path / "demo",
        {"email_approval/graph.py": "from email_approval.tools import send\n", "email_approval/tools.py": ""},
    )
    assert placed(project, "email_approval/graph.py", ("email_approval",)) == ("email_approval.graph", ".", "layout")


@pytest.mark.parametrize(
    "manifest, text",
    [
        ("pyproject.toml", '[tool.setuptools]\npackage-dir = {"" = "lib"}\n'),
        ("pyproject.toml", '[tool.setuptools.packages.find]\nwhere = ["lib"]\n'),
        ("pyproject.toml", '[tool.poetry]\npackages = [{include = "desk", from = "lib"}]\n'),
        ("pyproject.toml", '[tool.hatch.build.targets.wheel]\npackages = ["lib/desk"]\n'),
        ("setup.cfg", "[options]\npackage_dir =\n    =lib\n"),
        (
            "setup.py",
            'from setuptools import find_packages, setup\nsetup(name="desk", packages=find_packages("lib"), package_dir={"": "lib"})\n',
        ),
    ],
)
def test_declared_package_folders_are_import_roots(tmp_path, manifest, text):
    # a namespace folder (no __init__.py) in lib/: only the declaration says lib/ is the root
    project = write(tmp_path / "project", {manifest: text, "lib/desk/flows/refund.py": "", "lib/desk/__init__.py": ""})
    (project / "lib" / "desk" / "__init__.py").unlink()
    assert placed(project, "lib/desk/flows/refund.py") == ("desk.flows.refund", "lib", "declared")


def test_a_file_outside_the_declared_packages_keeps_its_own_layout(tmp_path):
    project = write(
        tmp_path / "project",
        {
            "pyproject.toml": '[tool.setuptools]\npackages = ["desk"]\n',
            "desk/__init__.py": "",
            "desk/app.py": "",
            "examples/demo/run.py": "",
        },
    )
    assert placed(project, "desk/app.py") == ("desk.app", ".", "declared")
    assert placed(project, "examples/demo/run.py") == ("run", "examples/demo", "layout")


# -- discovery -------------------------------------------------------------------------------------


def test_the_clone_layout_names_its_programs_by_their_importable_module():
    assert listed(SHAPES / "invoicer") == ["invoicer.app:compiled", "invoicer.app:keyed_compiled"]


def test_every_shape_is_found_once_and_a_runtime_decorator_is_not_langgraph():
    proc = run(SHAPES / "shipdesk", "--list")
    assert proc.returncode == 0, proc.stderr
    lines = {line.split("  ")[1]: line for line in proc.stdout.splitlines()}
    assert sorted(lines) == [
        "shipdesk.agent:ShippingAgent",
        "shipdesk.app:build_app",
        "shipdesk.gate:build_gated",
        "shipdesk.graph:create_graph",
        "shipdesk.tasks:make_async_graph",
    ]
    assert "graph holder" in lines["shipdesk.agent:ShippingAgent"]
    assert "called with interrupt_before=['ship']" in lines["shipdesk.gate:build_gated"]
    assert not any("cannot sweep" in line for line in lines.values())


def test_named_targets_replace_discovery_from_the_command_line_and_the_config(tmp_path):
    assert listed(SHAPES / "shipdesk", "--target", "shipdesk.server:graph") == ["shipdesk.server:graph"]
    project = shutil.copytree(SHAPES / "shipdesk", tmp_path / "shipdesk")
    with (project / "pyproject.toml").open("a") as f:
        f.write('\n[tool.resume-audit.audit]\ntargets = ["shipdesk.gate:startup", "shipdesk.graph:create_graph"]\n')
    assert listed(project) == ["shipdesk.gate:startup", "shipdesk.graph:create_graph"]


def test_hints_name_flags_the_audit_has():
    proc = subprocess.run(
        [sys.executable, "-m", "resume_audit", "audit", "--help"],
        capture_output=True,
        text=True,
        env={"COLUMNS": "200", "PATH": ""},
    )
    for flag in ("--allow-network", "--target"):
        assert flag in proc.stdout


# -- sweeps ----------------------------------------------------------------------------------------


def test_the_clone_is_swept_with_no_configuration(tmp_path):
    project = shutil.copytree(SHAPES / "invoicer", tmp_path / "invoicer")  # the app writes invoices.db at import
    proc = run(project, "--format", "json", "--fail-on", "never")
    assert proc.returncode == 0, proc.stderr
    entries = json.loads(proc.stdout)["audit"]["entry_points"]
    assert [(e["target"], e["swept"]) for e in entries] == [
        ("invoicer.app:compiled", True),
        ("invoicer.app:keyed_compiled", True),
    ]
    # stdout is a pipe: a line per entry point as it finished
    assert (
        "[1/2] invoicer.app:compiled: swept" in proc.stderr
        and "[2/2] invoicer.app:keyed_compiled: swept" in proc.stderr
    )


def test_every_shape_is_swept_and_its_failing_cells_rerun_by_the_printed_command(tmp_path):
    project = shutil.copytree(SHAPES / "shipdesk", tmp_path / "shipdesk")
    proc = run(project, "--format", "json", "--fail-on", "never", "--cells", "crash")
    assert proc.returncode == 0, proc.stderr
    entries = {e["target"]: e for e in json.loads(proc.stdout)["audit"]["entry_points"]}
    assert {t: e["swept"] for t, e in entries.items()} == dict.fromkeys(entries, True) and len(entries) == 5
    gated = entries["shipdesk.gate:build_gated"]
    assert gated["factory_kwargs"] == {"interrupt_before": ["ship"]}
    assert gated["dynamic_findings"] >= 1 and "--cells crash" in gated["rerun"]
    # the command the report prints runs as printed: the same sweep, its failing cells, kept on disk
    cd, _, command = gated["rerun"].partition(" && ")
    argv = shlex.split(command)
    assert argv[:2] == ["resume-audit", "crash-sweep"] and "--factory-kwargs" in argv
    rerun = subprocess.run(
        [sys.executable, "-m", "resume_audit", *argv[1:], "--format", "json", "--fail-on", "never"],
        cwd=shlex.split(cd)[1],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert rerun.returncode == 0, rerun.stderr
    assert {f["rule_id"] for f in json.loads(rerun.stdout)["findings"]} == {"RA701"}
    assert "artifacts kept in" in rerun.stderr
