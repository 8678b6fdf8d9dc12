"""The issue's ground truth, reproduced on the installed LangGraph with real SIGKILLs and real stores.

Each probe is shown failing on a graph that breaks its property and passing
on a control that keeps it.
"""

from __future__ import annotations

import pytest
from dyn_helpers import assert_same_text, cell, cells, not_passing, rules, sweep  # noqa: F401 (fixtures)
from dyn_helpers import direct as _direct

LOSSY_EFFECTS = ["lossy_saver:export_rows", "lossy_saver:notify_loaded"]

ORDER = dict(effects=["order_approval:charge_card"], input={"order_id": 7}, resume=["approve"])
EFFECT = "order_approval.charge_card"
EFFECT_POINT = f"resume 1: after effect {EFFECT} in node charge"


@pytest.fixture(scope="module")
def order(sweep):
    """The full sweep of the order-approval graph on SqliteSaver."""
    return sweep("order_approval.py:build_graph", **ORDER)


# -- the reference --------------------------------------------------------------------------
def test_uninterrupted_run_is_the_reference(order):
    dry = cell(order, "dry-run", "uninterrupted")
    assert order.complete and dry.verdict == "pass"
    assert dry.effects == {EFFECT: (1, 1)}
    assert dry.nodes == {"prepare": (1, 1), "review": (2, 2), "charge": (1, 1)}  # review re-enters once on resume
    assert order.kill_points == 12  # 11 saver operations + 1 effect, named by what happened
    names = [c.name for c in cells(order, "crash")]
    assert "run: after put_writes of interrupt in node review, step 2" in names
    assert "resume 1: after put_writes of resume value, step 2" in names
    assert EFFECT_POINT in names


# -- EO on the crash path (RA701) -----------------------------------------------------------
def test_effect_killed_before_its_write_is_durable_fires_again(order):
    c = cell(order, "crash", EFFECT_POINT)
    assert c.verdict == "fail" and c.rules == ("RA701",)
    assert c.effects[EFFECT] == (1, 2)
    assert c.nodes["charge"] == (1, 2)
    assert c.final_state_match is True  # the state hides the duplicate; only the ledger shows it
    assert c.witness.durable_at_crash.next == ["charge"]


def test_ra701_finding_is_located_with_a_code_flow(order):
    [finding] = [f for f in order.findings if f.rule_id == "RA701"]
    assert finding.origin == "dynamic" and finding.scope == "charge"
    assert finding.span.path == "fixtures/dynamic/langgraph/order_approval.py"
    source = open("fixtures/dynamic/langgraph/order_approval.py").read().splitlines()
    assert source[finding.span.start_line - 1].startswith("def charge(")
    assert finding.witness["expected"] == 1 and finding.witness["observed"] == 2
    [flow] = finding.flows
    assert len(flow) == 3  # kill point -> resume -> duplicate
    assert "charge_card(" in source[flow[0].span.start_line - 1]
    assert flow[0].message.startswith("process SIGKILLed")
    assert "fired again" in flow[2].message
    assert len(finding.fingerprint) == 32


def test_no_completed_node_reruns_once_its_write_is_durable(order):
    crash_like = cells(order, "crash") + cells(order, "parked")
    assert len(crash_like) == 13
    for c in crash_like:
        assert not [h for h in c.hits if h.subject.startswith("rerun:")], c.name
        assert c.verdict in ("pass", "fail"), (c.name, c.detail)
    # every kill point other than the one inside `charge` recovers to exactly the reference
    for c in crash_like:
        if c.name != EFFECT_POINT:
            assert c.verdict == "pass", (c.name, c.detail)
            assert c.effects[EFFECT] == (1, 1), c.name
            assert c.final_state_match is True
    after_charge_write = cell(order, "crash", "after put_writes of node charge, step 3")
    assert after_charge_write.nodes["charge"] == (1, 1)  # durable write: charge is not run again


def test_crash_while_parked_keeps_the_park(order):
    c = cell(order, "parked", "parking at interrupt 0 in node review")
    assert c.verdict == "pass"
    assert c.resumed.startswith("Command(resume=...) for pending interrupt 0")
    assert c.effects[EFFECT] == (1, 1)


# -- FD (RA703) -----------------------------------------------------------------------------
@pytest.mark.parametrize("form", ["bare", "map"])
def test_fork_served_first_value_on_sqlite(order, form):
    c = cell(order, "fork", "bare Command" if form == "bare" else "interrupt-id map")
    assert c.verdict == "fail" and c.rules == ("RA703",)
    assert c.witness.sent == ["approve", "reject"]
    assert c.witness.served == ["approve", "approve"]


