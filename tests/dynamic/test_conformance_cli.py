"""The conformance command's formats and the --saver option (a user's own BaseCheckpointSaver)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from dyn_helpers import REPO

pytest.importorskip("langgraph")

SAVER = """
import sqlite3, os
from langgraph.checkpoint.sqlite import SqliteSaver

def make_saver(directory):
    return SqliteSaver(sqlite3.connect(os.path.join(directory, "mine.sqlite"), check_same_thread=False))
"""


def test_saver_option_runs_the_langgraph_probes(tmp_path: Path):
    (tmp_path / "mysavers.py").write_text(SAVER)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-m", "resume_audit.cli", "conformance", "--saver", "mysavers:make_saver", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    data = json.loads(out.stdout)
    [row] = data["rows"]
    assert row["backend"] == "--saver mysavers:make_saver"
    marks = {k: v["verdict"] for k, v in row["cells"].items()}
    assert marks == {
        "EO-int": "✓",
        "EO-crash": "✗",
        "PC": "✓",
        "FD": "✗",
        "CV": "✗",
        "CO-seq": "✓",
        "CO-conc": "✗",
        "RD": "✓",
        "LV": "✓",
    }
    assert 'served "approve"' in row["cells"]["FD"]["witness"]
