"""The command line, run as a user runs it: a real subprocess, real files, real exit codes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, write_tree

MYAGENT = REPO / "fixtures" / "myagent"

HAZARD = """
import requests
from langgraph.types import interrupt

def node(state):
    requests.post("https://example.com/x", json=state)
    return {"ok": interrupt("go?")}
"""

WARNING_ONLY = """
from langgraph.types import Command

def approve(graph, thread_id):
    cfg = {"configurable": {"thread_id": thread_id}}
    snap = graph.get_state(cfg)
    if snap.next:
        graph.invoke(Command(resume=True), cfg)
"""


def run(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    full_env.pop("FORCE_COLOR", None)
    return subprocess.run(
        [sys.executable, "-m", "resume_audit", *args],
        cwd=cwd or REPO,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "resume-audit"
    assert script.exists(), "pip install should create the resume-audit command"
    out = subprocess.run([str(script), "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("resume-audit ")


@pytest.mark.parametrize("command", [[], ["scan"], ["rules"], ["explain"]])
def test_help_explains_every_command_with_an_example(command: list[str]) -> None:
    out = run(*command, "--help")
    assert out.returncode == 0, out.stderr
    assert "Example" in out.stdout
    if command == ["scan"]:
        for option in (
            "--format",
            "--output",
            "--select",
            "--ignore",
            "--fail-on",
            "--exclude",
            "--config",
            "--baseline",
            "--write-baseline",
        ):
            assert option in out.stdout


def test_help_shows_bracketed_text() -> None:
    """typer's rich markup used to eat ``[tool.resume-audit]`` and ``[default: ...]`` from the help."""
    text = " ".join(run("scan", "--help").stdout.split())  # as wrapped for the terminal, unwrapped
    assert "[tool.resume-audit]" in text and "[default: warning, or fail-on from config]" in text


def test_concise_format_is_one_line_per_finding(tmp_path: Path) -> None:
    out = run("scan", "fixtures/myagent", "--format", "concise", "--no-cache")
    assert out.returncode == 1
    lines = out.stdout.splitlines()
    findings = [line for line in lines if re.match(r"^fixtures/myagent/\S+\.py:\d+:\d+: RA\d{3} \S", line)]
    assert len(findings) == 7 and len(lines) == 7, out.stdout
    assert "fixtures/myagent/myagent/graph.py:19:5: RA101 " in out.stdout
    # --quiet with --output: the file only, nothing on stderr
    report = tmp_path / "report.txt"
    quiet = run("scan", "fixtures/myagent", "-f", "concise", "-o", str(report), "--quiet", "--no-cache")
    assert quiet.returncode == 1 and quiet.stderr == "" and quiet.stdout == ""
    assert report.read_text() == out.stdout


def test_scan_bundled_example_text_report() -> None:
    out = run("scan", "fixtures/myagent")
    assert out.returncode == 1
    text = out.stdout
    assert "\x1b[" not in text, "NO_COLOR output must carry no escape codes"
    assert "fixtures/myagent/myagent/graph.py" in text
    assert "ERROR RA101 effect-before-interrupt  line 19:5" in text
    assert "What will happen:" in text and "Fix:" in text and "Related (line 25)" in text
    assert "> 19 |     email_customer(" in text
    assert "7 findings (3 error, 4 warning) in 2 files" in text


