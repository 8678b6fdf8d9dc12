"""Baseline entries are relative to the repository root: written from one folder, they match a scan
started from another (a real git repository, the real CLI)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_tree

HAZARD = """import requests
from langgraph.types import interrupt


def node(state):
    requests.post("https://example.com/x", json=state)
    return {"ok": interrupt("go?")}
"""


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "resume_audit", *args, "--no-cache"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def summary(out: subprocess.CompletedProcess) -> tuple[list[str], int, list[str]]:
    """(paths of the reported findings, how many the baseline hid, baseline warnings)."""
    data = json.loads(out.stdout)
    notes = [n["message"] for n in data["notifications"] if "baseline" in n["message"]]
    return [f["path"] for f in data["findings"]], data["summary"]["baselined"], notes


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    """A git repository with a hazard in pkg/node.py."""
    top = tmp_path / "repo"
    write_tree(top, {"pkg/node.py": HAZARD, "README.md": "demo\n"})
    subprocess.run(["git", "init", "-q", str(top)], check=True)
    return top


def test_written_in_a_subfolder_matches_a_scan_from_the_top(repo: Path) -> None:
    wrote = run("scan", ".", "--write-baseline", "../b.json", cwd=repo / "pkg")
    assert wrote.returncode == 0, wrote.stderr
    entry = json.loads((repo / "b.json").read_text())
    assert entry["version"] == 2 and [e["path"] for e in entry["findings"]] == ["pkg/node.py"]
    out = run("scan", "pkg", "-f", "json", "--baseline", "b.json", cwd=repo)
    assert out.returncode == 0, out.stdout
    assert summary(out) == ([], 1, [])


def test_written_at_the_top_matches_a_scan_from_a_subfolder(repo: Path) -> None:
    assert run("scan", "pkg", "--write-baseline", "b.json", cwd=repo).returncode == 0
    out = run("scan", ".", "-f", "json", "--baseline", "../b.json", cwd=repo / "pkg")
    assert out.returncode == 0 and summary(out) == ([], 1, [])
    # a new hazard beside it is still reported, with the path as this scan shows it
    write_tree(repo, {"pkg/new.py": HAZARD})
    again = run("scan", ".", "-f", "json", "--baseline", "../b.json", cwd=repo / "pkg")
    assert again.returncode == 1 and summary(again) == (["new.py"], 1, [])


def test_outside_git_the_config_folder_is_the_root(tmp_path: Path) -> None:
    write_tree(
        tmp_path, {"proj/pyproject.toml": '[tool.resume-audit]\nfail-on = "warning"\n', "proj/pkg/node.py": HAZARD}
    )
    proj = tmp_path / "proj"
    assert run("scan", ".", "--write-baseline", str(tmp_path / "b.json"), cwd=proj / "pkg").returncode == 0
    assert [e["path"] for e in json.loads((tmp_path / "b.json").read_text())["findings"]] == ["pkg/node.py"]
    out = run("scan", "pkg", "-f", "json", "--baseline", str(tmp_path / "b.json"), cwd=proj)
    assert out.returncode == 0 and summary(out) == ([], 1, [])


def test_sarif_fingerprints_do_not_depend_on_where_the_scan_starts(repo: Path) -> None:
    def fingerprints(cwd: Path, target: str) -> list[str]:
        out = run("scan", target, "-f", "sarif", cwd=cwd)
        return [r["partialFingerprints"]["resumeAudit/v1"] for r in json.loads(out.stdout)["runs"][0]["results"]]

    top = fingerprints(repo, "pkg")
    assert len(top) == 1 and top == fingerprints(repo / "pkg", ".")


def test_version_1_baselines_are_still_read(repo: Path) -> None:
    """A version-1 file written at the repository root holds the same fingerprints: it keeps working.
    One whose entries match nothing (written from another folder) gets a message saying what to do."""
    assert run("scan", "pkg", "--write-baseline", "b.json", cwd=repo).returncode == 0
    data = json.loads((repo / "b.json").read_text())
    (repo / "v1.json").write_text(json.dumps({"version": 1, "findings": data["findings"]}))
    out = run("scan", "pkg", "-f", "json", "--baseline", "v1.json", cwd=repo)
    assert out.returncode == 0 and summary(out) == ([], 1, [])
    stale = [{**e, "fingerprint": "0" * 32, "path": "node.py"} for e in data["findings"]]
    (repo / "old.json").write_text(json.dumps({"version": 1, "findings": stale}))
    out = run("scan", "pkg", "-f", "json", "--baseline", "old.json", cwd=repo)
    paths, hidden, [note] = summary(out)
    assert out.returncode == 1 and paths == ["pkg/node.py"] and hidden == 0
    assert "version-1 baseline" in note and "rewrite it with --write-baseline" in note


def test_a_baseline_from_a_newer_format_is_a_usage_error(repo: Path) -> None:
    (repo / "future.json").write_text(json.dumps({"version": 3, "findings": []}))
    out = run("scan", "pkg", "--baseline", "future.json", cwd=repo)
    assert out.returncode == 2 and "baseline of version 3" in out.stderr and "reads versions 1, 2" in out.stderr
