"""The audit-hook layer of the sandbox on its own (Landlock switched off with RESUME_AUDIT_LANDLOCK=off),
as on a kernel without Landlock: every bypass the hostile-input issue found is refused, with a marker
directory outside the cell showing nothing was written, and real sends to a TEST-NET address."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from dyn_helpers import FIXTURES, REPO


def _sweep(target: str, marker, *extra: str) -> tuple[subprocess.CompletedProcess, dict]:
    env = {**os.environ, "RESUME_AUDIT_LANDLOCK": "off", "RA_TEST_MARKER_DIR": str(marker), "NO_COLOR": "1"}
    out = marker.parent / f"{target}.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "resume_audit",
            "crash-sweep",
            f"{FIXTURES}/misbehaving.py:{target}",
            "--format",
            "json",
            "--output",
            str(out),
            "--pass-env",
            "RA_TEST_MARKER_DIR",
            *extra,
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    data = json.loads(out.read_text()) if out.exists() else {}
    return proc, data


def _dry_detail(data: dict) -> str:
    return next(c["detail"] for c in data["sweep"]["cells"] if c["kind"] == "dry-run")


@pytest.mark.parametrize(
    "target,name,words",
    [
        ("sqlite_uri", "uri.db", "sqlite3.connect('file:"),  # a file: URI with mode=rwc
        ("fifo", "fifo", "os.mkfifo("),  # no audit event: guarded by wrapping
        ("policy_override", "policy.txt", "outside the sandbox"),  # Sandbox.writable replaced by the graph
    ],
)
def test_writes_around_the_hook_are_refused(tmp_path, target, name, words):
    marker = tmp_path / "outside"
    marker.mkdir()
    proc, data = _sweep(target, marker)
    assert proc.returncode == 2, proc.stderr[-2000:]  # the uninterrupted run could not complete
    detail = _dry_detail(data)
    assert "SandboxRefusal" in detail and words in detail, detail
    assert not (marker / name).exists()


def test_udp_to_a_non_loopback_address_is_refused(tmp_path):
    proc, data = _sweep("udp", tmp_path)
    assert proc.returncode == 2
    detail = _dry_detail(data)
    assert "SandboxRefusal" in detail and "sendmsg to ('203.0.113.9', 9)" in detail


def test_ipv4_mapped_loopback_is_loopback(tmp_path):
    proc, data = _sweep("mapped_loopback", tmp_path)
    assert proc.returncode == 0, _dry_detail(data)


def test_a_memory_hog_hits_the_limit_and_says_so(tmp_path):
    proc, data = _sweep("memory_hog", tmp_path, "--memory-limit", "1024")
    assert proc.returncode == 2
    detail = _dry_detail(data)
    assert "ran out of memory under the sweep's limit of 1024 MB" in detail, detail
