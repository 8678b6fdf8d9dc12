"""The public Python API: ``from resume_audit import ...``, light at import time, the CLI's semantics."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import resume_audit
from resume_audit import BaselineError, Config, ConfigError, PathNotFound, scan
from resume_audit.api import ScanRequest, run_scan

REPO = Path(__file__).resolve().parents[1]
MYAGENT = REPO / "fixtures" / "myagent"
RA101 = REPO / "fixtures" / "static" / "ra101"

HEAVY = ("libcst", "rich", "typer", "sarif_om", "langgraph", "pydantic", "sqlite3")


def _modules_after(code: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    return json.loads(out.stdout.splitlines()[-1])


def test_import_auditor_loads_nothing_else_of_the_tool():
    mods = _modules_after("import resume_audit")
    assert [m for m in mods if m.startswith("resume_audit.")] == []
    assert [m for m in mods if m.split(".")[0] in HEAVY] == []


def test_the_pytest_plugin_is_light_at_pytest_start_up():
    # every pytest session of an environment with resume-audit installed imports the plugin
    mods = _modules_after("import resume_audit.integrations.pytest_plugin")
    # its package (a docstring) and itself, nothing else of the tool
    assert [m for m in mods if m.startswith("resume_audit.")] == [
        "resume_audit.integrations",
        "resume_audit.integrations.pytest_plugin",
    ]
    assert [m for m in mods if m.split(".")[0] in HEAVY] == []


def test_every_public_name_resolves_to_its_implementation():
    import resume_audit.api
    import resume_audit.dynamic.parent.sweep
    import resume_audit.dynamic.report

    for name in resume_audit.__all__:
        assert getattr(resume_audit, name) is not None, name
    assert resume_audit.scan is resume_audit.api.scan and resume_audit.run_scan is resume_audit.api.run_scan
    assert resume_audit.crash_sweep is resume_audit.dynamic.parent.sweep.crash_sweep
    assert resume_audit.SweepReport is resume_audit.dynamic.report.SweepReport
    assert set(dir(resume_audit)) >= {"scan", "crash_sweep", "Finding", "SweepReport", "ResumeContractError"}
    with pytest.raises(AttributeError):
        resume_audit.no_such_name  # noqa: B018
    for fn in (
        resume_audit.scan,
        resume_audit.crash_sweep,
        resume_audit.SweepReport.assert_exactly_once,
        resume_audit.SweepReport.assert_conformant,
    ):
        assert fn.__doc__ and fn.__annotations__


def test_scan_returns_what_the_cli_reports(monkeypatch):
    monkeypatch.chdir(REPO)
    env = {**os.environ, "NO_COLOR": "1"}
    cli = subprocess.run(
        [sys.executable, "-m", "resume_audit", "scan", "fixtures/myagent", "--format", "json", "--no-cache"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
    )
    assert cli.returncode == 1, cli.stderr
    expected = sorted((f["rule_id"], f["path"], f["start_line"]) for f in json.loads(cli.stdout)["findings"])
    got = sorted((f.rule_id, f.span.path, f.span.start_line) for f in scan(["fixtures/myagent"]))
    assert got == expected and got  # same findings, same paths relative to the same root, same config
    assert scan("fixtures/myagent") == scan([Path("fixtures/myagent")])


def test_scan_takes_the_clis_options(tmp_path):
    everything = scan([RA101], root=RA101)
    assert {f.rule_id for f in everything} >= {"RA101"}
    assert all(f.rule_id.startswith("RA2") for f in scan([RA101], root=RA101, select=["RA2"]))
    assert "RA101" not in {f.rule_id for f in scan([RA101], root=RA101, ignore=["RA101"])}
    assert "RA101" not in {f.rule_id for f in scan([RA101], root=RA101, config=Config(ignore=["RA1"]))}
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.resume-audit]\nselect = ["RA101"]\n', encoding="utf-8")
    assert {f.rule_id for f in scan([RA101], root=RA101, config=pyproject)} == {"RA101"}
    # a baseline hides what it records, as --baseline does
    baseline = tmp_path / "baseline.json"
    run_scan(ScanRequest(paths=[RA101], root=RA101, write_baseline=baseline))
    assert scan([RA101], root=RA101, baseline=baseline) == []


def test_scan_raises_what_the_cli_exits_2_for(tmp_path):
    with pytest.raises(PathNotFound):
        scan([tmp_path / "missing"])
    with pytest.raises(ConfigError, match="RA999"):
        scan([RA101], select=["RA999"])
    with pytest.raises(BaselineError):
        scan([RA101], baseline=tmp_path / "missing.json")


def test_the_docs_name_the_api_and_the_plugin():
    """The API and the plugin moved from the README to their own pages, which the README links."""
    api = (REPO / "docs" / "python-api.md").read_text(encoding="utf-8")
    plugin = (REPO / "docs" / "pytest-plugin.md").read_text(encoding="utf-8")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "from resume_audit import" in api and "# pytest plugin" in plugin
    assert "(docs/python-api.md)" in readme and "(docs/pytest-plugin.md)" in readme
    for name in (
        "resume_audit.crash_sweep(",
        "assert_exactly_once()",
        "assert_conformant(",
        "@pytest.mark.resume_contract(",
        "--resume-audit-scan",
        "--resume-audit-baseline",
    ):
        assert name in plugin, name
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert (
        "[project.entry-points.pytest11]\n" in pyproject
        and 'resume_audit = "resume_audit.integrations.pytest_plugin"' in pyproject
    )
