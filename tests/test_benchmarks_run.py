"""The benchmark scripts still run against the current engine and dynamic stage.

Not a timing test (numbers come from the scripts, as ratios, see benchmarks/README.md):
this only keeps the scripts from rotting when an interface they drive changes.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_tree

REPO = Path(__file__).resolve().parents[1]


def test_bench_scan_small_synthetic_tree(tmp_path: Path):
    out = tmp_path / "scan.json"
    run = subprocess.run(
        [
            sys.executable,
            "benchmarks/bench_scan.py",
            "--files",
            "200",
            "--synthetic-only",
            "--semgrep",
            "",
            "--json",
            str(out),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    [row] = json.loads(out.read_text())
    assert row["candidates"] == 4 and row["findings"] == 3 * row["candidates"]
    assert row["cold_s"] > 0 and row["warm_s"] > 0 and row["cli_cold_peak_mb"] > 0


def test_bench_warm_runs_two_installs_interleaved(tmp_path: Path):
    """bench_warm.py times named installs side by side; here the current environment twice, on a
    small tree it is told to scan, with one file edited between rounds (on a copy: it is written)."""
    out = tmp_path / "warm.json"
    tree = tmp_path / "myagent"
    shutil.copytree(REPO / "fixtures" / "myagent", tree)
    run = subprocess.run(
        [
            sys.executable,
            "benchmarks/bench_warm.py",
            "--variant",
            "a=",
            "--variant",
            "b=",
            "--tree",
            str(tree),
            "--repeats",
            "1",
            "--cold-repeats",
            "1",
            "--one-change",
            "--json",
            str(out),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    [row] = json.loads(out.read_text())
    assert row["files"] > 0 and set(row["variants"]) == {"a", "b"}
    for v in row["variants"].values():
        assert v["cold"] > 0 and v["warm"] > 0 and v["version"] > 0 and v["peak_mb"]["warm"] > 0 and v["one_change"] > 0
        # the floor adds the parser's import to a warm run: above the warm run, and a share of cold
        assert v["parser_import"] > v["version"] * 0.5 and v["one_change_floor"] > v["warm"] - v["version"]
        assert v["one_change_floor_over_cold"] == round(v["one_change_floor"] / v["cold"], 3)


def test_bench_trace_only_splits_candidates_from_traced_modules(tmp_path: Path):
    """bench_trace_only.py on the bundled example: its agent files are candidates, the helpers
    they call are loaded only by tracing, and the two add up to every module the scan loaded."""
    out = tmp_path / "trace.json"
    run = subprocess.run(
        [sys.executable, "benchmarks/bench_trace_only.py", "--tree", "fixtures/myagent", "--json", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    row = json.loads(out.read_text())
    assert row["findings"] > 0 and row["candidates_loaded"] > 0 and row["trace_only_modules"] > 0
    assert row["candidates_loaded"] + row["trace_only_modules"] == row["modules_loaded"]
    assert 0 < row["trace_only_ast_parse_s"] and 0 < row["trace_only_load_s"] <= row["load_s"]


def test_bench_dynamic_tiny_run():
    pytest.importorskip("langgraph.checkpoint.sqlite")
    run = subprocess.run(
        [sys.executable, "benchmarks/bench_dynamic.py", "--protocols", "2", "--repeats", "1", "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["a_kill_points"] > 0 and result["a_ratio"] > 0


GIT = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
SCORE = REPO / "benchmarks" / "realworld" / "score.py"
LABELS = [
    {"file": "app/graph.py", "line": 6, "rule": "RA101", "verdict": "hazard", "why": "post before interrupt"},
    {"file": "app/graph.py", "line": 10, "rule": "RA101", "verdict": "safe", "why": "no effect"},
    {"file": "app/graph.py", "line": 11, "rule": "RA303", "verdict": "hazard", "why": "made up to count a miss"},
]


def _mirrored_agent(tmp_path: Path) -> tuple[Path, str]:
    """A one-module LangGraph agent committed to a git mirror laid out as fetch lays them out: (mirrors, commit)."""
    repo = tmp_path / "src"
    write_tree(
        repo,
        {
            "app/graph.py": (
                "import requests\n"
                "from langgraph.types import interrupt\n\n\n"
                "def node(state):\n"
                "    requests.post('https://x.example/charge', json=state)\n"
                "    return {'ok': interrupt('go?')}\n\n\n"
                "def other(state):\n"
                "    answer = interrupt('go?')\n"
                "    return {'ok': answer}\n"
            ),
        },
    )
    subprocess.run([*GIT, "init", "-q", str(repo)], check=True)
    subprocess.run([*GIT, "-C", str(repo), "add", "."], check=True)
    subprocess.run([*GIT, "-C", str(repo), "commit", "-q", "-m", "x"], check=True)
    commit = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    mirrors = tmp_path / "mirrors"
    (mirrors / "acme+agent").mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(mirrors / "acme+agent" / "repo")], check=True)
    return mirrors, commit


def test_realworld_scorer_scores_a_mirrored_repository(tmp_path: Path) -> None:
    """score.py checks out a pinned commit of a git mirror laid out as fetch lays them out,
    scans it with the CLI and scores hazard / safe labels: one true positive, one correct
    silence, one miss."""
    mirrors, commit = _mirrored_agent(tmp_path)
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps([{"repo": "acme/agent", "commit": commit, "scan_paths": ["."], "labels": LABELS}]))
    out = subprocess.run(
        [
            sys.executable,
            str(SCORE),
            "--mirrors",
            str(mirrors),
            "--corpus",
            str(corpus),
            "--work",
            str(tmp_path / "work"),
            "--json",
            str(tmp_path / "scores.json"),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    scores = json.loads((tmp_path / "scores.json").read_text())
    assert scores["rules"]["RA101"]["tp"] == 1 and scores["rules"]["RA101"]["fp"] == 0
    assert scores["rules"]["RA303"]["fn"] == 1
    assert scores["overall"]["recall"] == 0.5 and scores["overall"]["precision"] == 1.0
    assert "acme/agent" in out


def test_realworld_first_seen_is_recorded_once_and_only_after_the_labels_are_committed(tmp_path: Path) -> None:
    """The blind step: the first run on a repository is refused until its labels are committed, recorded once
    (never overwritten), and the first-seen score of the entries added since a commit is computed from that
    record even after the labels are adjudicated."""
    mirrors, commit = _mirrored_agent(tmp_path)
    folder = tmp_path / "labels"
    corpus = folder / "corpus"
    corpus.mkdir(parents=True)
    subprocess.run([*GIT, "init", "-q", str(folder)], check=True)
    (folder / "README").write_text("corpus\n")
    subprocess.run([*GIT, "-C", str(folder), "add", "."], check=True)
    subprocess.run([*GIT, "-C", str(folder), "commit", "-q", "-m", "start"], check=True)
    base = subprocess.run(
        ["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    entry = corpus / "acme+agent.json"
    entry.write_text(json.dumps({"repo": "acme/agent", "commit": commit, "set": "blind", "labels": LABELS}))
    run = [
        sys.executable,
        str(SCORE),
        "--mirrors",
        str(mirrors),
        "--corpus",
        str(corpus),
        "--work",
        str(tmp_path / "work"),
    ]

    refused = subprocess.run([*run, "--repo", "acme/agent", "--record-first-seen"], capture_output=True, text=True)
    assert refused.returncode != 0 and "commit the labels" in refused.stderr
    assert "first_seen" not in json.loads(entry.read_text())

    subprocess.run([*GIT, "-C", str(folder), "add", "."], check=True)
    subprocess.run([*GIT, "-C", str(folder), "commit", "-q", "-m", "label acme/agent blind"], check=True)
    subprocess.run([*run, "--repo", "acme/agent", "--record-first-seen"], capture_output=True, text=True, check=True)
    first = json.loads(entry.read_text())["first_seen"]
    assert [label["matched"] for label in first["labels"]] == [True, False, False]
    assert (
        first["labels_commit"]
        == subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    assert len(first["tool_commit"]) >= 40

    subprocess.run([*GIT, "-C", str(folder), "commit", "-q", "-am", "first score"], check=True)
    again = subprocess.run([*run, "--repo", "acme/agent", "--record-first-seen"], capture_output=True, text=True)
    assert again.returncode != 0 and "never changed" in again.stderr

    # adjudication turns the made-up RA303 hazard into `safe`; the first-seen score keeps the miss
    data = json.loads(entry.read_text())
    data["labels"][2]["verdict"] = "safe"
    entry.write_text(json.dumps(data))
    subprocess.run(
        [*run, "--since", base, "--json", str(tmp_path / "scores.json")], capture_output=True, text=True, check=True
    )
    scores = json.loads((tmp_path / "scores.json").read_text())
    assert scores["overall"]["recall"] == 1.0
    assert scores["first_seen"]["overall"]["recall"] == 0.5 and scores["first_seen"]["repositories"] == 1


def test_bench_audit_one_graph():
    proc = subprocess.run(
        [sys.executable, "benchmarks/bench_audit.py", "--graphs", "1", "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["swept"] == 1 and result["confirmations"]["confirmed"] == 2  # its RA101 and RA103
    assert result["audit_s"] > 0 and result["ratio"] > 0


def test_bench_scan_realistic_filler_and_scaling_series(tmp_path: Path):
    """The realistic tree (standard-library filler) and the scaling series run end to end, small."""
    out = tmp_path / "scan.json"
    run = subprocess.run(
        [
            sys.executable,
            "benchmarks/bench_scan.py",
            "--files",
            "600",
            "--filler",
            "stdlib",
            "--synthetic-only",
            "--semgrep",
            "",
            "--scaling",
            "600",
            "--json",
            str(out),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr
    tree, series = json.loads(out.read_text())
    assert tree["files"] >= 600 and tree["candidates"] >= 100 and tree["findings"] >= 300
    assert series["scaling"] and series["files"] == 600 and series["megabytes"] > 1
    assert 0 < series["warm_s"] and 0 < series["one_change_s"] and series["peak_mb_cold"] > 0
