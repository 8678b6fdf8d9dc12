"""Pause points of every kind, each probed: static breakpoints, interrupts in subgraphs, several gates.

Every verdict is first measured without the sweep (``direct``: fresh interpreters,
a real SIGKILL, real concurrent processes on one on-disk SqliteSaver, effect
calls and served values counted in files), then the sweep must agree.
"""

from __future__ import annotations

import pytest
from dyn_helpers import cell, cells, direct, rules, served, sweep  # noqa: F401 (fixtures)

REFUND_DESK = dict(effects=["static_breakpoint:issue_refund"], input={"ticket": "T1", "amount": 5}, resume=[])
REFUND = "static_breakpoint.issue_refund"
CLAIM = dict(
    effects=["subgraph_gate:notify_reviewer", "subgraph_gate:send_payout"], input={"claim": "C1"}, resume=["approve"]
)
NOTIFY, PAYOUT = "subgraph_gate.notify_reviewer", "subgraph_gate.send_payout"
GATES = dict(
    effects=["two_gates:issue_refund", "two_gates:send_payout"],
    input={"ticket": "T1", "amount": 5},
    resume=["yes", "ok"],
)
DESK_INPUT = '{"ticket": "T1", "amount": 5}'


# -- static breakpoints: compile(interrupt_before=[...]) / interrupt_after ----------------------
@pytest.fixture(scope="module")
def desk(sweep):
    return sweep("static_breakpoint.py:build_graph", **REFUND_DESK)


def test_a_static_breakpoint_is_a_park_continued_with_invoke_none(desk, tmp_path):
    # ground truth: the run stops before `refund`; invoke(None) in a fresh process refunds once
    assert direct(tmp_path, ("start", "static_breakpoint", "build_graph", "issue_refund", DESK_INPUT)) == []
    assert direct(tmp_path, ("recover", "static_breakpoint", "build_graph", "issue_refund")) == ["issue_refund"]
    dry = cell(desk, "dry-run", "uninterrupted")
    assert dry.verdict == "pass" and "1 park(s)" in dry.detail
    assert dry.effects == {REFUND: (1, 1)} and dry.nodes == {"draft": (1, 1), "refund": (1, 1)}
    assert dry.witness.to_json()["parks"] == [{"index": 0, "node": "refund", "value": None, "kind": "before"}]
    parked = cell(desk, "parked", "static breakpoint 0 (before node refund)")
    assert parked.verdict == "pass" and parked.resumed.startswith("invoke(None) at pending static breakpoint")
    # no kill point before the breakpoint blames a node that never ran (the three false findings)
    assert [c.name for c in cells(desk, "crash") if c.verdict != "pass"] == [
        f"resume 1: after effect {REFUND} in node refund"
    ]
    assert sorted((f.rule_id, f.scope) for f in desk.findings) == [("RA701", "refund"), ("RA705", "refund")]


def test_two_processes_continuing_one_breakpoint_both_refund(desk, tmp_path):
    # ground truth: two processes released together both pass the breakpoint and refund
    calls = direct(
        tmp_path,
        ("start", "static_breakpoint", "build_graph", "issue_refund", DESK_INPUT),
        ("race", 2, "static_breakpoint", "build_graph", "issue_refund"),
    )
    assert calls == ["issue_refund", "issue_refund"]
    c = cell(desk, "concurrent", "2 concurrent")
    assert c.verdict == "fail" and c.rules == ("RA705",)
    assert c.effects[REFUND] == (1, 2) and c.witness.consumed == 2
    assert "static breakpoint interrupt_before at `refund`" in c.hits[0].message
    four = cell(desk, "concurrent", "4 concurrent")
    assert four.verdict == "fail" and four.effects[REFUND][1] >= 2  # a race: at least two, the count is reported


def test_a_breakpoint_takes_no_value_so_the_fork_probe_does_not_apply(desk):
    for c in cells(desk, "fork"):
        assert c.verdict == "n/a" and "continued without a value" in c.detail
    stray = cell(desk, "stray", "stray")
    assert stray.verdict == "pass" and stray.effects[REFUND] == (0, 0)


def test_interrupt_after_pauses_the_same_way(sweep, tmp_path):
    calls = direct(
        tmp_path,
        ("start", "static_breakpoint", "build_graph_after", "issue_refund", DESK_INPUT),
        ("race", 2, "static_breakpoint", "build_graph_after", "issue_refund"),
    )
    assert calls == ["issue_refund", "issue_refund"]
    report = sweep("static_breakpoint.py:build_graph_after", cells=["concurrent", "stray"], **REFUND_DESK)
    dry = cell(report, "dry-run", "uninterrupted")
    assert dry.witness.to_json()["parks"] == [{"index": 0, "node": "refund", "value": None, "kind": "after"}]
    assert cell(report, "concurrent", "2 concurrent").effects[REFUND] == (1, 2)


