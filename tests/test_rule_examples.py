"""Every rule's embedded VALID and INVALID examples, run through the real scan pipeline.

INVALID examples must produce exactly the findings their ``# expect:``
markers name (rule and line) for the rule under test; VALID examples must
produce none for it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from resume_audit.config import Config
from resume_audit.rules import all_rules

from conftest import expected_markers, scan_tree, write_tree

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
    assert len(rule.INVALID) >= 2 and len(rule.VALID) >= 2, f"{rule.id} needs at least two INVALID and two VALID examples"
    for field in ("summary", "description", "runtime", "fix", "not_flagged"):
        assert getattr(rule, field).strip(), f"{rule.id}.{field} is empty"
    assert set(rule.properties) <= {"EO", "PC", "FD", "FI", "CV", "CO", "RD", "LV"}
