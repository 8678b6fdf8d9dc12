"""A probe is one module: registering one (``rekick_probe``, written for this test and named nowhere else) puts
it in every table the dynamic stage has -- the ``--cells`` names, the plan, the report, the findings and their
rule metadata, the pytest assertions, the conformance columns -- with no other file touched
(docs/developing-probes.md walks through the same steps for a built-in probe)."""

from __future__ import annotations

import json

import pytest
import rekick_probe
from dyn_helpers import FIXTURES, REPO

from resume_audit.catalog.descriptors import descriptors
from resume_audit.dynamic import probes
from resume_audit.dynamic.assertions import ResumeContractError, headline, rule_cells
from resume_audit.dynamic.catalog import dynamic_rule
from resume_audit.dynamic.cells import FAIL, PASS
from resume_audit.dynamic.conformance.columns import column_ids, verdicts
from resume_audit.dynamic.parent import sweep
from resume_audit.dynamic.report import SweepReport
from resume_audit.reporters import render


def _sweep(target: str, effect: str, monkeypatch: pytest.MonkeyPatch) -> SweepReport:
    monkeypatch.chdir(REPO)
    return sweep.crash_sweep(
        f"{FIXTURES}/{target}", effects=[effect], input={"order_id": 7}, resume=["approve"], cells=["rekick"]
    )


def test_a_registered_probe_is_planned_judged_and_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    with probes.registered(rekick_probe):
        # every table is read from the registry
        assert "rekick" in sweep.CELL_KINDS
        assert dynamic_rule("RA799") is rekick_probe.RA799 and "RA799" in descriptors()
        assert rule_cells()["RA799"] == (rekick_probe.kind,)
        assert headline("RA799") == "a re-kicked run fired its effects again"
        assert "EO-rekick" in column_ids()

        report = _sweep("order_approval.py:build_graph", "order_approval:charge_card", monkeypatch)
        # planned and judged: the only probe asked for, after the reference run
        assert [str(c.kind) for c in report.cells] == ["dry-run", "rekick"]
        [cell] = [c for c in report.cells if c.kind == "rekick"]
        assert cell.verdict == FAIL and cell.rules == ("RA799",)
        assert cell.effects == {"order_approval.charge_card": (1, 2)}
        # reported: a finding with the probe's rule metadata, in the JSON, the SARIF and the assertions
        [finding] = report.findings
        assert (finding.rule_id, finding.severity, finding.scope) == ("RA799", rekick_probe.RA799.severity, "charge")
        stable = report.stable()
        assert stable["findings"][0]["rule_id"] == "RA799" and stable["summary"]["fail"] == 1
        assert stable["cells"][1]["witness"] == {
            "first": {"order_approval.charge_card": 1},
            "again": {"order_approval.charge_card": 1},
        }
        sarif = json.loads(render(report.to_scan_result(), "sarif"))
        [rule] = [r for r in sarif["runs"][0]["tool"]["driver"]["rules"] if r["id"] == "RA799"]
        assert rule["shortDescription"]["text"] == rekick_probe.RA799.summary
        assert "RA799" in report.to_scan_result().rules_run
        with pytest.raises(ResumeContractError) as raised:
            report.assert_conformant("RA799")
        assert "RA799 [EO] a re-kicked run fired its effects again" in str(raised.value)
        assert "effect:      order_approval.charge_card  1 -> 2" in str(raised.value)
        assert verdicts(report)["EO-rekick"].mark == FAIL
        assert report.unexercised() == []  # its cells ran children of their own and did not error

        safe = _sweep("keyed_effect.py:builder", "keyed_effect:charge_card", monkeypatch)
        [cell] = [c for c in safe.cells if c.kind == "rekick"]
        assert cell.verdict == PASS and not safe.findings  # the key dedupes the re-kicked charge
    # and gone again with the registration
    assert "rekick" not in sweep.CELL_KINDS and dynamic_rule("RA799") is None and "EO-rekick" not in column_ids()


def test_a_probe_that_contradicts_the_registered_ones_is_refused() -> None:
    from resume_audit.dynamic.probes import fork

    with pytest.raises(ValueError, match="cell kind 'fork' is answered by two probes"):
        with probes.registered(fork):
            pass
    assert probes.registry().count(fork) == 1
