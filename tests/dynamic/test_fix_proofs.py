"""A fix counts only if the crash sweep of the fixed program is clean where the original was not:
``resume-audit fix`` is run on a copy of a fixture program, and both programs are swept in real
child processes with real SIGKILLs."""

from __future__ import annotations

import ast
import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from dyn_helpers import REPO

pytest.importorskip("crewai")

from resume_audit.dynamic.parent.sweep import crash_sweep  # noqa: E402

POST, RECEIPT = "settlement_flow.post_ledger", "settlement_flow.send_receipt"
AFTER_POST = "run: after checkpoint on method_execution_finished of method post"
AFTER_RECEIPT = "run: after checkpoint on method_execution_finished of method receipt"


def _before_and_fixed(tmp_path: Path, fixture: str, rule: str, *, unsafe: bool = False) -> tuple[Path, Path]:
    """Two copies of ``fixtures/fixes/<fixture>``; ``resume-audit fix --select RULE`` run on the second."""
    before, after = tmp_path / "before", tmp_path / "after"
    for folder in (before, after):
        folder.mkdir()
        shutil.copy(REPO / "fixtures" / "fixes" / fixture, folder)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "resume_audit",
            "fix",
            str(after),
            "--select",
            rule,
            *(["--unsafe-fixes"] if unsafe else []),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert " finding(s) fixed, 0 left" in proc.stdout and "\n0 finding(s)" not in proc.stdout, proc.stdout + proc.stderr
    return before, after


def _sweep(folder: Path):
    return crash_sweep(
        f"{folder}/settlement_flow.py:build",
        cells=["crash"],
        effects=["settlement_flow:post_ledger", "settlement_flow:send_receipt"],
    )


def _cell(report, name: str):
    [found] = [c for c in report.cells if c.kind == "crash" and c.name == name]
    return found


def test_ra107_fix_makes_a_restore_resume_instead_of_rerunning_completed_methods(tmp_path: Path) -> None:
    before, after = _before_and_fixed(tmp_path, "flow_created/settlement_flow.py", "RA107")
    assert (
        'on_events=["method_execution_finished"],  # flow_created: a file from the start'
        in (after / "settlement_flow.py").read_text()
    )

    broken, fixed = _sweep(before), _sweep(after)
    # before: a crash after post's checkpoint is restored from the flow_created checkpoint of the
    # fresh flow: post runs again (RA702) and the ledger is posted twice (RA701)
    c = _cell(broken, AFTER_POST)
    assert c.verdict == "fail" and c.rules == ("RA701", "RA702") and c.effects[POST] == (1, 2)
    assert _cell(broken, AFTER_RECEIPT).effects[POST] == (1, 2)
    # after: the same crash resumes after post; nothing completed runs again
    for name in (AFTER_POST, AFTER_RECEIPT):
        c = _cell(fixed, name)
        assert c.verdict == "pass" and c.effects[POST] == (1, 1) and c.effects[RECEIPT] == (1, 1), (name, c.detail)
    assert "RA702" in {f.rule_id for f in broken.findings} and "RA702" not in {f.rule_id for f in fixed.findings}
    # what no checkpoint setting can close stays, in both: a kill between a method's effect and its
    # checkpoint re-runs that one method (RA103's window; an idempotency key is the repair)
    assert {f.rule_id for f in fixed.findings} == {"RA701"}


