"""``resume-audit fix`` as a user runs it: the exact diff on a fixture program, the rewrite in
place keeping every other byte (comments, CRLF line endings, a BOM, the file's mode), idempotence,
files it cannot rewrite reported and left alone, and the fix in SARIF (schema-valid) and JSON."""

from __future__ import annotations

import json
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO
from test_sarif import validate_sarif

FIXTURE = REPO / "fixtures" / "fixes" / "durability_exit"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "resume_audit", *args], cwd=cwd, capture_output=True, text=True)


@pytest.mark.parametrize(
    "fixture,program,fixed,unsafe",
    [
        ("durability_exit", "billing_graph.py", 2, False),  # RA106
        ("flow_created", "settlement_flow.py", 1, False),  # RA107
        ("checkpoint_true", "intake_flow.py", 1, False),  # RA604
        ("payment_key", "booking_graph.py", 2, True),  # RA101 and RA103: an idempotency key
        ("volatile_park", "approvals_service.py", 1, True),  # RA601: a durable saver
    ],
)
def test_fix_diff_is_exactly_the_expected_diff_and_changes_nothing(
    fixture: str, program: str, fixed: int, unsafe: bool
) -> None:
    folder = REPO / "fixtures" / "fixes" / fixture
    before = (folder / program).read_bytes()
    proc = cli("fix", f"fixtures/fixes/{fixture}", "--diff", *(["--unsafe-fixes"] if unsafe else []), cwd=REPO)
    assert proc.returncode == 1, proc.stderr  # a diff: as ruff, exit 1
    assert proc.stdout == (folder / "expected.diff").read_text()
    assert f"{fixed} finding(s) would be fixed" in proc.stderr
    assert (folder / program).read_bytes() == before


def test_an_unsafe_fix_waits_for_unsafe_fixes(tmp_path: Path) -> None:
    """The idempotency key adds a parameter to the node's signature: without --unsafe-fixes nothing
    changes and the report says the fixes are there to be had."""
    shutil.copy(REPO / "fixtures" / "fixes" / "payment_key" / "booking_graph.py", tmp_path)
    before = (tmp_path / "booking_graph.py").read_bytes()
    proc = cli("fix", ".", cwd=tmp_path)
    assert (tmp_path / "booking_graph.py").read_bytes() == before
    assert "--unsafe-fixes" in proc.stdout + proc.stderr and "0 finding(s) fixed" in proc.stdout + proc.stderr, (
        proc.stdout + proc.stderr
    )


def test_fix_in_place_keeps_every_other_byte_and_a_second_run_changes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "billing_graph.py"
    text = (FIXTURE / "billing_graph.py").read_text()
    target.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode())  # a BOM and CRLF endings
    target.chmod(0o640)
    proc = cli("fix", ".", cwd=tmp_path)
    assert "2 finding(s) fixed" in proc.stdout, proc.stdout + proc.stderr
    expected = text.replace("durability=RUN_MODE,", 'durability="sync",').replace(
        "checkpoint_during=False", 'durability="sync"'
    )
    assert target.read_bytes() == b"\xef\xbb\xbf" + expected.replace("\n", "\r\n").encode()
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["billing_graph.py"]  # no temporary file left
    scan = cli("scan", ".", "--select", "RA106", "--no-cache", "--format", "json", cwd=tmp_path)
    assert json.loads(scan.stdout)["findings"] == []
    again = cli("fix", ".", cwd=tmp_path)
    assert (
        "0 finding(s) fixed" in again.stdout
        and target.read_bytes() == b"\xef\xbb\xbf" + expected.replace("\n", "\r\n").encode()
    )


def test_a_file_that_is_not_utf8_is_reported_and_left_alone(tmp_path: Path) -> None:
    target = tmp_path / "billing_graph.py"
    source = "# -*- coding: latin-1 -*-\n# Gr\xfc\xdfe\n" + (FIXTURE / "billing_graph.py").read_text()
    target.write_bytes(source.encode("latin-1"))
    proc = cli("fix", ".", cwd=tmp_path)
    assert "billing_graph.py: cannot be rewritten (UnicodeDecodeError" in proc.stderr, proc.stderr
    assert target.read_bytes() == source.encode("latin-1")
    assert proc.returncode == 1  # the findings are still there


def test_the_fix_is_in_sarif_and_json(tmp_path: Path) -> None:
    shutil.copy(FIXTURE / "billing_graph.py", tmp_path)
    sarif = json.loads(cli("scan", ".", "--select", "RA106", "--no-cache", "--format", "sarif", cwd=tmp_path).stdout)
    validate_sarif(sarif)
    [first, second] = sarif["runs"][0]["results"]
    [change] = first["fixes"][0]["artifactChanges"]
    assert change["artifactLocation"] == {"uri": "billing_graph.py", "uriBaseId": "SRCROOT"}
    assert change["replacements"] == [
        {
            "deletedRegion": {"startLine": 55, "startColumn": 20, "endLine": 55, "endColumn": 28},
            "insertedContent": {"text": '"sync"'},
        }
    ]
    assert len(second["fixes"][0]["artifactChanges"][0]["replacements"]) == 2  # keyword and value
    report = json.loads(cli("scan", ".", "--select", "RA106", "--no-cache", "--format", "json", cwd=tmp_path).stdout)
    assert report["findings"][0]["autofix"]["safety"] == "safe"
    assert report["findings"][0]["autofix"]["edits"][0]["replacement"] == '"sync"'
    text = cli("scan", ".", "--select", "RA106", "--no-cache", cwd=tmp_path).stdout
    assert "2 fixable with `resume-audit fix`" in text.replace("\n", " ")
