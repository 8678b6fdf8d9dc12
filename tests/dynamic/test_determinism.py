"""Kill points are named by what happened and the schedule is controlled: repeated sweeps agree byte for byte."""

from __future__ import annotations

import json
import os

from dyn_helpers import assert_same_text, run_sweep

ORDER = dict(effects=["order_approval:charge_card"], input={"order_id": 7}, resume=["approve"])


def test_stable_json_is_byte_identical_across_sweeps():
    first = run_sweep("order_approval.py:build_graph", cells=["crash", "parked", "fork", "stray", "validity"], **ORDER)
    second = run_sweep(
        "order_approval.py:build_graph", cells=["crash", "parked", "fork", "stray", "validity"], timeout=59, **ORDER
    )  # a different key: really a second sweep
    assert first is not second
    assert_same_text(first.to_json_stable(), second.to_json_stable())


def test_stable_json_carries_no_run_specific_values():
    report = run_sweep("order_approval.py:build_graph", cells=["crash", "parked", "fork", "stray", "validity"], **ORDER)
    text = report.to_json_stable()
    assert "/tmp" not in text and "resume-audit-sweep-" not in text
    assert str(os.getpid()) not in text
    data = json.loads(text)
    assert set(data) >= {"cells", "findings", "protocol", "versions", "summary"}
    assert data["versions"]["langgraph"]
    assert "timings" not in data
    for finding in data["findings"]:
        assert len(finding["fingerprint"]) == 32


def test_fingerprints_are_stable_and_distinct():
    report = run_sweep("order_approval.py:build_graph", cells=["crash", "parked", "fork", "stray", "validity"], **ORDER)
    prints = [f.fingerprint for f in report.findings]
    assert len(prints) == len(set(prints)) == len(report.findings) == 3  # RA701 + RA703 x 2
