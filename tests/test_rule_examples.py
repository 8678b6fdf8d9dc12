"""Every rule's embedded VALID and INVALID examples, run through the real scan pipeline.

INVALID examples must produce exactly the findings their ``# expect:``
markers name (rule and line) for the rule under test; VALID examples must
produce none for it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import expected_markers, scan_tree, write_tree

from resume_audit.config.settings import Config
from resume_audit.rules import all_rules

CASES = [
    pytest.param(rule, kind, i, example, id=f"{rule.id}-{kind}-{i}")
    for rule in all_rules()
    for kind, examples in (("invalid", rule.INVALID), ("valid", rule.VALID))
    for i, example in enumerate(examples)
]


@pytest.mark.parametrize("rule,kind,index,example", CASES)
def test_rule_example(tmp_path: Path, rule, kind, index, example) -> None:
    files = example.files()
    write_tree(tmp_path, files)
    result = scan_tree(tmp_path, Config(select=[rule.id]))
    assert not result.notifications, result.notifications
    got = {(f.span.path, f.span.start_line, f.rule_id) for f in result.findings}
    expected = {m for m in expected_markers(tmp_path, files) if m[2] == rule.id}
    if kind == "valid":
        assert got == set(), f"{rule.id} VALID example {index} was flagged: {result.findings}"
    else:
        assert expected, f"{rule.id} INVALID example {index} has no '# expect: {rule.id}' marker"
        assert got == expected


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.id)
def test_rule_has_examples_and_docs(rule) -> None:
    assert len(rule.INVALID) >= 2 and len(rule.VALID) >= 2, (
        f"{rule.id} needs at least two INVALID and two VALID examples"
    )
    for field in ("summary", "description", "runtime", "fix", "not_flagged"):
        assert getattr(rule, field).strip(), f"{rule.id}.{field} is empty"
    assert set(rule.properties) <= {"EO", "PC", "FD", "FI", "CV", "CO", "RD", "LV"}


FIX_CASES = [
    pytest.param(rule, i, example, id=f"{rule.id}-fix-{i}")
    for rule in all_rules()
    for i, example in enumerate(rule.FIXES)
]


@pytest.mark.parametrize("rule,index,example", FIX_CASES)
def test_rule_fix_example(tmp_path: Path, rule, index, example) -> None:
    """``fix`` turns the example's before into exactly its after (comments and spacing kept), the
    rule finds nothing in the after, and a second run changes nothing."""
    from resume_audit.api import ScanRequest
    from resume_audit.fixes.apply import fix

    target = tmp_path / "example.py"
    target.write_text(example.before_text())
    request = ScanRequest(paths=[tmp_path], select=[rule.id], root=tmp_path, jobs=1)
    assert any(f.rule_id == rule.id for f in scan_tree(tmp_path, Config(select=[rule.id])).findings)
    if example.unsafe:
        assert fix(request).applied == [], "an unsafe fix was applied without --unsafe-fixes"
    report = fix(request, unsafe=example.unsafe)
    assert target.read_text() == example.after_text()
    assert report.applied and {a.rule_id for a in report.applied} == {rule.id}
    assert [f for f in report.remaining.findings if f.rule_id == rule.id] == []
    again = fix(request, unsafe=True)
    assert again.applied == [] and again.diffs == {} and target.read_text() == example.after_text()


def test_every_rule_has_a_fix_or_says_why_not() -> None:
    for rule in all_rules():
        assert rule.FIXES or rule.no_autofix.strip(), f"{rule.id}: give FIXES or say in no_autofix why there is none"
