"""[tool.resume-audit] configuration, command-line overrides, suppression comments, baselines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO, write_tree

HAZARD = """import requests
from langgraph.types import interrupt


def node(state):
    requests.post("https://example.com/x", json=state)
    return {"ok": interrupt("go?")}
"""

CUSTOM_SINK = """from langgraph.types import interrupt
from billing import charge


def node(state):
    charge(state["card"], 100)
    return {"ok": interrupt("go?")}
"""


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "resume_audit", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def rule_ids(out: subprocess.CompletedProcess) -> list[tuple[str, str, int]]:
    data = json.loads(out.stdout)
    return [(f["rule_id"], f["path"], f["start_line"]) for f in data["findings"]]


def test_pyproject_select_ignore_per_path_and_sinks(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pyproject.toml": """
[tool.resume-audit]
effect-sinks = ["billing.charge"]
exclude = ["generated/*"]

[tool.resume-audit.per-path-ignores]
"tests/*" = ["RA101"]
""",
            "app/node.py": HAZARD,
            "app/custom.py": CUSTOM_SINK,
            "tests/test_node.py": HAZARD,
            "generated/node.py": HAZARD,
        },
    )
    out = run("scan", ".", "-f", "json", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    assert sorted(rule_ids(out)) == [("RA101", "app/custom.py", 6), ("RA101", "app/node.py", 6)]
    data = json.loads(out.stdout)
    assert data["summary"]["suppressed"] == 1
    assert data["summary"]["files_scanned"] == 3
    custom = [f for f in data["findings"] if f["path"] == "app/custom.py"][0]
    assert "billing.charge" in custom["message"]


def test_cli_overrides_config(tmp_path: Path) -> None:
    write_tree(
        tmp_path, {"pyproject.toml": '[tool.resume-audit]\nignore = ["RA101"]\nfail-on = "never"\n', "node.py": HAZARD}
    )
    quiet = run("scan", ".", "-f", "json", cwd=tmp_path)
    assert quiet.returncode == 0 and rule_ids(quiet) == []
    loud = run("scan", ".", "-f", "json", "--ignore", "RA301", "--fail-on", "warning", cwd=tmp_path)
    assert loud.returncode == 1 and rule_ids(loud) == [("RA101", "node.py", 6)]


def test_bad_configuration_exits_2_naming_key_and_file(tmp_path: Path) -> None:
    write_tree(tmp_path, {"pyproject.toml": '[tool.resume-audit]\nselct = ["RA101"]\n', "node.py": HAZARD})
    out = run("scan", ".", cwd=tmp_path)
    assert out.returncode == 2
    assert "pyproject.toml" in out.stderr and "tool.resume-audit.selct" in out.stderr
    write_tree(tmp_path, {"pyproject.toml": '[tool.resume-audit]\nignore = ["RA777"]\n'})
    out = run("scan", ".", cwd=tmp_path)
    assert out.returncode == 2 and "unknown rule id 'RA777'" in out.stderr
    write_tree(tmp_path, {"pyproject.toml": '[tool.resume-audit]\nignore = "RA101"\n'})
    out = run("scan", ".", cwd=tmp_path)
    assert out.returncode == 2 and "must be a list of strings" in out.stderr
    write_tree(tmp_path, {"pyproject.toml": '[tool.resume-audit\nignore = ["RA101"]\n'})
    out = run("scan", ".", cwd=tmp_path)
    assert out.returncode == 2 and "cannot read TOML" in out.stderr


def test_suppression_comments(tmp_path: Path) -> None:
    variants = {
        "bare.py": HAZARD.replace("json=state)", "json=state)  # resume-audit: ignore"),
        "listed.py": HAZARD.replace("json=state)", "json=state)  # resume-audit: ignore[RA201, RA101]"),
        "other_rule.py": HAZARD.replace("json=state)", "json=state)  # resume-audit: ignore[RA201]"),
        "in_string.py": HAZARD.replace('"https://example.com/x"', '"https://example.com/x#resume-audit: ignore"'),
    }
    write_tree(tmp_path, variants)
    out = run("scan", ".", "-f", "json", cwd=tmp_path)
    assert sorted(rule_ids(out)) == [("RA101", "in_string.py", 6), ("RA101", "other_rule.py", 6)]
    assert json.loads(out.stdout)["summary"]["suppressed"] == 2


def test_baseline_reports_only_new_findings(tmp_path: Path) -> None:
    write_tree(tmp_path, {"node.py": HAZARD})
    baseline = tmp_path / "baseline.json"
    wrote = run("scan", ".", "--write-baseline", str(baseline), cwd=tmp_path)
    assert wrote.returncode == 0 and json.loads(baseline.read_text())["findings"][0]["rule_id"] == "RA101"
    again = run("scan", ".", "-f", "json", "--baseline", str(baseline), cwd=tmp_path)
    assert again.returncode == 0 and rule_ids(again) == []
    assert json.loads(again.stdout)["summary"]["baselined"] == 1
    # an unrelated edit above keeps it baselined; a new hazard is reported
    write_tree(tmp_path, {"node.py": "# header\n\n" + HAZARD, "new.py": HAZARD})
    after = run("scan", ".", "-f", "json", "--baseline", str(baseline), cwd=tmp_path)
    assert after.returncode == 1 and rule_ids(after) == [("RA101", "new.py", 6)]
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert run("scan", ".", "--baseline", str(broken), cwd=tmp_path).returncode == 2
    assert not [n for n in json.loads(after.stdout)["notifications"] if "baseline" in n["message"]]


def test_a_baseline_that_matches_nothing_warns(tmp_path: Path) -> None:
    """Written for code that has since changed (or other paths), it hides nothing, and says so."""
    write_tree(tmp_path, {"app/node.py": HAZARD})
    baseline = tmp_path / "baseline.json"
    assert run("scan", "app", "--write-baseline", str(baseline), cwd=tmp_path).returncode == 0
    write_tree(tmp_path, {"app/node.py": HAZARD.replace("json=state", "json={'state': state}")})
    out = run("scan", "app", "-f", "json", "--baseline", str(baseline), cwd=tmp_path)
    assert out.returncode == 1 and rule_ids(out) == [("RA101", "app/node.py", 6)]
    [note] = [n for n in json.loads(out.stdout)["notifications"] if "baseline" in n["message"]]
    assert "matched none of this scan's findings" in note["message"] and note["level"] == "warning"
    # information, not a file that could not be analysed: --strict does not turn it into exit 2
    assert run("scan", "app", "--baseline", str(baseline), "--strict", cwd=tmp_path).returncode == 1


def test_docs_pages_are_current() -> None:
    from resume_audit.catalog.docs import render_rule
    from resume_audit.rules import all_rules

    for rule in all_rules():
        page = REPO / "docs" / "rules" / f"{rule.id}.md"
        assert page.is_file(), f"missing {page}; run python -m resume_audit.catalog.docs"
        assert page.read_text(encoding="utf-8") == render_rule(rule), (
            f"{page} is stale; run python -m resume_audit.catalog.docs"
        )


def test_the_rules_index_lists_every_rule() -> None:
    """The rule table moved from the README to docs/rules/index.md (the README links it)."""
    from resume_audit.rules import all_rules

    index = (REPO / "docs" / "rules" / "index.md").read_text(encoding="utf-8")
    for rule in all_rules():
        assert f"| [{rule.id}]({rule.id}.md) |" in index, f"the rules index lacks {rule.id}"
    assert "(docs/rules/index.md)" in (REPO / "README.md").read_text(encoding="utf-8")