def test_ra604_fix_gives_a_flow_checkpoints_a_crash_can_resume_from(tmp_path: Path) -> None:
    before, after = _before_and_fixed(tmp_path, "checkpoint_true/intake_flow.py", "RA604")
    fixed_text = (after / "intake_flow.py").read_text()
    assert "from crewai import CheckpointConfig\n" in fixed_text
    assert 'IntakeFlow(checkpoint=CheckpointConfig(on_events=["method_execution_finished"]))' in fixed_text

    def sweep(folder: Path):
        return crash_sweep(
            f"{folder}/intake_flow.py:build",
            cells=["crash"],
            effects=["intake_flow:open_claim", "intake_flow:assign_adjuster"],
        )

    broken, fixed = sweep(before), sweep(after)
    opened, assigned = "intake_flow.open_claim", "intake_flow.assign_adjuster"
    # before: nothing is ever checkpointed (no kill point after a checkpoint exists), so a crash in
    # assign restarts the flow and the claim is opened twice; the sweep says no checkpoint (RA708)
    assert not [c for c in broken.cells if "after checkpoint" in c.name]
    in_assign = _cell(broken, f"run: after effect {assigned} in node assign")
    assert in_assign.rules == ("RA701", "RA708") and in_assign.effects[opened] == (1, 2)
    # after: one checkpoint per method; the same crash resumes after open
    assert _cell(fixed, f"run: after effect {assigned} in node assign").effects[opened] == (1, 1)
    for name in (
        "run: after checkpoint on method_execution_finished of method open",
        "run: after checkpoint on method_execution_finished of method assign",
    ):
        c = _cell(fixed, name)
        assert c.verdict == "pass" and c.effects == {opened: (1, 1), assigned: (1, 1)}, (name, c.detail)
    assert "RA708" in {f.rule_id for f in broken.findings} and {f.rule_id for f in fixed.findings} == {"RA701"}


PROBE = REPO / "tests" / "dynamic" / "direct_probe.py"


def _probe(
    folder: Path,
    durability: str,
    *args: str,
    module: str = "billing_graph",
    factory: str = "build_graph",
    effects: str = "issue_refund,send_notice",
) -> int:
    """One fresh interpreter of the ground-truth probe on ``module`` in ``folder`` (its cwd: the
    module's own database lands there), run with ``durability``; its exit status."""
    env = {**os.environ, "PYTHONPATH": str(folder), "RA_PROBE_DURABILITY": durability, "RA_PROBE_STUB": "1"}
    phase, *rest = args
    proc = subprocess.run(
        [
            sys.executable,
            str(PROBE),
            phase,
            module,
            factory,
            effects,
            str(folder / "calls.txt"),
            str(folder / "probe.db"),
            "t-1",
            *rest,
        ],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc.returncode


def _call_site_durability(path: Path) -> str:
    """The durability ``handle()`` passes to ``invoke``, read from the program text (a literal or a
    module constant): the sweep runs the program in the mode the program asks for."""
    tree = ast.parse(path.read_text())
    constants = {
        t.id: n.value.value
        for n in tree.body
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name) and isinstance(n.value, ast.Constant)
    }
    [handle] = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "handle"]
    [value] = [
        k.value for n in ast.walk(handle) if isinstance(n, ast.Call) for k in n.keywords if k.arg == "durability"
    ]
    return value.value if isinstance(value, ast.Constant) else constants[value.id]


