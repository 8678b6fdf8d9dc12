"""The dynamic stage's pure parts: parsing, naming, values, validation, catalog, sandbox policy."""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Annotated, TypedDict

import pytest
from pydantic import BaseModel

from resume_audit.catalog.docs import render_rule as documentation
from resume_audit.dynamic.catalog import all_dynamic_rules, dynamic_rule
from resume_audit.dynamic.child.effects import idempotency_key
from resume_audit.dynamic.child.sandbox import Sandbox
from resume_audit.dynamic.child.validity import describe_schema, validate_values
from resume_audit.dynamic.effect_spec import EffectSpec, EffectSpecError
from resume_audit.dynamic.killpoints import Event, EventLog
from resume_audit.dynamic.target import TargetError, TargetSpec
from resume_audit.dynamic.values import canonical, derive_fork_value, to_jsonable
from resume_audit.findings import PROPERTIES, Severity


def test_catalog_has_every_dynamic_rule_with_reporter_metadata():
    assert [r.id for r in all_dynamic_rules()] == [f"RA70{i}" for i in range(1, 9)]
    for rule in all_dynamic_rules():
        for attr in (
            "id",
            "name",
            "properties",
            "severity",
            "frameworks",
            "summary",
            "description",
            "runtime",
            "fix",
            "headline",
        ):
            assert getattr(rule, attr), (rule.id, attr)
        assert set(rule.properties) <= set(PROPERTIES)
        assert isinstance(rule.severity, Severity)
        assert documentation(rule).startswith(f"# {rule.id} {rule.name}")
    assert dynamic_rule("ra703").properties == ("FD", "FI")
    assert dynamic_rule("RA799") is None


def test_dynamic_rule_pages_are_current() -> None:
    """docs/rules/RA70x.md are rendered from the probes' DynamicRule declarations (python -m resume_audit.catalog.docs)."""
    from pathlib import Path

    from resume_audit.catalog.docs import render_rule

    docs = Path(__file__).resolve().parents[2] / "docs" / "rules"
    for rule in all_dynamic_rules():
        assert (docs / f"{rule.id}.md").read_text(encoding="utf-8") == render_rule(rule), f"{rule.id}.md is stale"


def test_target_spec_forms(tmp_path):
    f = tmp_path / "graph.py"
    f.write_text("x = 1\n")
    spec = TargetSpec.parse("graph.py:build", cwd=str(tmp_path))
    assert (spec.module, spec.attr, spec.file, spec.path_entry) == ("graph", "build", str(f), str(tmp_path))
    mod = TargetSpec.parse("myagent.graphs:app", cwd=str(tmp_path))
    assert (mod.module, mod.attr, mod.file) == ("myagent.graphs", "app", None)
    for bad in ("graph.py", "graph.py:", ":x", "missing.py:x", "my-agent:x"):
        with pytest.raises(TargetError):
            TargetSpec.parse(bad, cwd=str(tmp_path))


def test_effect_specs_and_keys():
    assert EffectSpec.parse("myagent.tools:charge_card").display == "myagent.tools.charge_card"
    assert EffectSpec.parse("stripe:Charge.create") == EffectSpec("stripe", "Charge.create")
    assert EffectSpec.parse("tools.py:send").module == "tools"
    with pytest.raises(EffectSpecError):
        EffectSpec.parse("charge_card")
    assert idempotency_key({"idempotency_key": "t1:charge"}) == "t1:charge"
    assert idempotency_key({"headers": {"Idempotency-Key": "k"}}) == "k"
    assert idempotency_key({"amount": 3}) is None


def test_fork_values_differ_and_keep_their_kind():
    assert derive_fork_value(True) is False
    assert derive_fork_value("approve") == "reject"
    assert derive_fork_value("Yes") == "No"
    assert derive_fork_value("ship it") == "ship it (fork)"
    assert derive_fork_value(3) == 4
    assert derive_fork_value({"approved": True, "note": "ok"}) == {"approved": False, "note": "ok"}
    for v in (None, [1], {"x": [1]}, 2.5):
        assert derive_fork_value(v) != v


def test_values_are_canonical():
    class M(BaseModel):
        b: int = 2
        a: list[str] = ["x"]

    @dataclass
    class D:
        z: set

    assert canonical({"b": 1, "a": M()}) == canonical({"a": {"a": ["x"], "b": 2}, "b": 1})
    assert to_jsonable(D({3, 1, 2})) == {"z": [1, 2, 3]}
    assert to_jsonable(float("nan")) == "nan"


def test_event_names_carry_leg_and_occurrence():
    log = EventLog()
    log.emit("put", "put of checkpoint step -1 (input)", step=-1)
    log.leg = 1
    a = log.emit("effect", "effect tools.charge in node charge", step=3, node="charge")
    b = log.emit("effect", "effect tools.charge in node charge", step=3, node="charge")
    assert [e.name for e in log.events] == [
        "run: after put of checkpoint step -1 (input)",
        "resume 1: after effect tools.charge in node charge",
        "resume 1: after effect tools.charge in node charge (#2)",
    ]
    assert Event.from_dict(b.as_dict()) == b
    assert sorted([b, a], key=Event.sort_key) == [a, b]