# -- an interrupt inside a compiled subgraph -----------------------------------------------------
@pytest.fixture(scope="module")
def claim(sweep):
    return sweep("subgraph_gate.py:build_graph", **CLAIM)


def test_subgraph_park_and_effects_belong_to_the_inner_node(claim, tmp_path):
    # ground truth: the ping before interrupt() fires again when the answer arrives
    effects = "notify_reviewer,send_payout"
    calls = direct(
        tmp_path,
        ("start", "subgraph_gate", "build_graph", effects, '{"claim": "C1"}'),
        ("resume", "subgraph_gate", "build_graph", effects, '"approve"'),
    )
    assert calls == ["notify_reviewer", "notify_reviewer", "send_payout"]
    dry = cell(claim, "dry-run", "uninterrupted")
    assert dry.witness.parks[0].node == "approval/review"
    assert dry.nodes["approval/review"] == (2, 2) and dry.nodes["approval/pay"] == (1, 1)
    replay = cell(claim, "interrupt", "answering a park")
    assert replay.verdict == "fail" and replay.witness.to_json()["replays"] == [
        {"park": 0, "node": "approval/review", "effect": NOTIFY, "before": 1, "after": 1}
    ]
    [finding] = [f for f in claim.findings if f.rule_id == "RA701" and "Answering park" in f.message]
    source = open("fixtures/dynamic/langgraph/subgraph_gate.py").read().splitlines()
    assert finding.span.path == "fixtures/dynamic/langgraph/subgraph_gate.py"
    assert source[finding.span.start_line - 1].startswith("def review(")


def test_subgraph_crash_after_the_inner_effect(claim, tmp_path):
    effects = "notify_reviewer,send_payout"
    calls = direct(
        tmp_path,
        ("start", "subgraph_gate", "build_graph", effects, '{"claim": "C1"}'),
        ("resume", "subgraph_gate", "build_graph", effects, '"approve"', "after-effect:send_payout"),
        ("recover", "subgraph_gate", "build_graph", effects),
    )
    assert calls.count("send_payout") == 2
    c = cell(claim, "crash", f"resume 1: after effect {PAYOUT} in node approval/pay")
    assert c.verdict == "fail" and c.effects[PAYOUT] == (1, 2)
    # re-entering the parked inner node is the interrupt protocol, not a re-run of durable work:
    # the parent's durable step says nothing about the subgraph's own step counter
    for c in cells(claim, "crash") + cells(claim, "parked"):
        assert not [h for h in c.hits if h.subject.startswith("rerun:")], (c.name, c.detail)
    assert "RA707" not in rules(claim)


def test_subgraph_fork_drops_the_second_answer(claim, tmp_path):
    # ground truth: at the parent's interrupt checkpoint, the second answer never reaches interrupt()
    effects = "notify_reviewer,send_payout"
    direct(
        tmp_path,
        ("start", "subgraph_gate", "build_graph", effects, '{"claim": "C1"}'),
        ("fork", "subgraph_gate", "build_graph", effects, '"approve"'),
        ("fork", "subgraph_gate", "build_graph", effects, '"reject"'),
    )
    assert served(tmp_path) == ["approve"]
    for c in cells(claim, "fork"):
        assert c.verdict == "fail" and c.rules == ("RA703",), c.detail
        assert c.witness.sent == ["approve", "reject"] and c.witness.served == ["approve", None]
        assert "silently dropped" in c.hits[0].message


def test_subgraph_concurrent_resumes(claim, tmp_path):
    effects = "notify_reviewer,send_payout"
    calls = direct(
        tmp_path,
        ("start", "subgraph_gate", "build_graph", effects, '{"claim": "C1"}'),
        ("race", 2, "subgraph_gate", "build_graph", effects, '"approve"'),
    )
    assert calls.count("send_payout") == 2
    c = cell(claim, "concurrent", "2 concurrent")
    assert c.verdict == "fail" and c.effects[PAYOUT] == (1, 2)
    [finding] = [f for f in claim.findings if f.rule_id == "RA705"]
    assert finding.scope in ("approval/review", "approval/pay")


