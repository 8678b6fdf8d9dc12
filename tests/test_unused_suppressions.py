"""Suppression hygiene (as ruff's unused-noqa): a `# resume-audit: ignore` comment that suppresses
nothing or names an unknown rule is reported in every format, and fails the scan when asked --
cold or warm cache alike, and never for a rule this run did not select. The real CLI on real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
from conftest import write_tree

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())

HAZARD_LINE = '    requests.post("https://example.com/x", json=state)'
NODE = """import requests
from langgraph.types import interrupt


def node(state):
{hazard}
    total = 1  # resume-audit: ignore
    other = 2  # resume-audit: ignore[RA301]
    return {{"ok": interrupt("go?"), "n": total + other}}
"""
#: line 6 suppresses the RA101 it has (used), a rule with no finding there (RA201) and a typo (RA999)
MIXED = NODE.format(hazard=HAZARD_LINE + "  # resume-audit: ignore[RA101, RA201, RA999]")


def run(tree: Path, *args: str, cache: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1"}
    caching = ["--cache-dir", str(cache)] if cache else ["--no-cache"]
    return subprocess.run(
        [sys.executable, "-m", "resume_audit", "scan", ".", "-j", "1", *caching, *args],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def unused(out: subprocess.CompletedProcess) -> list[tuple[str, int, int, str]]:
    data = json.loads(out.stdout)
    notes = [n for n in data["notifications"] if n["kind"] == "unused-suppression"]
    assert data["summary"]["unused_suppressions"] == len(notes)
    return [(n["path"], n["line"], n["column"], n["message"]) for n in notes]


def test_unused_and_unknown_ids_are_reported_with_their_place(tmp_path: Path) -> None:
    write_tree(tmp_path, {"app/node.py": MIXED})
    out = run(tmp_path, "-f", "json")
    assert out.returncode == 0, out.stderr  # reported, not failing, by default
    assert json.loads(out.stdout)["findings"] == [] and json.loads(out.stdout)["summary"]["suppressed"] == 1
    notes = unused(out)
    assert [(p, line, col) for p, line, col, _ in notes] == [
        ("app/node.py", 6, 57),
        ("app/node.py", 7, 16),
        ("app/node.py", 8, 16),
    ]
    first, bare, other = (m for *_, m in notes)
    assert "unknown rule id RA999" in first and "no RA201 finding" in first and "RA101" not in first
    assert "no finding on this line" in bare
    assert "no RA301 finding" in other


def test_every_format_shows_them_where_notifications_go(tmp_path: Path) -> None:
    write_tree(tmp_path, {"node.py": MIXED})
    text = run(tmp_path).stdout
    assert "warning: node.py:7:16: unused suppression comment" in text and "3 unused suppression comments" in text
    concise = run(tmp_path, "-f", "concise").stdout.splitlines()
    assert (
        "node.py:8: unused-suppression: unused suppression comment: no RA301 finding on this line to suppress."
        in concise[2]
    )
    github = run(tmp_path, "-f", "github").stdout
    assert "::warning file=node.py,line=6,title=resume-audit unused-suppression::" in github
    log = json.loads(run(tmp_path, "-f", "sarif").stdout)
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    notes = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    places = [(n["descriptor"]["id"], n["locations"][0]["physicalLocation"]["region"]) for n in notes]
    assert ("unused-suppression", {"startLine": 6, "startColumn": 57}) in places and len(places) == 3


def test_failing_on_them_is_a_flag_or_a_config_key(tmp_path: Path) -> None:
    write_tree(tmp_path, {"node.py": MIXED})
    assert run(tmp_path, "--fail-on-unused-suppressions").returncode == 1
    assert run(tmp_path, "--fail-on-unused-suppressions", "--fail-on", "never").returncode == 1
    write_tree(tmp_path, {"pyproject.toml": "[tool.resume-audit]\nfail-on-unused-suppressions = true\n"})
    assert run(tmp_path).returncode == 1
    assert run(tmp_path, "--no-fail-on-unused-suppressions").returncode == 0
    write_tree(tmp_path, {"pyproject.toml": '[tool.resume-audit]\nfail-on-unused-suppressions = "yes"\n'})
    bad = run(tmp_path)
    assert bad.returncode == 2 and "fail-on-unused-suppressions must be true or false" in bad.stderr
    # only used, known suppressions: nothing to report, nothing fails
    write_tree(
        tmp_path,
        {
            "pyproject.toml": "[tool.resume-audit]\nfail-on-unused-suppressions = true\n",
            "node.py": NODE.format(hazard=HAZARD_LINE + "  # resume-audit: ignore[RA101]")
            .replace("  # resume-audit: ignore\n", "\n")
            .replace("  # resume-audit: ignore[RA301]", ""),
        },
    )
    clean = run(tmp_path, "-f", "json")
    assert clean.returncode == 0 and unused(clean) == []


def test_a_rule_not_selected_is_not_unused(tmp_path: Path) -> None:
    """--select RA101: the RA201 and RA301 ids may be needed by a full run, and a bare comment may be
    too; the unknown RA999 is wrong whatever runs."""
    write_tree(tmp_path, {"node.py": MIXED})
    notes = unused(run(tmp_path, "-f", "json", "--select", "RA101"))
    assert [(line, m.split(": ", 1)[1].split(".")[0]) for _, line, _, m in notes] == [
        (6, "unknown rule id RA999 (`resume-audit rules` lists them)")
    ]
    assert run(tmp_path, "--select", "RA101", "--fail-on-unused-suppressions").returncode == 1
    write_tree(tmp_path, {"node.py": MIXED.replace(", RA999", "")})
    assert run(tmp_path, "--select", "RA101", "--fail-on-unused-suppressions").returncode == 0


def test_a_warm_cache_reports_the_same(tmp_path: Path) -> None:
    tree, cache = tmp_path / "tree", tmp_path / "cache"
    write_tree(tree, {"node.py": MIXED, "clean.py": "from langgraph.types import interrupt  # resume-audit: ignore\n"})
    cold = run(tree, "-f", "json", cache=cache)
    assert list(cache.glob("*.json")), "the cold run should have cached its results"
    warm = run(tree, "-f", "json", cache=cache)
    assert unused(cold) == unused(warm) and len(unused(warm)) == 4
    # fixing the hazard makes its suppression stale: an edit re-analyses the file, the note follows
    write_tree(tree, {"node.py": MIXED.replace("json=state", "json=state, headers={'Idempotency-Key': state['id']}")})
    fixed = unused(run(tree, "-f", "json", cache=cache))
    assert fixed == unused(run(tree, "-f", "json"))
    line6 = [m for _, line, _, m in fixed if line == 6]
    assert line6 and "no RA101, RA201 finding" in line6[0], fixed
