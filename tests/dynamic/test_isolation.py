"""User code is untrusted: every misbehaviour becomes a clear result, nothing hangs, nothing is left behind."""

from __future__ import annotations

import os
import pwd

import pytest
from dyn_helpers import cell, run_sweep, sweep  # noqa: F401 (fixtures)

from resume_audit.dynamic.child import landlock
from resume_audit.dynamic.parent.runner import _group_members, process_table
from resume_audit.dynamic.parent.sweep import SweepUsageError
from resume_audit.dynamic.target import TargetError

NONE = dict(effects=[], input={}, resume=[])


def _processes_running(marker: str) -> list[int]:
    return [p.pid for p in process_table(cmdlines=True) if marker in p.cmdline and p.state != "Z"]


def test_a_hanging_graph_times_out_and_is_reported(sweep):
    report = sweep("misbehaving.py:hangs", timeout=3, **NONE)
    assert not report.complete
    dry = cell(report, "dry-run", "uninterrupted")
    assert dry.verdict == "error" and dry.detail == "timed out"
    assert any(n.kind.value == "timeout" for n in report.notifications)
    assert report.timings["total_s"] < 20


def test_sys_exit_is_reported_with_its_location(sweep):
    report = sweep("misbehaving.py:exits", **NONE)
    dry = cell(report, "dry-run", "uninterrupted")
    assert dry.verdict == "error"
    assert "sys.exit(3)" in dry.detail and "misbehaving.py:" in dry.detail


def test_spawned_processes_are_reported_and_killed(sweep):
    report = sweep("misbehaving.py:spawns", cells=["crash"], **NONE)
    assert report.complete
    messages = " ".join(n.message for n in report.notifications)
    assert "spawned a child process" in messages
    assert "the sweep killed them" in messages
    assert _processes_running("time.sleep(600)") == []


def test_outbound_network_is_refused(sweep):
    report = sweep("misbehaving.py:network", **NONE)
    dry = cell(report, "dry-run", "uninterrupted")
    assert dry.verdict == "error" and "SandboxRefusal" in dry.detail and "203.0.113.7" in dry.detail
    assert any("sandbox refused" in n.message for n in report.notifications)


def test_writes_outside_the_sandbox_are_refused(sweep):
    target = os.path.join(pwd.getpwuid(os.getuid()).pw_dir, "resume-audit-should-not-exist.txt")
    report = sweep("misbehaving.py:writes_outside", **NONE)
    dry = cell(report, "dry-run", "uninterrupted")
    assert dry.verdict == "error" and "outside the sandbox" in dry.detail
    assert not os.path.exists(target)


@pytest.mark.skipif(
    landlock.abi_version() == 0, reason="the kernel offers no Landlock: only Python-level writes are refused"
)
def test_writes_by_a_subprocess_or_native_code_are_refused_by_the_kernel(sweep):
    """Measured without Landlock: both files appeared in the account's home (the audit hook sees
    neither a shell's redirection nor libc's open through ctypes)."""
    home = pwd.getpwuid(os.getuid()).pw_dir
    targets = [os.path.join(home, name) for name in ("resume-audit-shell-write.txt", "resume-audit-ctypes-write.txt")]
    for t in targets:
        if os.path.exists(t):
            os.remove(t)
    report = sweep("misbehaving.py:writes_outside_natively", **NONE)
    dry = cell(report, "dry-run", "uninterrupted")
    assert dry.verdict == "pass"  # the node ran to its end; its writes failed
    assert [t for t in targets if os.path.exists(t)] == []


def test_keep_artifacts_keeps_the_cell_directories(sweep):
    report = sweep(
        "typed_states.py:typeddict_graph",
        effects=[],
        input={"n": 1},
        resume=[],
        cells=["validity"],
        keep_artifacts=True,
    )
    try:
        assert report.artifacts and os.path.isdir(report.artifacts)
        entries = os.listdir(report.artifacts)
        assert any(e.endswith("dry-run") for e in entries)
        assert report.artifacts not in report.to_json_stable()
    finally:
        import shutil

        shutil.rmtree(report.artifacts, ignore_errors=True)


