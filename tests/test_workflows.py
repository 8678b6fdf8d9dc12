"""The repository's own GitHub workflows: CI runs .ci/run on every supported Python, the docs
workflow publishes the strictly built site on a release tag, and actionlint (with ShellCheck on
every ``run:`` script) accepts both."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
import yaml
from conftest import REPO

WORKFLOWS = REPO / ".github" / "workflows"


def _load(name: str) -> dict:
    workflow = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    workflow["on"] = workflow.pop(True, workflow.get("on"))  # YAML 1.1 reads the key `on` as true
    return workflow


def test_ci_runs_the_ci_script_on_every_supported_python() -> None:
    workflow = _load("ci.yml")
    assert set(workflow["on"]) == {"push", "pull_request"}
    [job] = workflow["jobs"].values()
    assert job["strategy"]["matrix"]["python-version"] == ["3.10", "3.11", "3.12", "3.13"]
    assert [s["run"] for s in job["steps"] if "run" in s] == ["bash .ci/run"]
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert 'requires-python = ">=3.10"' in pyproject


def test_the_docs_workflow_publishes_the_strict_build_on_a_tag() -> None:
    workflow = _load("docs.yml")
    assert workflow["on"]["push"]["tags"] == _load("release.yml")["on"]["push"]["tags"]
    build = "\n".join(s.get("run", "") for s in workflow["jobs"]["build"]["steps"])
    assert "mkdocs build --strict" in build and ".[docs]" in build
    assert any(s.get("uses", "").startswith("actions/deploy-pages@") for s in workflow["jobs"]["deploy"]["steps"])


@pytest.mark.parametrize("name", ["ci.yml", "docs.yml"])
def test_actionlint_accepts_the_workflow(name: str) -> None:
    actionlint, shellcheck = shutil.which("actionlint"), shutil.which("shellcheck")
    if actionlint is None or shellcheck is None:
        if os.environ.get("RESUME_AUDIT_REQUIRE_TOOLS") == "1":
            pytest.fail("actionlint and shellcheck are required in CI: pip install -e '.[test]'")
        pytest.skip("actionlint / shellcheck not installed (the test extra installs both)")
    proc = subprocess.run(
        [actionlint, "-shellcheck", shellcheck, str(WORKFLOWS / name)], capture_output=True, text=True, cwd=REPO
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