def test_ra106_fix_keeps_a_crash_from_re_running_the_completed_refund(tmp_path: Path) -> None:
    before, after = _before_and_fixed(tmp_path, "durability_exit/billing_graph.py", "RA106")
    assert (_call_site_durability(before / "billing_graph.py"), _call_site_durability(after / "billing_graph.py")) == (
        "exit",
        "sync",
    )

    # ground truth, real SIGKILL, no sweep code: killed in notify after its effect
    exit_run, sync_run = tmp_path / "probe-exit", tmp_path / "probe-sync"
    for folder in (exit_run, sync_run):
        folder.mkdir()
        shutil.copy(before / "billing_graph.py", folder)
    assert _probe(exit_run, "exit", "start", '{"order_id": "o1"}', "after-effect:send_notice") == -9
    assert _probe(exit_run, "exit", "recover") != 0  # exit mode saved nothing: there is nothing to resume
    assert _probe(exit_run, "exit", "start", '{"order_id": "o1"}') == 0  # so the run starts over
    assert (exit_run / "calls.txt").read_text().split() == [
        "issue_refund",
        "send_notice",
        "issue_refund",
        "send_notice",
    ]
    assert _probe(sync_run, "sync", "start", '{"order_id": "o1"}', "after-effect:send_notice") == -9
    assert _probe(sync_run, "sync", "recover") == 0  # resumes after refund, from its checkpoint
    assert (sync_run / "calls.txt").read_text().split() == ["issue_refund", "send_notice", "send_notice"]

    def sweep(folder: Path):
        mode = _call_site_durability(folder / "billing_graph.py")
        return crash_sweep(
            f"{folder}/billing_graph.py:build_graph",
            cells=["crash"],
            stub=None,
            input={"order_id": "o1"},
            resume=[],
            config={"__pregel_durability": mode},
            effects=["billing_graph:issue_refund", "billing_graph:send_notice"],
        )

    broken, fixed = sweep(before), sweep(after)
    refund, notice = "billing_graph.issue_refund", "billing_graph.send_notice"
    in_notify = f"run: after effect {notice} in node notify"
    c = _cell(broken, in_notify)
    assert c.verdict == "fail" and c.effects[refund] == (1, 2) and "restart from input" in c.detail
    # after: the same crash resumes from refund's checkpoint; the completed refund is not repeated
    c = _cell(fixed, in_notify)
    assert c.effects[refund] == (1, 1) and c.effects[notice] == (1, 2) and "invoke(None)" in c.detail
    assert all(c.verdict == "pass" for c in fixed.cells if c.kind == "crash" and "after put" in c.name)
    # exit mode writes one checkpoint, at the end: the sweep has no mid-run checkpoint to kill after
    assert not [c for c in broken.cells if c.kind == "crash" and "step 1" in c.name]


HOLD, BALANCE = "stripe:PaymentIntent.create", "stripe:Charge.create"
BOOKING = {"booking_id": "b1", "customer": "cus_1", "deposit": 500, "balance": 4500}


def _booking_calls(folder: Path) -> list[tuple[str, str | None]]:
    """The probe's ledger as (effect, idempotency key or None), in call order."""
    out = []
    for line in (folder / "calls.txt").read_text().splitlines():
        name, _, key = line.partition(" key=")
        out.append((name, key or None))
    return out