def test_fork_served_first_value_in_memory(sweep):
    report = sweep("order_approval.py:build_graph", backend="memory", cells=["fork"], **ORDER)
    forks = cells(report, "fork")
    assert [c.verdict for c in forks] == ["fail", "fail"]
    assert all(c.witness.served == ["approve", "approve"] for c in forks)
    assert rules(report) == ["RA703", "RA703"]


def test_fork_probe_passes_behind_a_fork_aware_saver(sweep):
    report = sweep("fork_aware.py:build_graph", cells=["fork", "stray"], **ORDER)
    for c in cells(report, "fork"):
        assert c.verdict == "pass", c.detail
        assert c.witness.served == ["approve", "reject"]
        assert c.witness.effects_per_branch == {"fork-1": {EFFECT: 1}, "fork-2": {}}
    assert cell(report, "stray", "stray").verdict == "pass"
    assert "RA703" not in rules(report)


# -- CO (RA704 stray, RA705 concurrent) -------------------------------------------------------
def test_stray_resume_after_completion_is_inert(order):
    c = cell(order, "stray", "stray resume")
    assert c.verdict == "pass"
    assert c.effects[EFFECT] == (0, 0)
    assert c.final_state_match is True
    assert c.witness.raised is None and c.witness.checkpoints_added == 0


def test_two_concurrent_resumes_fire_the_gated_effect_twice(order):
    c = cell(order, "concurrent", "2 concurrent")
    assert c.verdict == "fail" and c.rules == ("RA705",)
    assert c.effects[EFFECT] == (1, 2)
    assert c.witness.consumed == 2 and c.witness.racer_errors == []
    assert c.witness.served == ["approve", "approve"]


def test_four_concurrent_resumes(order):
    c = cell(order, "concurrent", "4 concurrent")
    assert c.verdict == "fail"
    expected, observed = c.effects[EFFECT]
    assert expected == 1 and observed >= 2  # a race: an existence claim, observed count reported


def test_keyed_effect_control_is_clean_for_eo_and_co(sweep):
    report = sweep(
        "keyed_effect.py:builder", effects=["keyed_effect:charge_card"], input={"order_id": 3}, resume=["approve"]
    )
    assert not {"RA701", "RA702", "RA704", "RA705", "RA706", "RA707", "RA708"} & set(rules(report))
    assert not_passing(report, "crash", "parked", "write-order") == []
    effect_cell = cell(report, "crash", "after effect keyed_effect.charge_card in node charge")
    assert effect_cell.effects["keyed_effect.charge_card"] == (1, 1)
    assert effect_cell.nodes["charge"] == (1, 2)  # the node did re-run; the key made it harmless
    for c in cells(report, "concurrent"):
        assert c.verdict == "pass"
        assert c.witness.consumed >= 2  # CO-c: authority taken twice, CO-e held by the key
        assert "CO-c" in c.detail
    assert rules(report) == ["RA703", "RA703"]  # stock LangGraph still fails FD here


def test_graph_without_interrupt_is_clean(sweep):
    report = sweep("no_interrupt.py:build", effects=["no_interrupt:store_document"], input={"text": "a b c"}, resume=[])
    assert not_passing(report, "crash", "write-order") == []
    assert report.findings == []
    for kind in ("fork", "stray", "concurrent"):
        assert {c.verdict for c in cells(report, kind)} == {"n/a"}


# -- CV (RA706) -------------------------------------------------------------------------------
def test_terminal_invalid_write_is_persisted_silently(sweep):
    report = sweep(
        "pydantic_state.py:build", effects=[], input={"customer": "ann"}, resume=[], cells=["crash", "validity"]
    )
    assert report.complete
    assert cell(report, "dry-run", "uninterrupted").verdict == "pass"  # nothing raised
    [finding] = report.findings
    assert finding.rule_id == "RA706" and finding.scope == "add_missing"
    assert finding.witness["field"] == "items" and finding.witness["value"] == ["apple", "pear", None]
    assert finding.witness["silent"] is True
    assert "items[2]" in finding.witness["error"]


def test_mid_graph_invalid_write_is_persisted_then_breaks_the_run(sweep):
    report = sweep("pydantic_state.py:build_midgraph", effects=[], input={"customer": "ann"}, resume=[])
    assert not report.complete
    dry = cell(report, "dry-run", "uninterrupted")
    assert dry.verdict == "error" and "ValidationError" in dry.detail
    [finding] = report.findings
    assert finding.rule_id == "RA706" and finding.scope == "add_missing"
    assert finding.witness["silent"] is False


@pytest.mark.parametrize(
    "target,kind", [("typed_states.py:typeddict_graph", "typeddict"), ("typed_states.py:dataclass_graph", "dataclass")]
)
def test_valid_states_pass_the_validity_probe(sweep, target, kind):
    inputs = {"typeddict": {"n": 1}, "dataclass": {"title": "bug"}}
    report = sweep(target, effects=[], input=inputs[kind], resume=[], cells=["validity"])
    v = cell(report, "validity", "schema")
    assert v.verdict == "pass" and kind in v.detail
    assert report.findings == []