class TD(TypedDict, total=False):
    items: Annotated[list[str], operator.add]
    n: int


class PM(BaseModel):
    customer: str
    items: list[str] = []


@dataclass
class DC:
    title: str
    priority: int = 0


def test_validation_per_schema_kind():
    assert describe_schema(TD).kind == "typeddict"
    assert describe_schema(PM).kind == "pydantic"
    assert describe_schema(DC).kind == "dataclass"
    assert validate_values(TD, {"items": ["a"], "n": 1}) == []
    [bad] = validate_values(TD, {"items": ["a", None]})
    assert bad.field == "items" and bad.error.startswith("items[1]")
    # early checkpoints lack required fields: only present fields are judged
    assert validate_values(PM, {"items": ["a"]}) == []
    [bad] = validate_values(PM, {"customer": "x", "items": [None]})
    assert bad.field == "items"
    [bad] = validate_values(DC, {"title": "t", "priority": "high"})
    assert bad.field == "priority"
    assert validate_values(None, {"x": 1}) == []


def test_sandbox_write_policy(tmp_path):
    box = Sandbox(root=str(tmp_path), workdir=str(tmp_path / "w"))
    box.root = str(tmp_path.resolve())
    assert box.writable(str(tmp_path / "w" / "db.sqlite"))
    assert box.writable(":memory:") and box.writable("/dev/null") and box.writable(3)
    assert not box.writable("/etc/passwd")
    assert not box.writable(str(tmp_path) + "-sibling/x")
    assert Sandbox._loopback("127.0.0.1") and Sandbox._loopback("::1") and Sandbox._loopback("localhost")
    assert not Sandbox._loopback("203.0.113.7") and not Sandbox._loopback("example.com")


def test_every_probe_module_declares_its_kinds_rules_plan_and_judge():
    from resume_audit.dynamic.parent.sweep import CELL_KINDS
    from resume_audit.dynamic.probes import consistency, registry

    kinds = [str(k) for probe in registry() for k in probe.kinds]
    assert kinds == list(CELL_KINDS) and len(kinds) == len(set(kinds))  # each kind has one owner, in the report's order
    raised = {rule for probe in registry() for rule in probe.rules}
    assert raised == {r.id for r in all_dynamic_rules()}  # every dynamic rule is some probe's
    assert consistency(list(registry())) == []
    for probe in registry():
        assert callable(probe.plan) and callable(getattr(probe, "judge")), probe


def test_child_result_round_trips_through_its_file(tmp_path):
    from resume_audit.dynamic.adapters.base import InvalidState, PlaneDescription, SourceLocation
    from resume_audit.dynamic.child_result import ChildError, ChildResult, DurableFound, ParkRecord, StrayDelivery

    result = ChildResult(
        "recover",
        "recover",
        ok=True,
        framework="langgraph",
        error=ChildError("raised", "boom", "a.py:3", "ValueError"),
        describe=PlaneDescription(plane="checkpointer", store="SqliteSaver"),
        nodes={"pay": SourceLocation("g.py", 3, 1, 5, 9)},
        target_location=SourceLocation("g.py", 1, 1, 1, 4),
        parks=[ParkRecord(0, "review", {"q": 1}, value_index=0), ParkRecord(1, "pay", None, kind="before")],
        final_state={"n": [1, 2]},
        final_step=4,
        events=[Event("run: after put", "put", 0, 1, None)],
        invalid=[InvalidState("n", "not an int", "x", 2, ("pay",))],
        stray=StrayDelivery("ok", None, False, False, {}, {}, 3, 3, 0),
        durable=DurableFound(True, 2, 1, ["pay"], []),
        reran_completed=[("pay", 2), ("task 1", None)],
    )
    path = str(tmp_path / "result.json")
    result.write(path)
    assert ChildResult.load(path) == result


def test_typed_json_refuses_what_does_not_fit():
    from resume_audit.codec import DecodeError, decode, encode
    from resume_audit.dynamic.child_result import ParkRecord

    assert encode(ParkRecord(0, "a", None, value_index=0)) == {"index": 0, "node": "a", "value": None, "value_index": 0}
    assert encode(ParkRecord(0, "a", None, kind="after")) == {"index": 0, "node": "a", "value": None, "kind": "after"}
    with pytest.raises(DecodeError):
        decode(ParkRecord, {"index": 0, "node": "a", "typo": 1})
    with pytest.raises(DecodeError):
        decode(ParkRecord, {"index": "zero", "node": "a"})


def test_verdicts_read_as_their_words():
    from resume_audit.dynamic.cells import FAIL, PASS, Verdict

    assert PASS == "pass" and {"pass": 1}[PASS] == 1 and f"{FAIL}" == "fail" and Verdict("n/a").name == "NOT_APPLICABLE"