# -- two gates: every probe at every gate ---------------------------------------------------------
# -- a static breakpoint compiled into a subgraph ------------------------------------------------
def test_a_breakpoint_inside_a_subgraph_is_a_durable_park_at_the_inner_node(sweep, tmp_path):
    # ground truth: the run stops before approval/pay; a fresh process continues it with invoke(None)
    # and pays once; two processes continuing it together both pay
    assert (
        direct(tmp_path / "a", ("start", "subgraph_gate", "build_graph_breakpoint", "send_payout", '{"claim": "C1"}'))
        == []
    )
    assert direct(tmp_path / "a", ("recover", "subgraph_gate", "build_graph_breakpoint", "send_payout")) == [
        "send_payout"
    ]
    raced = direct(
        tmp_path / "b",
        ("start", "subgraph_gate", "build_graph_breakpoint", "send_payout", '{"claim": "C1"}'),
        ("race", 2, "subgraph_gate", "build_graph_breakpoint", "send_payout"),
    )
    assert raced == ["send_payout", "send_payout"]
    report = sweep(
        "subgraph_gate.py:build_graph_breakpoint",
        effects=["subgraph_gate:send_payout"],
        input={"claim": "C1"},
        resume=[],
        cells=["parked", "fork", "concurrent"],
    )
    assert cell(report, "dry-run", "uninterrupted").witness.to_json()["parks"] == [
        {"index": 0, "node": "approval/pay", "value": None, "kind": "before"}
    ]
    parked = cell(report, "parked", "static breakpoint 0 (before node approval/pay)")
    # the park survives the crash in the subgraph's checkpoint: no RA708 "park lost"
    assert parked.verdict == "pass" and parked.effects[PAYOUT] == (1, 1), parked.detail
    assert all(c.verdict == "n/a" for c in cells(report, "fork"))
    c = cell(report, "concurrent", "2 concurrent")
    assert c.verdict == "fail" and c.effects[PAYOUT] == (1, 2) and "`approval/pay`" in c.hits[0].message
    assert sorted({(f.rule_id, f.scope) for f in report.findings}) == [("RA705", "approval/pay")]


@pytest.fixture(scope="module")
def gates(sweep):
    return sweep("two_gates.py:build_graph", cells=["fork", "concurrent"], **GATES)


def test_racing_the_second_gate_pays_twice(gates, tmp_path):
    effects = "issue_refund,send_payout"
    calls = direct(
        tmp_path,
        ("start", "two_gates", "build_graph", effects, DESK_INPUT),
        ("resume", "two_gates", "build_graph", effects, '"yes"'),
        ("race", 2, "two_gates", "build_graph", effects, '"ok"'),
    )
    assert calls == ["issue_refund", "send_payout", "send_payout"]
    second = cell(
        gates, "concurrent", "2 concurrent resumes of one parked interrupt at gate 1 (interrupt() in `finance`)"
    )
    assert second.verdict == "fail" and second.effects == {"two_gates.send_payout": (1, 2)}
    assert second.witness.to_json()["gate"] == {"index": 1, "node": "finance", "kind": "interrupt"}
    first = cell(gates, "concurrent", "2 concurrent resumes of one parked interrupt at gate 0")
    assert first.effects == {"two_gates.issue_refund": (1, 2)}
    assert sorted(f.scope for f in gates.findings if f.rule_id == "RA705") == ["payout", "refund"]


def test_forking_the_second_gate_is_served_the_first_answer(gates, tmp_path):
    effects = "issue_refund,send_payout"
    direct(
        tmp_path,
        ("start", "two_gates", "build_graph", effects, DESK_INPUT),
        ("resume", "two_gates", "build_graph", effects, '"yes"'),
        ("fork", "two_gates", "build_graph", effects, '"ok"'),
        ("fork", "two_gates", "build_graph", effects, '"no"'),
        env={"RA_PROBE_FORK_GATE": "1"},
    )
    assert served(tmp_path) == ["yes", "ok", "ok"]
    c = cell(gates, "fork", "fork probe (bare Command(resume=v)) at gate 1")
    assert c.verdict == "fail" and c.witness.served == ["ok", "ok"]
    assert c.witness.sent == ["ok", "ok (fork)"]
    assert len(cells(gates, "fork")) == 4  # two forms at each of two gates


# -- a graph whose node calls a chat model: --stub-llm ----------------------------------------------
AGENT_INPUT = {"messages": [{"role": "user", "content": "refund order 7"}]}
AGENT_REPLIES = (
    '[{"tool_calls": [{"name": "issue_refund", "args": {"order_id": 7}}]}, {"content": "Order 7 is refunded."}]'
)