def test_ra101_ra103_fix_gives_stripe_calls_a_key_that_survives_a_resume_and_a_crash(tmp_path: Path) -> None:
    pytest.importorskip("stripe")
    before, after = _before_and_fixed(tmp_path, "payment_key/booking_graph.py", "RA101,RA103", unsafe=True)

    # ground truth, real SIGKILL, no sweep code: park at the deposit hold, answer, die right after
    # the balance charge returns, recover from the last checkpoint
    runs = {}
    for name, program in (("before", before), ("after", after)):
        folder = runs[name] = tmp_path / f"probe-{name}"
        folder.mkdir()
        shutil.copy(program / "booking_graph.py", folder)
        probe = functools.partial(
            _probe, folder, "sync", module="booking_graph", factory="build", effects=f"{HOLD},{BALANCE}"
        )
        assert probe("start", json.dumps(BOOKING)) == 0  # parks at the confirmation
        assert probe("resume", '"yes"', f"after-effect:{BALANCE}") == -9
        assert probe("recover") == 0
    calls = _booking_calls(runs["before"])
    # the hold re-ran when the answer arrived, the charge when the crash was recovered: no key
    assert [name for name, _ in calls] == [HOLD, HOLD, BALANCE, BALANCE] and all(key is None for _, key in calls)
    calls = _booking_calls(runs["after"])
    assert [name for name, _ in calls] == [HOLD, HOLD, BALANCE, BALANCE]
    # the same calls, now each repeat carries its first call's key: Stripe answers it without acting
    assert calls[0][1] and calls[0][1] == calls[1][1] and calls[2][1] and calls[2][1] == calls[3][1] != calls[0][1]
    # two workers resuming the one park at once (real processes, in lockstep at every saver write:
    # both read the park before either stores progress): both charge; the fixed program's two
    # charges carry one key
    for name, program in (("before", before), ("after", after)):
        folder = tmp_path / f"race-{name}"
        (folder / "barrier").mkdir(parents=True)
        shutil.copy(program / "booking_graph.py", folder)
        assert (
            _probe(
                folder,
                "sync",
                "start",
                json.dumps(BOOKING),
                module="booking_graph",
                factory="build",
                effects=f"{HOLD},{BALANCE}",
            )
            == 0
        )
        env = {
            **os.environ,
            "PYTHONPATH": str(folder),
            "RA_PROBE_STUB": "1",
            "RA_PROBE_BARRIER": f"{folder / 'barrier'}:2",
        }
        racers = [
            subprocess.Popen(
                [
                    sys.executable,
                    str(PROBE),
                    "resume",
                    "booking_graph",
                    "build",
                    f"{HOLD},{BALANCE}",
                    str(folder / "calls.txt"),
                    str(folder / "probe.db"),
                    "t-1",
                    '"yes"',
                ],
                cwd=folder,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        for racer in racers:
            assert racer.wait(timeout=120) == 0, racer.stderr.read() if racer.stderr else ""
        charges = [key for effect, key in _booking_calls(folder) if effect == BALANCE]
        assert len(charges) == 2, _booking_calls(folder)
        if name == "before":
            assert charges == [None, None]  # two charges the provider cannot tell apart: paid twice
        else:
            assert charges[0] and charges[0] == charges[1]  # one key: the provider answers the second
    # a different booking thread gets different keys
    other = tmp_path / "probe-other"
    other.mkdir()
    shutil.copy(after / "booking_graph.py", other)
    env = {**os.environ, "PYTHONPATH": str(other), "RA_PROBE_STUB": "1"}
    subprocess.run(
        [
            sys.executable,
            str(PROBE),
            "start",
            "booking_graph",
            "build",
            f"{HOLD},{BALANCE}",
            str(other / "calls.txt"),
            str(other / "probe.db"),
            "t-2",
            json.dumps(BOOKING),
        ],
        cwd=other,
        env=env,
        check=True,
        timeout=120,
    )
    assert _booking_calls(other)[0][1] != calls[0][1]

    def sweep(folder: Path):
        return crash_sweep(
            f"{folder}/booking_graph.py:build",
            input=BOOKING,
            resume=["yes"],
            effects=[HOLD, BALANCE],
            stubs={HOLD: {"id": "pi_1"}, BALANCE: {"id": "ch_1"}},
        )

    broken, fixed = sweep(before), sweep(after)
    hold, balance = "stripe.PaymentIntent.create", "stripe.Charge.create"
    in_charge = "resume 1: after effect stripe.Charge.create in node charge_balance"
    c = _cell(broken, in_charge)
    assert c.verdict == "fail" and c.effects[balance] == (1, 2) and "RA701" in c.rules
    [answered] = [c for c in broken.cells if c.kind == "interrupt"]
    assert answered.verdict == "fail" and answered.effects[hold][1] == 2
    assert {"RA701", "RA705"} <= {f.rule_id for f in broken.findings}
    # after: the crash, the answer and two racing resumes each send every payment once
    c = _cell(fixed, in_charge)
    assert c.verdict == "pass" and c.effects == {balance: (1, 1), hold: (1, 1)}, c.detail
    assert all(c.verdict == "pass" for c in fixed.cells if c.kind in ("crash", "interrupt", "concurrent", "dry-run")), [
        (c.name, c.detail) for c in fixed.cells if c.verdict != "pass"
    ]
    assert not {"RA701", "RA705"} & {f.rule_id for f in fixed.findings}


def test_stripe_sends_the_keyword_as_the_idempotency_key_header(tmp_path: Path) -> None:
    """The catalog's claim, checked on the installed SDK: ``idempotency_key=`` on a resource
    method reaches the wire as ``Idempotency-Key`` (a local server stands in for api.stripe.com)."""
    stripe = pytest.importorskip("stripe")
    seen: list[dict[str, str]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            seen.append({k.lower(): v for k, v in self.headers.items()})
            body = json.dumps({"id": "ch_1", "object": "charge"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    saved = stripe.api_base, stripe.api_key, stripe.max_network_retries
    try:
        stripe.api_base, stripe.api_key, stripe.max_network_retries = (
            f"http://127.0.0.1:{server.server_port}",
            "sk_test_local",
            0,
        )
        stripe.Charge.create(amount=4500, currency="eur", customer="cus_1", idempotency_key="k-1")
        stripe.Charge.create(amount=4500, currency="eur", customer="cus_1")
    finally:
        stripe.api_base, stripe.api_key, stripe.max_network_retries = saved
        server.shutdown()
    assert seen[0].get("idempotency-key") == "k-1"
    assert seen[1].get("idempotency-key") != "k-1"  # unkeyed: the SDK's own per-request key at most


def _restart(folder: Path, code: str) -> subprocess.CompletedProcess[str]:
    """One fresh interpreter in ``folder`` (the service's working directory, as a restarted worker has)."""
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(folder)},
        capture_output=True,
        text=True,
        timeout=120,
    )


PARK = "import approvals_service as a; a.graph.invoke({'request': 'r1'}, {'configurable': {'thread_id': 'r1'}})"
ANSWER = """
import approvals_service as a
from langgraph.types import Command
config = {'configurable': {'thread_id': 'r1'}}
try:
    a.graph.invoke(Command(resume=True), config)
finally:
    print(sorted(a.graph.get_state(config).values.items()))
"""


def test_ra601_fix_keeps_a_parked_request_across_a_restart(tmp_path: Path) -> None:
    before, after = _before_and_fixed(tmp_path, "volatile_park/approvals_service.py", "RA601", unsafe=True)
    fixed_text = (after / "approvals_service.py").read_text()
    assert "InMemorySaver" not in fixed_text and "from langgraph.checkpoint.sqlite import SqliteSaver\n" in fixed_text

    # ground truth, no sweep code: a request parks in one worker process, which then exits (a
    # deploy, a recycle); the reviewer's answer reaches a fresh one in the same working directory
    assert _restart(before, PARK).returncode == 0
    lost = _restart(before, ANSWER)
    assert lost.returncode != 0 and "KeyError: 'request'" in lost.stderr  # the answer starts a run from nothing
    assert lost.stdout.strip() == "[]"
    assert _restart(after, PARK).returncode == 0
    kept = _restart(after, ANSWER)
    assert kept.returncode == 0, kept.stderr
    assert kept.stdout.strip() == "[('approved', True), ('notified', True), ('request', 'r1')]"

    # the sweep, run with the program's own saver (the module imported fresh in every process, all
    # of a cell's processes in one working directory, as a restarted worker is): the original loses
    # the park (RA708), the fixed service resumes it from its SQLite file
    def sweep(folder: Path):
        (folder / "program_saver.py").write_text(
            "def program_saver():\n    import approvals_service\n\n    return approvals_service.graph.checkpointer\n"
        )
        return crash_sweep(
            f"{folder}/approvals_service.py:graph",
            input={"request": "r1"},
            resume=[True],
            saver="program_saver:program_saver",
            effects=["approvals_service:notify_requester"],
            cells=["crash", "parked"],
            cwd=str(folder),
        )

    broken, fixed = sweep(before), sweep(after)
    [parked] = [c for c in broken.cells if c.kind == "parked"]
    assert parked.verdict == "fail" and "RA708" in parked.rules and "nothing durable survived" in parked.detail
    assert "RA708" in {f.rule_id for f in broken.findings}
    [parked] = [c for c in fixed.cells if c.kind == "parked"]
    assert parked.verdict == "pass" and "Command(resume=...)" in parked.detail, parked.detail
    assert "RA708" not in {f.rule_id for f in fixed.findings}
    # what a saver cannot close stays in both: killed after the notice and before its node's write
    in_announce = "resume 1: after effect approvals_service.notify_requester in node announce"
    assert _cell(fixed, in_announce).effects["approvals_service.notify_requester"] == (1, 2)
