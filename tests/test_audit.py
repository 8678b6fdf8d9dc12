"""`resume-audit audit` on the bundled help-desk project: every confirmation is asserted exactly.

The verdicts under them come from the dynamic stage, whose findings on these
patterns (a crash after an unkeyed effect, a park re-entered on resume, two
processes resuming one park) are checked against direct SIGKILL / concurrent
probes in tests/dynamic. Here: the audit finds the programs with no
configuration, plans their sweeps, and joins the two stages correctly.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Literal, Optional, TypedDict

import pytest
from test_sarif import validate_sarif

from resume_audit.audit.entrypoints import discover
from resume_audit.dynamic.child.synthesis import example_from_schema, example_from_type

REPO = Path(__file__).resolve().parent.parent
PROJECT = REPO / "fixtures" / "audit"


def audit(*args: str, cwd: Path = PROJECT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "resume_audit", "audit", ".", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.fixture(scope="module")
def report() -> dict:
    proc = audit("--format", "json")
    assert proc.returncode == 1, proc.stderr  # confirmed findings fail the run by default
    return json.loads(proc.stdout)


def verdicts(report: dict) -> list[tuple[str, str, int, str]]:
    return [(f["rule_id"], f["path"], f["start_line"], f["confirmation"]) for f in report["findings"]]


def test_every_static_finding_gets_its_confirmation(report):
    static = [v for v in verdicts(report) if v[3] != "dynamic-only"]
    assert static == [
        ("RA302", "helpdesk/api.py", 18, "confirmed"),  # two racing resumes refund twice (RA705)
        ("RA102", "helpdesk/hold_workflow.py", 12, "confirmed"),  # LlamaIndex replays the step: the ping again
        ("RA603", "helpdesk/hold_workflow.py", 13, "not-exercised"),  # no probe: the sweep persists the context
        ("RA103", "helpdesk/keyed_refunds.py", 26, "not-reproduced"),  # the session's key dedupes the retry
        ("RA105", "helpdesk/refund_flow.py", 22, "confirmed"),  # CrewAI @persist re-kickoff refunds again
        ("RA105", "helpdesk/refund_flow.py", 26, "confirmed"),
        ("RA101", "helpdesk/refunds.py", 20, "confirmed"),  # the Slack ping fires again on resume (RA701)
        ("RA103", "helpdesk/refunds.py", 28, "confirmed"),  # a crash after the refund refunds twice (RA701)
    ]
    by_line = {(f["path"], f["start_line"]): f for f in report["findings"] if f["confirmation"] != "dynamic-only"}
    refund = by_line[("helpdesk/refunds.py", 28)]
    assert refund["witness"]["confirmed_by"] == "RA701" and refund["witness"]["observed"] == 2
    assert refund["witness"]["target"] == "helpdesk.refunds:build_refund_graph"
    assert any(
        step["path"] == "helpdesk/refunds.py" for flow in refund["flows"][1:] for step in flow
    )  # the sweep's flow
    assert by_line[("helpdesk/api.py", 18)]["witness"]["confirmed_by"] == "RA705"
    keyed = by_line[("helpdesk/keyed_refunds.py", 26)]
    assert "`refund` ran under every probe" in keyed["confirmation_note"]


def test_what_only_the_sweep_saw_is_reported_as_such(report):
    dynamic = [v for v in verdicts(report) if v[3] == "dynamic-only"]
    assert sorted({(rule, path) for rule, path, _line, _c in dynamic}) == [
        ("RA705", "helpdesk/hold_workflow.py"),  # two processes answering one LlamaIndex wait both ping
        ("RA708", "helpdesk/triage_graph.py"),  # pydantic-graph: a crash mid-node leaves a run it will not resume
    ]
    # LangGraph serves a fork the first answer (#6663) at both desks' gates, but nothing here resumes at a
    # checkpoint_id: a note of the run, not a result (issue 34; it was reported twice per gate before)
    notes = [n["message"] for n in report["notifications"]]
    assert any(
        n.startswith("RA703") and "helpdesk/refunds.py:19" in n and "helpdesk/keyed_refunds.py:18" in n for n in notes
    ), notes


def test_entry_points_are_found_swept_or_explained(report):
    entries = {e["target"]: e for e in report["audit"]["entry_points"]}
    assert sorted(entries) == [
        "helpdesk.hold_workflow:HoldWorkflow",
        "helpdesk.keyed_refunds:build_keyed_graph",
        "helpdesk.refund_flow:RefundFlow",
        "helpdesk.refunds:build_refund_graph",
        "helpdesk.reports:build_report_graph",
        "helpdesk.triage_graph:triage",
    ]
    assert {e["framework"] for e in entries.values() if e["swept"]} == {
        "langgraph",
        "crewai",
        "llamaindex",
        "pydantic-graph",
    }
    desk = entries["helpdesk.refunds:build_refund_graph"]
    assert desk["swept"] and desk["answers"] == ["approve"]  # the answer that reaches the refund
    assert desk["input"]["order_id"] == "order_id-1"  # synthesised from the Ticket TypedDict
    assert "helpdesk.payments.issue_refund" in desk["effects"] and "helpdesk.notify.post_to_slack" in desk["effects"]
    reports = entries["helpdesk.reports:build_report_graph"]
    assert not reports["swept"] and "needs db_url" in reports["why"]
    assert report["audit"]["confirmations"] == {
        "confirmed": 6,
        "dynamic-only": 3,
        "not-exercised": 1,
        "not-reproduced": 1,
    }


def test_sarif_carries_the_confirmation_and_stays_valid(tmp_path):
    proc = audit("--format", "sarif", "--fail-on", "never")
    assert proc.returncode == 0, proc.stderr
    log = json.loads(proc.stdout)
    validate_sarif(log)
    values = {r["properties"]["confirmation"] for r in log["runs"][0]["results"]}
    assert values == {"confirmed", "not-reproduced", "not-exercised", "dynamic-only"}
    # the pull-request step fails on what the sweep confirmed, and says so in each annotation
    sarif = tmp_path / "audit.sarif"
    sarif.write_text(proc.stdout)
    report = subprocess.run(
        [sys.executable, "-m", "resume_audit", "github-report", str(sarif), "--fail-on", "confirmed"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert report.returncode == 1, report.stderr
    assert "::error" in report.stdout and "[confirmed] requests.post" in report.stdout


def test_list_names_every_entry_point_without_running_anything():
    proc = audit("--list")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert [line.split()[1] for line in lines] == [
        "helpdesk.hold_workflow:HoldWorkflow",
        "helpdesk.keyed_refunds:build_keyed_graph",
        "helpdesk.refund_flow:RefundFlow",
        "helpdesk.refunds:build_refund_graph",
        "helpdesk.reports:build_report_graph",
        "helpdesk.triage_graph:triage",
    ]
    assert lines[1].startswith(
        "helpdesk/keyed_refunds.py:29  helpdesk.keyed_refunds:build_keyed_graph  [langgraph factory]"
    )
    assert "cannot sweep: the factory needs db_url" in lines[4]


def test_configuration_overrides_and_skips(tmp_path):
    import shutil

    shutil.copytree(PROJECT, tmp_path / "desk")
    (tmp_path / "desk" / "pyproject.toml").write_text(
        '[tool.resume-audit.audit."helpdesk.keyed_refunds:build_keyed_graph"]\nskip = "swept in its own job"\n'
        '[tool.resume-audit.audit."helpdesk.refunds:build_refund_graph"]\nresume = ["reject"]\n'
        'input = {order_id = "A-7", amount_cents = 500}\n'
        '[tool.resume-audit.audit."helpdesk.refund_flow:RefundFlow"]\nskip = "x"\n'
        '[tool.resume-audit.audit."helpdesk.hold_workflow:HoldWorkflow"]\nskip = "x"\n'
        '[tool.resume-audit.audit."helpdesk.triage_graph:triage"]\nskip = "x"\n'
    )
    proc = audit("--format", "json", "--fail-on", "never", "--cells", "crash", cwd=tmp_path / "desk")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    entries = {e["target"]: e for e in data["audit"]["entry_points"]}
    assert (
        entries["helpdesk.keyed_refunds:build_keyed_graph"]["why"] == "skipped by configuration: swept in its own job"
    )
    desk = entries["helpdesk.refunds:build_refund_graph"]
    assert desk["answers"] == ["reject"] and desk["input"] == {"order_id": "A-7", "amount_cents": 500}
    by_line = {(f["path"], f["start_line"]): f for f in data["findings"]}
    # rejected, the refund never runs: its finding is not exercised, and the note says how to reach it
    refund = by_line[("helpdesk/refunds.py", 28)]
    assert refund["confirmation"] == "not-exercised", refund
    assert "ran `refund` but never reached helpdesk.payments.issue_refund" in refund["confirmation_note"]
    assert by_line[("helpdesk/keyed_refunds.py", 26)]["confirmation"] == "not-exercised"


def test_bad_configuration_is_a_usage_error(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.resume-audit.audit."a:b"]\nanswers = ["x"]\n')
    (tmp_path / "g.py").write_text("x = 1\n")
    proc = audit(cwd=tmp_path)
    assert proc.returncode == 2 and "unknown key(s) answers" in proc.stderr


def test_entry_point_shapes(tmp_path):
    pkg = tmp_path / "app"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "graphs.py").write_text(
        "from langgraph.graph import StateGraph\nfrom langgraph.func import entrypoint\n\n"
        "def build(checkpointer=None):\n    return StateGraph(dict).compile(checkpointer=checkpointer)\n\n"
        "def needs(url, checkpointer):\n    return StateGraph(dict).compile()\n\n"
        "graph = StateGraph(dict).compile()\n\n"
        "@entrypoint(checkpointer=None)\ndef flow(x):\n    return x\n"
    )
    (tmp_path / "flows.py").write_text("from crewai.flow.flow import Flow\n\nclass Desk(Flow):\n    pass\n")
    (tmp_path / "builders.py").write_text(
        "import re\nfrom langgraph.graph import StateGraph\n\nPATTERN = re.compile('x')\n\n"
        "def make_builder():\n    b = StateGraph(dict)\n    b.add_node('a', lambda s: s)\n    return b\n\n"
        "builder = StateGraph(dict)\n"
    )
    (tmp_path / "other.py").write_text("def build():\n    return thing.compile()\n")  # no framework import
    found = discover(
        [
            (pkg / "graphs.py", "app/graphs.py"),
            (tmp_path / "builders.py", "builders.py"),
            (tmp_path / "flows.py", "flows.py"),
            (tmp_path / "other.py", "other.py"),
        ]
    )
    assert [(e.target, e.kind, bool(e.why_not)) for e in found] == [
        ("app.graphs:build", "factory", False),
        ("app.graphs:needs", "factory", True),
        ("app.graphs:flow", "entrypoint", False),
        ("builders:make_builder", "builder function", False),  # re.compile is not a graph; the factory wins
        ("flows:Desk", "flow", False),
    ]
    assert found[0].root == str(tmp_path)  # swept from above the package


class Inner(TypedDict):
    url: str


class State(TypedDict, total=False):
    customer_email: str
    tier: Literal["gold", "silver"]
    count: int
    note: Optional[str]
    inner: Inner
    tags: list[str]


def test_synthesised_inputs_are_plain_and_deterministic():
    assert example_from_type(State) == {
        "customer_email": "customer@example.com",
        "tier": "gold",
        "count": 1,
        "note": "example note",
        "inner": {"url": "https://example.com/item/1"},
        "tags": [],
    }
    schema = {
        "type": "object",
        "properties": {
            "order_id": {"type": "string"},
            "qty": {"type": "integer", "minimum": 3},
            "kind": {"$ref": "#/$defs/K"},
        },
        "$defs": {"K": {"enum": ["a", "b"]}},
    }
    assert example_from_schema(schema) == {"order_id": "order_id-1", "qty": 3, "kind": "a"}


def test_sharded_audit_merges_into_the_unsharded_confirmations(report, tmp_path):
    """`audit --shard K/N` on two runners, then `merge`: the same findings with the same confirmations."""
    outputs = []
    for k in (1, 2):
        out = tmp_path / f"shard-{k}.json"
        proc = audit("--shard", f"{k}/2", "--format", "json", "--output", str(out))
        assert proc.returncode in (0, 1), proc.stderr
        shard = json.loads(out.read_text())
        assert shard["audit"]["shard"] == f"{k}/2"
        assert 0 < sum(1 for e in shard["audit"]["entry_points"] if not e["elsewhere"]) < 6  # a slice
        outputs.append(str(out))
    merged = subprocess.run(
        [sys.executable, "-m", "resume_audit", "merge", *outputs, "--format", "json"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert merged.returncode == 1, merged.stderr  # confirmed findings fail the merged run as the unsharded one
    data = json.loads(merged.stdout)
    assert sorted(verdicts(data)) == sorted(verdicts(report))
    assert data["audit"]["confirmations"] == report["audit"]["confirmations"]
    assert {e["target"]: e["swept"] for e in data["audit"]["entry_points"]} == {
        e["target"]: e["swept"] for e in report["audit"]["entry_points"]
    }


def _effect_sinks(root):
    """The audit's sink search over ``root``, as run_audit sets it up."""
    from resume_audit.audit.modules import Modules
    from resume_audit.audit.sinks import effect_sinks, sink_analyzer
    from resume_audit.config.settings import Config
    from resume_audit.discovery.walk import discover as discover_files

    sources = list(discover_files([root], root))
    analyzer = sink_analyzer(sources, Config())
    return effect_sinks(analyzer, sources, Modules(analyzer.project.load))


