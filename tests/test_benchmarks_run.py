"""The benchmark scripts still run against the current engine and dynamic stage.

Not a timing test (numbers come from the scripts, as ratios, see benchmarks/README.md):
this only keeps the scripts from rotting when an interface they drive changes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_bench_scan_small_synthetic_tree(tmp_path: Path):
    out = tmp_path / "scan.json"
    run = subprocess.run(
        [sys.executable, "benchmarks/bench_scan.py", "--files", "200", "--synthetic-only", "--semgrep", "", "--json", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 0, run.stderr
    [row] = json.loads(out.read_text())
    assert row["candidates"] == 4 and row["findings"] == 3 * row["candidates"]
    assert row["cold_s"] > 0 and row["warm_s"] > 0 and row["cli_cold_peak_mb"] > 0


def test_bench_dynamic_tiny_run():
    pytest.importorskip("langgraph.checkpoint.sqlite")
    run = subprocess.run(
        [sys.executable, "benchmarks/bench_dynamic.py", "--protocols", "2", "--repeats", "1", "--json"],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["a_kill_points"] > 0 and result["a_ratio"] > 0
