"""The bundled fixture programs produce exactly the findings their markers name.

Every fixture folder is scanned as its own project with *all* rules on, so a
fixture also proves that no other rule fires on it. A line that must be
flagged ends with ``# expect: RAxxx``; every other line must stay quiet.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import EXPECT, REPO

from resume_audit.api import ScanRequest, resolve_config
from resume_audit.engine.scan import scan

FIXTURES = REPO / "fixtures"
STATIC = FIXTURES / "static"
PROJECTS = sorted([p for p in STATIC.iterdir() if p.is_dir()] + [FIXTURES / "myagent"])


def markers(root: Path, display_root: Path) -> set[tuple[str, int, str]]:
    out = set()
    for path in sorted(root.rglob("*.py")):
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            m = EXPECT.search(line)
            if m:
                for rule_id in m.group("ids").replace(" ", "").split(","):
                    out.add((path.relative_to(display_root).as_posix(), lineno, rule_id))
    return out


@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: p.name)
def test_fixture_findings_are_exact(project: Path) -> None:
    config = resolve_config(ScanRequest(paths=[project]))
    result = scan([project], config, project)
    assert result.notifications == []
    got = {(f.span.path, f.span.start_line, f.rule_id) for f in result.findings}
    expected = {m for m in markers(project, project) if not _excluded_by_config(project, m[0])}
    assert got == expected


def _excluded_by_config(project: Path, rel: str) -> bool:
    return project.name == "myagent" and rel.startswith("scripts/")


@pytest.mark.parametrize("rule_dir", sorted(p for p in STATIC.iterdir() if p.is_dir()), ids=lambda p: p.name)
def test_each_rule_has_three_hazards_and_three_safe_twins(rule_dir: Path) -> None:
    rule_id = rule_dir.name.upper()
    hazard_files = {m[0] for m in markers(rule_dir, rule_dir) if m[2] == rule_id}
    safe_files = [p for p in rule_dir.rglob("safe_*.py")]
    assert len(hazard_files) >= 3, f"{rule_id}: fewer than three hazard fixtures"
    assert len(safe_files) >= 3, f"{rule_id}: fewer than three safe near-misses"
    for safe in safe_files:
        assert not EXPECT.search(safe.read_text(encoding="utf-8")), f"{safe} is a safe twin but has an expect marker"


def test_every_static_rule_has_a_fixture_folder() -> None:
    from resume_audit.rules import all_rules

    missing = [r.id for r in all_rules() if not (STATIC / r.id.lower()).is_dir()]
    assert missing == []