def test_llm_calling_graph_runs_offline_under_the_scripted_model(sweep, tmp_path):
    # ground truth: the model's class answering offline by turn (no sweep code), a SIGKILL right after
    # the refund tool returns, a fresh process continuing: the tool refunds twice; two processes
    # continuing the breakpoint together refund twice as well
    model = {"RA_PROBE_MODEL_CLASS": "HostedChat", "RA_PROBE_REPLIES": AGENT_REPLIES}
    start = ("start", "llm_agent", "build_graph", "issue_refund", '{"messages": [["user", "refund order 7"]]}')
    crash = direct(
        tmp_path / "crash",
        start,
        ("recover", "llm_agent", "build_graph", "issue_refund", "null", "after-effect"),
        ("recover", "llm_agent", "build_graph", "issue_refund"),
        env=model,
    )
    assert crash == ["issue_refund", "issue_refund"]
    race = direct(tmp_path / "race", start, ("race", 2, "llm_agent", "build_graph", "issue_refund"), env=model)
    assert race == ["issue_refund", "issue_refund"]
    report = sweep(
        "llm_agent.py:build_graph",
        effects=["llm_agent:issue_refund"],
        input=AGENT_INPUT,
        resume=[],
        stub_llm="fixtures/dynamic/langgraph/llm_agent.script.yaml",
        cells=["crash", "concurrent"],
    )
    assert report.complete
    dry = cell(report, "dry-run", "uninterrupted")
    assert dry.effects == {"llm_agent.issue_refund": (1, 1)} and dry.nodes["agent"] == (2, 2)
    assert dry.witness.to_json()["parks"] == [{"index": 0, "node": "tools", "value": None, "kind": "before"}]
    crashed = cell(report, "crash", "resume 1: after effect llm_agent.issue_refund in node tools")
    assert crashed.verdict == "fail" and crashed.effects["llm_agent.issue_refund"] == (1, 2)
    assert cell(report, "concurrent", "2 concurrent").effects["llm_agent.issue_refund"] == (1, 2)
    assert any("HostedChat calls were answered by the --stub-llm script" in n.message for n in report.notifications)
    source = open("fixtures/dynamic/langgraph/llm_agent.py").read().splitlines()
    for finding in report.findings:  # located in the user's file, not in LangGraph's ToolNode
        assert finding.span.path == "fixtures/dynamic/langgraph/llm_agent.py"
        assert 'add_node("tools"' in source[finding.span.start_line - 1]


def test_without_the_stub_the_model_call_is_refused(sweep):
    report = sweep(
        "llm_agent.py:build_graph", effects=["llm_agent:issue_refund"], input=AGENT_INPUT, resume=[], cells=["crash"]
    )
    assert not report.complete
    assert "network" in cell(report, "dry-run", "uninterrupted").detail.lower()


# -- an interrupt inside a functional-API @task ----------------------------------------------------
def test_an_interrupt_in_a_task_belongs_to_the_task(sweep, tmp_path):
    """LangGraph's state shows the park under the entrypoint; the task raised it. Ground truth: the
    approver is notified again when the answer arrives (the task re-runs from its start), and two
    processes answering together charge twice."""
    effects = "notify_approver,charge_card"
    calls = direct(
        tmp_path / "path",
        ("start", "functional_task_gate", "build", effects, '{"order_id": 5}'),
        ("resume", "functional_task_gate", "build", effects, '"approve"'),
    )
    assert calls == ["notify_approver", "notify_approver", "charge_card"]
    race = direct(
        tmp_path / "race",
        ("start", "functional_task_gate", "build", effects, '{"order_id": 5}'),
        ("race", 2, "functional_task_gate", "build", effects, '"approve"'),
    )
    assert race.count("charge_card") == 2
    report = sweep(
        "functional_task_gate.py:build",
        effects=["functional_task_gate:notify_approver", "functional_task_gate:charge_card"],
        input={"order_id": 5},
        resume=["approve"],
        cells=["interrupt", "concurrent", "fork"],
    )
    dry = cell(report, "dry-run", "uninterrupted")
    assert dry.witness.parks[0].node == "review"
    replay = cell(report, "interrupt", "answering a park")
    assert replay.verdict == "fail" and replay.witness.to_json()["replays"] == [
        {"park": 0, "node": "review", "effect": "functional_task_gate.notify_approver", "before": 1, "after": 1}
    ]
    assert cell(report, "concurrent", "2 concurrent").effects["functional_task_gate.charge_card"] == (1, 2)
    source = open("fixtures/dynamic/langgraph/functional_task_gate.py").read().splitlines()
    for finding in report.findings:
        assert finding.span.path == "fixtures/dynamic/langgraph/functional_task_gate.py"
        assert source[finding.span.start_line - 1].startswith(("def review(", "def charge("))