# -- RD (RA707) --------------------------------------------------------------------------------
def test_stock_recovery_is_identical_under_both_write_orders(order):
    wo = cells(order, "write-order")
    assert len(wo) == 11
    assert all(c.verdict == "pass" for c in wo), [(c.name, c.detail) for c in wo if c.verdict != "pass"]


def test_recovery_that_depends_on_write_order_is_found(sweep, tmp_path):
    # ground truth for the natural order, without the sweep: SIGKILL right after extract's writes are
    # stored, recover in a fresh interpreter -- the saver drops pending writes, extract exports again
    assert _direct(
        tmp_path,
        ("start", "lossy_saver", "build", "export_rows,notify_loaded", "{}", "after-writes-to:rows"),
        ("recover", "lossy_saver", "build", "export_rows,notify_loaded"),
    ) == ["export_rows", "export_rows", "notify_loaded"]
    report = sweep("lossy_saver.py:build", effects=LOSSY_EFFECTS, input={}, resume=[], cells=["crash", "write-order"])
    failing = [c for c in cells(report, "write-order") if c.verdict == "fail"]
    assert [c.name for c in failing] == [
        "run: after put_writes of node extract, step 1",
        "run: after put_writes of node load, step 2",
    ]
    assert failing[0].witness.natural.effects["lossy_saver.export_rows"] == (1, 2)
    assert failing[0].witness.deferred.effects["lossy_saver.export_rows"] == (1, 1)
    assert "lossy_saver.export_rows: 2 vs 1" in failing[0].detail and "runs of extract: 2 vs 1" in failing[0].detail
    assert sorted((f.rule_id, f.scope) for f in report.findings if f.rule_id == "RA707") == [
        ("RA707", "extract"),
        ("RA707", "load"),
    ]


def test_a_pure_rerun_under_one_write_order_is_not_reported(sweep):
    """The same saver with no effects named: one order re-runs a pure node, nothing outside differs,
    the final state is the same -- no RA707 (issue 14: it was reported on such graphs)."""
    report = sweep("lossy_saver.py:build", effects=[], input={}, resume=[], cells=["crash", "write-order"])
    wo = cells(report, "write-order")
    assert wo and all(c.verdict == "pass" for c in wo), [(c.name, c.verdict, c.detail) for c in wo]
    assert any("runs of extract: 2 vs 1" in c.detail and c.detail.startswith("recovery equivalent") for c in wo)
    assert "RA707" not in rules(report)


# -- LV (RA708) --------------------------------------------------------------------------------
def test_volatile_park_is_lost_in_a_crash(sweep):
    report = sweep(
        "volatile_park.py:build",
        effects=["volatile_park:notify"],
        input={"request": "r1"},
        resume=[True],
        cells=["parked", "concurrent"],
    )
    parked = cell(report, "parked", "parking at interrupt 0")
    assert parked.verdict == "fail" and "RA708" in parked.rules
    assert parked.resumed.startswith("restart from input")
    assert {c.verdict for c in cells(report, "concurrent")} == {"n/a"}
    assert any("did not persist through the sweep" in n.message for n in report.notifications)


# -- async graphs -----------------------------------------------------------------------------
def test_async_graph_runs_under_async_savers(sweep):
    report = sweep(
        "async_approval.py:graph",
        effects=["async_approval:send_receipt"],
        input={"order_id": 5},
        resume=["approve"],
        cells=["crash", "fork"],
    )
    c = cell(report, "crash", "after effect async_approval.send_receipt in node finalize")
    assert c.verdict == "fail" and c.effects["async_approval.send_receipt"] == (1, 2)
    assert [f.verdict for f in cells(report, "fork")] == ["fail", "fail"]
    others = [x for x in cells(report, "crash") if x is not c]
    assert others and all(x.verdict == "pass" for x in others)


# -- protocols with several interrupts, parallel supersteps -------------------------------------
def test_two_gates_each_crash_recovers_at_the_right_gate(sweep):
    report = sweep(
        "two_gates.py:builder",
        effects=["two_gates:issue_refund", "two_gates:send_payout"],
        input={"ticket": "T1", "amount": 5},
        resume=["ok", "ok"],
        cells=["crash", "parked"],
    )
    assert [c.verdict for c in cells(report, "parked")] == ["pass", "pass"]
    assert (
        cell(report, "parked", "interrupt 1 in node finance").resumed == "Command(resume=...) for pending interrupt 1"
    )
    assert cell(report, "crash", "resume 2: after put_writes of resume value").resumed.endswith("pending interrupt 1")
    failing = sorted(c.name for c in cells(report, "crash") if c.verdict != "pass")
    assert failing == [
        "resume 1: after effect two_gates.issue_refund in node refund",
        "resume 2: after effect two_gates.send_payout in node payout",
    ]
    assert sorted((f.rule_id, f.scope) for f in report.findings) == [("RA701", "payout"), ("RA701", "refund")]


