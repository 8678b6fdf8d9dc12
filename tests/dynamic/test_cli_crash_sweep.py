"""`resume-audit crash-sweep`, run as a user runs it: a subprocess, real files, real exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
from dyn_helpers import FIXTURES, REPO, assert_same_text, run_sweep

SCHEMA = json.loads((REPO / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())


def run(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("FORCE_COLOR", None)
    return subprocess.run(
        [sys.executable, "-m", "resume_audit", "crash-sweep", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_sarif_output_is_valid_and_exits_1(tmp_path):
    out = tmp_path / "sweep.sarif"
    proc = run(
        f"{FIXTURES}/order_approval.py:build_graph",
        "--effect",
        "order_approval:charge_card",
        "--input",
        '{"order_id": 7}',
        "--resume",
        '"approve"',
        "--format",
        "sarif",
        "--output",
        str(out),
    )
    assert proc.returncode == 1, proc.stderr
    assert "kill point / probe" in proc.stderr  # the cell table
    log = json.loads(out.read_text())
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    run_ = log["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    assert {"RA701", "RA703", "RA705", "RA708"} <= {r["id"] for r in rules}
    by_rule = {}
    for result in run_["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        by_rule.setdefault(result["ruleId"], []).append(result)
        assert result["properties"]["origin"] == "dynamic" and result["properties"]["witness"]
        assert len(result["partialFingerprints"]["resumeAudit/v1"]) == 32
        loc = result["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"] == f"{FIXTURES}/order_approval.py"
    assert sorted(by_rule) == ["RA701", "RA703", "RA705"]
    [ra701] = by_rule["RA701"]
    steps = ra701["codeFlows"][0]["threadFlows"][0]["locations"]
    assert len(steps) == 3
    assert steps[0]["location"]["message"]["text"].startswith("process SIGKILLed")


def test_clean_graph_exits_0_and_json_carries_the_stable_sweep_section():
    target = f"{FIXTURES}/typed_states.py:typeddict_graph"
    proc = run(target, "--input", '{"n": 1}', "--format", "json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["findings"] == [] and data["sweep"]["summary"]["fail"] == 0
    # the same graph swept in this process gives the same stable section, byte for byte
    in_process = run_sweep("typed_states.py:typeddict_graph", effects=[], input={"n": 1}, resume=[])
    assert_same_text(
        json.dumps(data["sweep"], sort_keys=True, indent=1), json.dumps(in_process.stable(), sort_keys=True, indent=1)
    )


def test_fail_on_never_exits_0():
    proc = run(f"{FIXTURES}/pydantic_state.py:build", "--input", '{"customer": "ann"}', "--fail-on", "never")
    assert proc.returncode == 0, proc.stderr
    assert "RA706" in proc.stdout


def test_usage_errors_exit_2_before_running_anything():
    bad_json = run(f"{FIXTURES}/order_approval.py:build_graph", "--input", "{order_id: 7}")
    assert bad_json.returncode == 2 and "--input must be JSON" in bad_json.stderr
    missing = run("nowhere/graph.py:build")
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_a_graph_that_cannot_run_exits_2_with_the_reason():
    proc = run(f"{FIXTURES}/misbehaving.py:exits")
    assert proc.returncode == 2
    assert "sys.exit(3)" in proc.stderr


def _without_frameworks(*args: str) -> subprocess.CompletedProcess:
    """The CLI in an interpreter where no audited framework can be imported (as after a bare
    ``pip install resume-audit``): ``sys.modules[name] = None`` is how Python marks a module
    as unavailable, so ``importlib.util.find_spec`` reports it missing."""
    code = (
        "import sys\n"
        "for name in ('langgraph', 'crewai', 'workflows', 'llama_index', 'pydantic_graph'):\n"
        "    sys.modules[name] = None\n"
        "from resume_audit.cli import main\n"
        "sys.argv = ['resume-audit', *sys.argv[1:]]\n"
        "main()\n"
    )
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )


def test_a_framework_missing_here_is_named_with_the_install_command():
    proc = _without_frameworks(
        "crash-sweep",
        f"{FIXTURES}/order_approval.py:build_graph",
        "--input",
        '{"order_id": 7}',
        "--resume",
        '"approve"',
    )
    assert proc.returncode == 2, proc.stderr
    assert "imports langgraph, which is not installed" in proc.stderr
    assert "pip install 'resume-audit[langgraph]'" in proc.stderr


def test_conformance_with_no_framework_installed_fails_clearly():
    proc = _without_frameworks("conformance")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "no framework the probes cover" in proc.stderr and "resume-audit[dynamic]" in proc.stderr


def test_rule_settings_and_inline_suppressions_apply_to_sweep_findings(tmp_path):
    """Noise from a probe can be silenced the way scan findings are: --ignore, the pyproject table
    above the target, and a suppression comment on the flagged line."""
    source = (REPO / FIXTURES / "order_approval.py").read_text()
    source = source.replace(
        "def charge(state: OrderState) -> dict:",
        "def charge(state: OrderState) -> dict:  # resume-audit: ignore[RA701]",
    )
    (tmp_path / "order_approval.py").write_text(source)
    (tmp_path / "pyproject.toml").write_text('[tool.resume-audit]\nignore = ["RA705"]\n')
    args = (
        "order_approval.py:build_graph",
        "--effect",
        "order_approval:charge_card",
        "--input",
        '{"order_id": 7}',
        "--resume",
        '"approve"',
        "--format",
        "json",
    )
    everything = json.loads(run(*args, cwd=tmp_path).stdout)
    assert {f["rule_id"] for f in everything["findings"]} == {"RA703"}
    assert everything["summary"]["suppressed"] >= 2  # RA701 by the comment, RA705 by the table
    quiet = run(
        *args, "--ignore", "RA703,RA705", cwd=tmp_path
    )  # the command line replaces the table's list, as in scan
    assert quiet.returncode == 0, quiet.stderr
    assert json.loads(quiet.stdout)["findings"] == []
    bad = run(*args, "--select", "RA799", cwd=tmp_path)
    assert bad.returncode == 2 and "RA799" in bad.stderr


def test_framework_preloading_is_not_charged_to_the_first_childs_timeout(tmp_path):
    """A target whose own file imports no framework (the graph comes from a sibling module) makes
    the fork server preload every installed framework -- seconds of imports. Measured before the
    fix: `--timeout 5` killed the uninterrupted run and nothing was swept."""
    (tmp_path / "graphs.py").write_text((REPO / FIXTURES / "typed_states.py").read_text())
    (tmp_path / "entry.py").write_text("from graphs import typeddict_graph\n\nbuild = typeddict_graph\n")
    proc = run("entry.py:build", "--input", '{"n": 1}', "--timeout", "5", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["sweep"]["summary"]["fail"] == 0


def test_sharded_sweep_merges_into_the_unsharded_report_byte_for_byte(tmp_path):
    """Three shards (as three CI runners would run them) merged give the unsharded JSON and SARIF.

    The concurrent probe is left out: how many of 4 racers get through is a race (3 or 4 on two
    cores), so two sweeps of it need not agree byte for byte, sharded or not."""
    args = [
        f"{FIXTURES}/two_gates.py:build_graph",
        "--effect",
        "two_gates:issue_refund",
        "--effect",
        "two_gates:send_payout",
        "--input",
        '{"ticket": "T1", "amount": 5}',
        "--resume",
        '"yes"',
        "--resume",
        '"ok"',
        "--cells",
        "interrupt,crash,parked,write-order,fork,stray,validity",
    ]
    for fmt in ("json", "sarif"):
        assert run(*args, "--format", fmt, "--output", str(tmp_path / f"full.{fmt}")).returncode == 1
    shards = []
    for k in (1, 2, 3):
        shards.append(tmp_path / f"shard-{k}.json")
        proc = run(*args, "--shard", f"{k}/3", "--format", "json", "--output", str(shards[-1]))
        assert proc.returncode in (0, 1), proc.stderr
    sizes = [len(json.loads(p.read_text())["shard"]["cells"]) for p in shards]
    full_cells = json.loads((tmp_path / "full.json").read_text())["sweep"]["cells"]
    assert all(size < len(full_cells) for size in sizes)  # each shard swept a slice
    for fmt in ("json", "sarif"):
        merged = tmp_path / f"merged.{fmt}"
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "resume_audit",
                "merge",
                *map(str, reversed(shards)),
                "--format",
                fmt,
                "--output",
                str(merged),
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "NO_COLOR": "1"},
        )
        assert proc.returncode == 1, proc.stderr  # the findings fail the job as the unsharded sweep's do
        assert_same_text((tmp_path / f"full.{fmt}").read_text(), merged.read_text())
    missing = subprocess.run(
        [sys.executable, "-m", "resume_audit", "merge", str(shards[0]), str(shards[2])],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert missing.returncode == 2 and "expected shards 1/3 .. 3/3" in missing.stderr


def test_shard_option_is_checked():
    proc = run(f"{FIXTURES}/two_gates.py:build_graph", "--shard", "4/3")
    assert proc.returncode == 2 and "K must be between 1 and N" in proc.stderr