def test_no_sweep_process_outlives_the_sweep(sweep):
    sweep(
        "order_approval.py:build_graph",
        effects=["order_approval:charge_card"],
        input={"order_id": 7},
        resume=["approve"],
    )
    # every child made itself a process-group leader; none of those groups has a live member left
    import multiprocessing

    live = [p for p in multiprocessing.active_children() if p.is_alive()]
    assert live == []


@pytest.mark.parametrize(
    "target,kwargs,error,text",
    [
        ("nope.py:x", {}, TargetError, "no such file"),
        ("misbehaving.py:nothing", {}, TargetError, "has no attribute"),
        ("misbehaving.py:not_a_graph", {}, TargetError, "is not a program of a supported framework"),
        ("misbehaving.py:needs_arguments", {}, TargetError, "needs arguments the sweep cannot give: api_key"),
        ("order_approval.py:build_graph", {"effects": ["order_approval:nope"]}, TargetError, "'nope' not found"),
        ("order_approval.py:build_graph", {"effects": ["no-colon"]}, ValueError, "MODULE:FUNCTION"),
        ("order_approval.py:build_graph", {"resume": []}, SweepUsageError, "only 0 --resume value(s)"),
        ("order_approval.py:build_graph", {"backend": "oracle"}, SweepUsageError, "unknown backend"),
        ("order_approval.py:build_graph", {"racers": 1}, SweepUsageError, "at least 2"),
        ("order_approval.py:build_graph", {"cells": ["crash", "telepathy"]}, SweepUsageError, "unknown cell kind"),
    ],
)
def test_bad_targets_and_arguments_fail_clearly(target, kwargs, error, text):
    args = {"effects": [], "input": {"order_id": 1}, "resume": ["approve"], **kwargs}
    with pytest.raises(error) as info:
        run_sweep(target, **args)
    assert text in str(info.value)


def test_group_scan_sees_only_live_members():
    assert _group_members(os.getpgrp())  # this test process's own group has at least us
    assert _group_members(2**22 + 12345) == []


def test_stub_replaces_a_real_effect(sweep):
    real = sweep(
        "paid_api.py:builder", effects=["paid_api:create_charge"], input={"order_id": 9}, resume=[True], cells=["crash"]
    )
    dry = cell(real, "dry-run", "uninterrupted")
    assert dry.verdict == "error" and "refused name lookup of 'api.payments.example'" in dry.detail
    stubbed = sweep(
        "paid_api.py:builder",
        effects=["paid_api:create_charge"],
        input={"order_id": 9},
        resume=[True],
        cells=["crash"],
        stub="ch_stub",
    )
    assert stubbed.complete
    assert cell(stubbed, "dry-run", "uninterrupted").witness.final_state == {"order_id": 9, "charge_id": "ch_stub"}
    assert cell(stubbed, "crash", "after effect paid_api.create_charge in node pay").effects[
        "paid_api.create_charge"
    ] == (1, 2)
    assert stubbed.protocol.stub == "ch_stub"


def test_allow_network_lifts_the_refusal(sweep):
    report = sweep("misbehaving.py:network", allow_network=True, **NONE)
    dry = cell(report, "dry-run", "uninterrupted")
    # no route in a sandboxed CI box: the connection fails, but not because resume-audit refused it
    if dry.verdict == "error":
        assert "SandboxRefusal" not in dry.detail
    assert not any("sandbox refused" in n.message for n in report.notifications)


def test_each_effect_can_have_its_own_stub(sweep):
    """A stub named for one effect wins over the sweep-wide one, and a stub for something that is
    not an --effect is a usage error before anything runs."""
    stubbed = sweep(
        "paid_api.py:builder",
        effects=["paid_api:create_charge"],
        input={"order_id": 9},
        resume=[True],
        cells=["crash"],
        stub="unused",
        stubs={"paid_api:create_charge": "ch_own"},
    )
    assert cell(stubbed, "dry-run", "uninterrupted").witness.final_state == {"order_id": 9, "charge_id": "ch_own"}
    assert stubbed.protocol.stubs == {"paid_api:create_charge": "ch_own"}
    with pytest.raises(SweepUsageError, match="paid_api:refund"):
        run_sweep(
            "paid_api.py:builder", effects=["paid_api:create_charge"], input={}, resume=[], stubs={"paid_api:refund": 1}
        )