def test_parallel_branches_are_swept_in_one_schedule(sweep):
    args = dict(effects=["fan_out:send_email"], input={}, resume=[], cells=["crash"])
    first = sweep("fan_out.py:build", **args)
    second = sweep("fan_out.py:build", timeout=58, **args)
    assert_same_text(first.to_json_stable(), second.to_json_stable())
    a = cell(first, "crash", "after effect fan_out.send_email in node notify_a")
    b = cell(first, "crash", "after effect fan_out.send_email in node notify_b")
    assert a.effects["fan_out.send_email"] == (2, 3) and b.effects["fan_out.send_email"] == (2, 3)
    # notify_a's write was durable before notify_b started: only notify_b re-runs after the second kill
    assert b.nodes == {"merge": (1, 1), "notify_a": (1, 1), "notify_b": (1, 2)}
    assert all(c.verdict == "pass" for c in cells(first, "crash") if "after effect" not in c.name)


def test_functional_api_entrypoint_through_a_factory(sweep):
    report = sweep(
        "functional_api.py:build",
        effects=["functional_api:charge_card"],
        input={"order_id": 9},
        resume=["approve"],
        cells=["crash", "fork", "validity"],
    )
    effect_cell = cell(report, "crash", "after effect functional_api.charge_card in node charge")
    assert effect_cell.verdict == "fail" and effect_cell.effects["functional_api.charge_card"] == (1, 2)
    # once the task's result is durable it is memoized: no re-run
    assert cell(report, "crash", "after put_writes of node charge").verdict == "pass"
    assert {c.verdict for c in cells(report, "crash") if c is not effect_cell} == {"pass"}
    assert [c.verdict for c in cells(report, "fork")] == ["fail", "fail"]
    assert cell(report, "validity", "schema").verdict == "n/a"
    [ra701] = [f for f in report.findings if f.rule_id == "RA701"]
    assert (
        open("fixtures/dynamic/langgraph/functional_api.py")
        .read()
        .splitlines()[ra701.span.start_line - 1]
        .startswith("def charge(")
    )


# -- a LangChain @tool named as the effect ---------------------------------------------------
def test_a_langchain_tool_is_an_effect_by_its_own_name(sweep, tmp_path):
    """``--effect module:tool`` on a ``@tool`` object records every ``tool.invoke`` in the ledger,
    and the crash after it re-fires the refund as it would for a plain function.

    Ground truth first, without the sweep: park, answer in a process that SIGKILLs itself right
    after the tool returns, recover in a fresh one -- the tool ran twice."""
    assert _direct(
        tmp_path,
        ("start", "tool_refund", "build_graph", "issue_refund", '{"order_id": 3}'),
        ("resume", "tool_refund", "build_graph", "issue_refund", '"approve"', "after-effect"),
        ("recover", "tool_refund", "build_graph", "issue_refund"),
    ) == ["issue_refund", "issue_refund"]
    report = sweep(
        "tool_refund.py:build_graph", effects=["tool_refund:issue_refund"], input={"order_id": 3}, resume=["approve"]
    )
    dry = cell(report, "dry-run", "uninterrupted")
    assert report.complete and dry.verdict == "pass"
    assert dry.effects == {"tool_refund.issue_refund": (1, 1)}
    crash = cell(report, "crash", "resume 1: after effect tool_refund.issue_refund in node refund")
    assert crash.verdict == "fail" and crash.rules == ("RA701",)
    assert crash.effects["tool_refund.issue_refund"] == (1, 2)


def test_a_basetool_subclass_is_an_effect_too(sweep, tmp_path):
    """A class-based tool (``BaseTool`` with its own ``_run``): ground truth first, then the sweep."""
    assert _direct(
        tmp_path,
        ("start", "tool_refund", "build_graph_class_tool", "refund_order", '{"order_id": 4}'),
        ("resume", "tool_refund", "build_graph_class_tool", "refund_order", '"approve"', "after-effect"),
        ("recover", "tool_refund", "build_graph_class_tool", "refund_order"),
    ) == ["refund_order", "refund_order"]
    report = sweep(
        "tool_refund.py:build_graph_class_tool",
        effects=["tool_refund:refund_order"],
        input={"order_id": 4},
        resume=["approve"],
        cells=["crash"],
    )
    assert cell(report, "dry-run", "uninterrupted").effects == {"tool_refund.refund_order": (1, 1)}
    crash = cell(report, "crash", "resume 1: after effect tool_refund.refund_order in node refund")
    assert crash.verdict == "fail" and crash.effects["tool_refund.refund_order"] == (1, 2)
