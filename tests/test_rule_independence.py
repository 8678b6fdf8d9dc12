"""Rules are independent: logic two rules share lives in ``auditor/analysis`` or a framework
module, never in another rule, and no rule keeps a cache outside the project's memo (a cache
keyed by ``id(project)`` or held in a module global outlives its scan and can answer for the
next one)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import REPO

RULES = sorted((REPO / "rules").glob("ra*.py"))


@pytest.mark.parametrize("path", RULES, ids=lambda p: p.stem)
def test_rule_imports_no_other_rule(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    offending = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level and module != "base":
                offending.append(f"from {'.' * node.level}{module} import ...")
            if module.startswith(("rules", "resume_audit.rules")) and not module.endswith(".base"):
                offending.append(f"from {module} import ...")
        elif isinstance(node, ast.Import):
            offending += [a.name for a in node.names if a.name.startswith(("rules.", "resume_audit.rules."))]
    assert offending == [], f"{path.name} imports another rule: {offending}"


@pytest.mark.parametrize("path", RULES, ids=lambda p: p.stem)
def test_rule_keeps_no_per_project_cache(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert "id(project)" not in text and "id(ctx.project)" not in text, f"{path.name} caches by id(project)"
    assert "WeakKeyDictionary" not in text, f"{path.name} keeps a module-level cache"


def test_no_shared_helper_modules_among_rules() -> None:
    """Only rule modules and the base live in rules/: shared logic belongs in auditor/analysis."""
    extra = sorted(p.name for p in (REPO / "rules").glob("*.py") if not p.name.startswith(("ra", "base", "__init__")))
    assert extra == []