def test_every_effect_the_static_model_sees_is_planned_not_only_the_flagged_ones():
    from resume_audit.audit.modules import Modules
    from resume_audit.audit.sinks import imported_closure

    sinks = dict(_effect_sinks(PROJECT))
    assert sorted(sinks) == [
        "helpdesk.notify:post_to_slack",
        "helpdesk.payments:issue_refund",
        "helpdesk.payments:issue_refund_once",
    ]
    # only what the program loads is wrapped: the keyed desk never imports the Slack helper
    loaded = imported_closure(PROJECT / "helpdesk" / "keyed_refunds.py", PROJECT, Modules())
    assert (PROJECT / "helpdesk" / "payments.py").resolve() in loaded
    assert (PROJECT / "helpdesk" / "notify.py").resolve() not in loaded


def test_the_standard_library_is_never_stubbed(tmp_path):
    """A stubbed os.replace would silence the sweep's own reports (seen on a corpus repository: every
    child 'exited without reporting'); library effects are named only outside the standard library."""
    (tmp_path / "g.py").write_text(
        "import os, requests\nfrom langgraph.graph import StateGraph\nfrom langgraph.types import interrupt\n\n"
        "def node(state):\n    os.replace('a', 'b')\n    requests.post('https://x.example', json={})\n"
        "    return {'a': interrupt('ok?')}\n\n"
        "def build():\n    b = StateGraph(dict)\n    b.add_node('node', node)\n    return b.compile()\n"
    )
    assert [name for name, _f in _effect_sinks(tmp_path)] == ["requests:post"]
