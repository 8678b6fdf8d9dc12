"""``SweepReport.assert_exactly_once`` / ``assert_conformant``: what they check and the witness they print.

The sweeps are the ones the ground-truth and isolation tests run (same
arguments, so the session's memoised reports are reused).
"""

from __future__ import annotations

import pickle

import pytest
from dyn_helpers import sweep  # noqa: F401 (fixture)

import resume_audit
from resume_audit import ResumeContractError, SweepIncomplete
from resume_audit.dynamic.assertions import EXACTLY_ONCE_RULES, rules_for

LOSSY_EFFECTS = ["lossy_saver:export_rows", "lossy_saver:notify_loaded"]

ORDER = dict(effects=["order_approval:charge_card"], input={"order_id": 7}, resume=["approve"])
KEYED = dict(effects=["keyed_effect:charge_card"], input={"order_id": 3}, resume=["approve"])


@pytest.fixture(scope="module")
def order(sweep):
    return sweep("order_approval.py:build_graph", **ORDER)


def _raises(fn, *args, kind=ResumeContractError) -> str:
    with pytest.raises(kind) as info:
        fn(*args)
    assert isinstance(info.value, AssertionError)  # pytest counts it as a failed test, not an error
    return str(info.value)


def test_exactly_once_reports_the_crash_and_the_concurrent_witness(order):
    with pytest.raises(ResumeContractError) as info:
        order.assert_exactly_once()
    err = info.value
    assert sorted(f.rule_id for f in err.findings) == ["RA701", "RA705"]
    assert err.report is order and err.checked == EXACTLY_ONCE_RULES
    text = str(err)
    lines = text.splitlines()
    assert lines[0] == (
        "resume contract broken by fixtures/dynamic/langgraph/order_approval.py:build_graph: "
        "exactly-once (no effect fired twice: crash path, stray resume, concurrent resumes)"
    )
    assert lines[1].startswith("2 violations (sqlite backend, langgraph ")
    # RA701: kill point, resume path, the effect and its counts, as a -/+ pair
    assert "RA701 [EO] an effect fired again after a crash and a resume" in lines
    assert "  at fixtures/dynamic/langgraph/order_approval.py:40, node `charge`" in lines
    assert "  kill point:  resume 1: after effect order_approval.charge_card in node charge" in lines
    assert "  resumed by:  invoke(None) from the durable checkpoint" in lines
    assert "  effect:      order_approval.charge_card  1 -> 2" in lines
    assert "  - 1 call   (uninterrupted run)" in lines
    assert "  + 2 calls  (after the crash and the resume)" in lines
    # RA705: racers, consumption, counts, and the other cell that shows it
    assert "  probe:       2 processes resumed one parked interrupt together (one durable store)" in lines
    assert "  consumed:    the interrupt 2 times" in lines
    assert "  + 2 calls  (2 concurrent resumes)" in lines
    assert "  also at:     1 other cell: 4 concurrent resumes of one parked interrupt" in lines
    # readable, not a repr dump
    assert "{" not in text.replace("{thread_id}", "").replace("{node}", "") and "Finding(" not in text
    assert all(len(line) <= 110 for line in lines[2:])


def test_conformant_fd_prints_values_sent_and_served(order):
    text = _raises(order.assert_conformant, "FD")
    assert text.splitlines()[0].endswith(": FD (fork determinism)")
    assert text.count("RA703 [FD/FI] a second answer at the same interrupt was served the first") == 2
    assert '  sent:        "approve", "reject"' in text
    assert '  served:      "approve", "approve"' in text
    assert '  - resume 2 served "reject"   (the value it sent)' in text
    assert '  + resume 2 served "approve"  (the first answer, replayed)' in text
    assert text.count("  fix: ") == 1  # one fix per rule, not per finding


def test_conformant_passes_for_properties_the_graph_keeps(order):
    order.assert_conformant("CV", "RD", "LV", "PC")
    assert "RA703" in _raises(order.assert_conformant, "RA703")  # a dynamic rule id works too
    assert "RA705" in _raises(order.assert_conformant, "co")  # property names are case-insensitive


def test_conformant_with_no_properties_checks_the_whole_contract(order):
    text = _raises(order.assert_conformant)
    assert "the whole resume contract" in text.splitlines()[0]
    assert {"RA701", "RA703", "RA705"} <= {line.split()[0] for line in text.splitlines() if line.startswith("RA")}


def test_unknown_property_is_a_usage_error(order):
    with pytest.raises(ValueError, match="unknown contract property or dynamic rule 'XY'"):
        order.assert_conformant("XY")
    assert rules_for(["EO", "CO"]) == EXACTLY_ONCE_RULES  # exactly once is EO + CO
    assert rules_for([]) == tuple(f"RA70{i}" for i in range(1, 9))


def test_keyed_effect_is_exactly_once_but_not_fork_deterministic(sweep):
    report = sweep("keyed_effect.py:builder", **KEYED)
    report.assert_exactly_once()
    report.assert_conformant("EO", "CO", "PC", "CV", "RD", "LV")
    assert "RA703" in _raises(report.assert_conformant, "FD")


def test_other_witnesses_are_laid_out_too(sweep):
    cv = sweep("pydantic_state.py:build", effects=[], input={"customer": "ann"}, resume=[], cells=["crash", "validity"])
    text = _raises(cv.assert_conformant, "CV")
    assert '  field:       `items` = ["apple", "pear", null]' in text
    assert "  schema:      items[2]: Input should be a valid string" in text
    assert "  written by:  add_missing, persisted at step 2 -- silently, nothing raised" in text
    cv.assert_exactly_once()

    rd = sweep("lossy_saver.py:build", effects=LOSSY_EFFECTS, input={}, resume=[], cells=["crash", "write-order"])
    text = _raises(rd.assert_conformant, "RD")
    assert "  - runs of extract: 2  (natural write order)" in text
    assert "  + runs of extract: 1  (put_writes deferred past the next put)" in text

    lv = sweep(
        "volatile_park.py:build",
        effects=["volatile_park:notify"],
        input={"request": "r1"},
        resume=[True],
        cells=["parked", "concurrent"],
    )
    text = _raises(lv.assert_conformant, "LV")
    assert "  kill point:  run: after parking at interrupt 0 in node review" in text
    assert "  durable:     0 pending interrupt(s), checkpoint missing" in text


def test_an_incomplete_sweep_never_passes(sweep):
    report = sweep("misbehaving.py:hangs", timeout=3, effects=[], input={}, resume=[])
    text = _raises(report.assert_exactly_once, kind=SweepIncomplete)
    assert text.splitlines()[0].startswith(
        "resume contract not checked for fixtures/dynamic/langgraph/misbehaving.py:hangs"
    )
    assert "did not complete (timed out)" in " ".join(text.split())
    _raises(report.assert_conformant, "CV", kind=SweepIncomplete)


def test_the_errors_are_public_and_picklable(order):
    assert resume_audit.ResumeContractError is ResumeContractError and issubclass(SweepIncomplete, ResumeContractError)
    assert f"{ResumeContractError.__module__}.{ResumeContractError.__name__}" == "resume_audit.ResumeContractError"
    with pytest.raises(ResumeContractError) as info:
        order.assert_exactly_once()
    again = pickle.loads(pickle.dumps(info.value))  # e.g. across pytest-xdist workers
    assert str(again) == str(info.value)