def test_exit_codes(tmp_path: Path) -> None:
    write_tree(tmp_path, {"hazard.py": HAZARD, "warn.py": WARNING_ONLY, "clean.py": "x = 1\n"})
    assert run("scan", str(tmp_path / "clean.py")).returncode == 0
    assert run("scan", str(tmp_path)).returncode == 1
    assert run("scan", str(tmp_path / "warn.py")).returncode == 1  # default fail-on: warning
    assert run("scan", str(tmp_path / "warn.py"), "--fail-on", "error").returncode == 0
    assert run("scan", str(tmp_path), "--fail-on", "never").returncode == 0
    assert run("scan", str(tmp_path / "warn.py"), "--fail-on", "note").returncode == 1
    missing = run("scan", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    bad_rule = run("scan", str(tmp_path), "--select", "RA999")
    assert bad_rule.returncode == 2 and "unknown rule id 'RA999'" in bad_rule.stderr
    bad_format = run("scan", str(tmp_path), "--format", "xml")
    assert bad_format.returncode == 2


def test_select_and_ignore(tmp_path: Path) -> None:
    write_tree(tmp_path, {"hazard.py": HAZARD, "warn.py": WARNING_ONLY})
    only_301 = json.loads(run("scan", str(tmp_path), "-f", "json", "--select", "RA301").stdout)
    assert [f["rule_id"] for f in only_301["findings"]] == ["RA301"]
    no_1xx = json.loads(run("scan", str(tmp_path), "-f", "json", "--ignore", "RA1").stdout)
    assert [f["rule_id"] for f in no_1xx["findings"]] == ["RA301"]
    both = json.loads(run("scan", str(tmp_path), "-f", "json", "--select", "RA101,RA301").stdout)
    assert sorted(f["rule_id"] for f in both["findings"]) == ["RA101", "RA301"]


def test_output_file_and_formats(tmp_path: Path) -> None:
    target = tmp_path / "out" / "report.sarif"
    out = run("scan", "fixtures/myagent", "-f", "sarif", "-o", str(target))
    assert out.returncode == 1
    assert out.stdout == ""
    assert "written to" in out.stderr
    sarif = json.loads(target.read_text())
    assert sarif["version"] == "2.1.0" and len(sarif["runs"][0]["results"]) == 7

    gh = run("scan", "fixtures/myagent", "-f", "github")
    lines = gh.stdout.splitlines()
    assert len(lines) == 7
    assert lines[0].startswith("::warning file=fixtures/myagent/myagent/api.py,line=25,endLine=25,col=16,")
    assert "title=RA301 get-state-decides-resume::" in lines[0]
    assert any(line.startswith("::error ") and "title=RA201 fork-without-discriminator" in line for line in lines)
    # an annotation spanning several lines carries no columns (GitHub's rule); a one-line one does
    spans = {
        (f["start_line"], f["end_line"])
        for f in json.loads(run("scan", "fixtures/myagent", "-f", "json").stdout)["findings"]
    }
    assert any(a != b for a, b in spans)
    for line in lines:
        props = dict(p.split("=", 1) for p in line.split(" ", 1)[1].split("::", 1)[0].split(","))
        assert ("col" in props) == (props["line"] == props["endLine"]), line

    js = json.loads(run("scan", "fixtures/myagent", "-f", "json").stdout)
    assert js["summary"]["findings"] == 7
    assert js["summary"]["by_rule"] == {"RA101": 2, "RA103": 1, "RA201": 1, "RA301": 1, "RA302": 1, "RA401": 1}


def test_json_is_byte_identical_across_runs() -> None:
    first = run("scan", "fixtures", "-f", "json").stdout
    second = run("scan", "fixtures", "-f", "json").stdout
    assert first == second and json.loads(first)["findings"]


def test_rules_and_explain() -> None:
    listing = run("rules")
    assert listing.returncode == 0
    for rule_id in ("RA101", "RA102", "RA201", "RA301", "RA401"):
        assert rule_id in listing.stdout
    rows = json.loads(run("rules", "-f", "json").stdout)
    by_id = {r["id"]: r for r in rows}
    assert by_id["RA201"]["properties"] == ["FD", "FI"] and by_id["RA101"]["severity"] == "error"
    doc = run("explain", "ra201")
    assert doc.returncode == 0
    assert doc.stdout.startswith("# RA201 fork-without-discriminator")
    assert "## Why it breaks at runtime" in doc.stdout and "#6663" in doc.stdout and "## Fix" in doc.stdout
    unknown = run("explain", "RA999")
    assert unknown.returncode == 2 and "unknown rule id" in unknown.stderr


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_a_finished_scan_ends_at_once_with_its_whole_report_and_exit_code(tmp_path: Path, fmt: str) -> None:
    """A scan's process ends without freeing its heap (os._exit once the report is out): what a pipe
    reader gets is still the whole report -- several pipe buffers of it -- and the exit code the
    findings call for; a report file says the same."""
    tree = REPO / "fixtures" / "static"
    command = [sys.executable, "-m", "resume_audit", "scan", str(tree), "-f", fmt, "--no-cache"]
    piped = subprocess.run(command, capture_output=True, cwd=tmp_path)
    assert piped.returncode == 1, piped.stderr.decode()
    assert len(piped.stdout) > 2 * 65536
    written = subprocess.run([*command, "-o", str(tmp_path / f"report.{fmt}")], capture_output=True, cwd=tmp_path)
    assert written.returncode == 1
    assert json.loads(piped.stdout) == json.loads((tmp_path / f"report.{fmt}").read_text())
    assert b"written to" in written.stderr  # (what it says on stderr is flushed too)
    clean = subprocess.run(
        [*command[:4], str(tree / "ra101" / "safe_idempotent_effects.py"), "-f", fmt, "--no-cache"],
        capture_output=True,
        cwd=tmp_path,
    )
    assert clean.returncode == 0, clean.stderr.decode()
