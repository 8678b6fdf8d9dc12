"""Issue 37: a sweep cell holds against the program's own children and keeps the CI's secrets out.

Real sweeps of ``fixtures/dynamic/langgraph/confinement.py`` through the CLI (a CI job's shape: the
secret is in the sweep's environment) or the Python API, with real servers this test starts. Network
targets are this machine's own addresses: the non-loopback one (where a broken confinement would
deliver, and the test's servers would see it) and loopback; nothing is sent off the machine.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from dyn_helpers import FIXTURES, REPO

from resume_audit.dynamic.parent.sweep import crash_sweep

TARGET = f"{FIXTURES}/confinement.py"
FALLBACK = {"RESUME_AUDIT_NETNS": "off"}  # as where user namespaces are refused: Landlock TCP + seccomp hold
UNCONFINED = {"RESUME_AUDIT_NETNS": "off", "RESUME_AUDIT_LANDLOCK": "off"}


def _secret() -> str:
    return "ra-ci-secret-" + secrets.token_hex(8)


def _cli(*args: str, env: dict[str, str] | None = None, tmp_path: Path) -> tuple[subprocess.CompletedProcess, str]:
    out = tmp_path / f"report-{secrets.token_hex(3)}.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "resume_audit",
            "crash-sweep",
            *args,
            "--cells",
            "validity",
            "--fail-on",
            "never",
            "--format",
            "json",
            "--output",
            str(out),
        ],
        cwd=REPO,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )
    return proc, out.read_text() if out.exists() else ""


def _final_state(report_text: str) -> dict:
    dry = next(c for c in json.loads(report_text)["sweep"]["cells"] if c["kind"] == "dry-run")
    return dry["witness"]["final_state"]


@pytest.mark.parametrize(
    "switches",
    [{}, FALLBACK, {"RESUME_AUDIT_LANDLOCK": "off"}],
    ids=["namespace", "landlock+seccomp", "namespace-without-landlock"],
)
def test_a_secret_in_the_sweeps_environment_never_reaches_the_program(tmp_path, switches):
    """Measured before: the node returned the value and it was written into the JSON report; without the
    namespace, a root child still read it from the sweep's /proc/<pid>/environ until it dropped CAP_SYS_PTRACE."""
    secret = _secret()
    proc, report = _cli(
        f"{TARGET}:looks_for_secret",
        env={"SOME_CI_SECRET": secret, "OPENAI_API_KEY": secret, **switches},
        tmp_path=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    everything = report + proc.stdout + proc.stderr
    assert secret not in everything
    found = _final_state(report)["found"]
    assert found["environ"] == "<absent>" and "SOME_CI_SECRET" not in found["names"]
    assert found["openai_key"] == "resume-audit-fake-credential"  # the import-time client got the fake key
    assert found["memory"], "the memory scan found not even its own needle: it cannot fail"
    assert all(a.endswith("Permission denied") for a in found["ancestors"][1:]), found["ancestors"]  # the sweep's own
    assert "HOME=" in found["shell"] and "PATH=" in found["shell"]  # a started shell has the allow-list


def test_pass_env_passes_exactly_the_named_variable(tmp_path):
    secret, other = _secret(), _secret()
    proc, report = _cli(
        f"{TARGET}:looks_for_secret",
        "--pass-env",
        "SOME_CI_SECRET",
        env={"SOME_CI_SECRET": secret, "OTHER_CI_SECRET": other},
        tmp_path=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = _final_state(report)["found"]
    assert found["environ"] == secret  # the control: the node's looking does find what it is given
    assert secret in found["memory"] and secret in found["shell"]
    assert "SOME_CI_SECRET" in found["names"] and "OTHER_CI_SECRET" not in found["names"]
    assert other not in report


def test_a_program_failing_on_a_withheld_variable_is_told_its_name_and_the_flag(tmp_path):
    secret = _secret()
    proc, report = _cli(f"{TARGET}:reads_secret", env={"SOME_CI_SECRET": secret}, tmp_path=tmp_path)
    assert proc.returncode == 2
    dry = next(c for c in json.loads(report)["sweep"]["cells"] if c["kind"] == "dry-run")
    assert "KeyError" in dry["detail"] and "withheld" in dry["detail"]
    assert "--pass-env SOME_CI_SECRET" in dry["detail"]
    assert secret not in report + proc.stderr


def _own_address() -> str:
    """This machine's non-loopback address (a UDP connect sends nothing, it only picks the route)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
        except OSError:
            pytest.skip("no non-loopback IPv4 route on this machine")
        address = probe.getsockname()[0]
    if address.startswith("127."):
        pytest.skip("no non-loopback IPv4 address on this machine")
    return address


class _Servers:
    """A loopback echo server (to be reached), and a TCP and a UDP listener on the machine's own
    non-loopback address only (never to be reached: each records whatever arrives)."""

    def __init__(self) -> None:
        self.outside = _own_address()
        self.loopback = socket.create_server(("127.0.0.1", 0))
        self.tcp = socket.create_server((self.outside, 0))
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind((self.outside, 0))
        self.udp.settimeout(0.2)
        self.arrived: list[str] = []
        self.stop = threading.Event()
        for target in (self._echo, self._record_tcp, self._record_udp):
            threading.Thread(target=target, daemon=True).start()

    def _accept(self, server: socket.socket, handle) -> None:
        server.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, peer = server.accept()
            except OSError:
                continue
            with conn:
                handle(conn, peer)

    def _echo(self) -> None:
        def answer(conn: socket.socket, _peer) -> None:
            conn.settimeout(5)
            conn.sendall(b"pong:" + conn.recv(100))

        self._accept(self.loopback, answer)

    def _record_tcp(self) -> None:
        self._accept(self.tcp, lambda _conn, peer: self.arrived.append(f"tcp from {peer}"))

    def _record_udp(self) -> None:
        while not self.stop.is_set():
            try:
                data, peer = self.udp.recvfrom(100)
            except OSError:
                continue
            self.arrived.append(f"udp {data!r} from {peer}")

    def input(self) -> dict:
        return {
            "outside": self.outside,
            "udp_port": self.udp.getsockname()[1],
            "tcp_port": self.tcp.getsockname()[1],
            "loopback_port": self.loopback.getsockname()[1],
        }

    def close(self) -> None:
        self.stop.set()
        for sock in (self.loopback, self.tcp, self.udp):
            sock.close()


@pytest.fixture
def servers():
    s = _Servers()
    yield s
    s.close()


def _sweep_node(node: str, servers: _Servers, monkeypatch, switches: dict[str, str]) -> dict:
    for name, value in switches.items():
        monkeypatch.setenv(name, value)
    old = os.getcwd()
    os.chdir(REPO)
    try:
        report = crash_sweep(f"{TARGET}:{node}", input=servers.input(), cells=[])
    finally:
        os.chdir(old)
    dry = report.dry_run
    assert dry is not None and dry.verdict == "pass", dry.detail if dry else report.notifications
    return {"found": dry.witness.final_state["found"], "confinement": report.confinement}


@pytest.mark.parametrize("switches", [{}, FALLBACK], ids=["namespace", "landlock+seccomp"])
def test_a_started_process_cannot_send_out_but_reaches_loopback(servers, monkeypatch, switches):
    """Measured before: the started `python -c` printed `sent 8`, its packet left the machine."""
    got = _sweep_node("sends_from_a_subprocess", servers, monkeypatch, switches)
    seen = json.loads(got["found"])
    assert seen["udp"].startswith("error"), seen
    assert seen["tcp"].startswith("error"), seen
    assert seen["loopback"] == "pong:ping\n", seen  # the test's own loopback server answered
    assert servers.arrived == []
    layer = "network namespace" if not switches else "landlock tcp, seccomp udp/raw"
    assert layer in got["confinement"] and "network confined" in got["confinement"]


@pytest.mark.parametrize("switches", [{}, FALLBACK], ids=["namespace", "landlock+seccomp"])
def test_libc_sendto_through_ctypes_is_refused(servers, monkeypatch, switches):
    got = _sweep_node("sends_through_libc", servers, monkeypatch, switches)
    assert "error" in got["found"], got
    assert servers.arrived == []


def test_require_confinement_refuses_with_the_reason_where_the_kernel_layers_are_unavailable(tmp_path):
    proc, report = _cli(f"{TARGET}:looks_for_secret", "--require-confinement", env=UNCONFINED, tmp_path=tmp_path)
    assert proc.returncode == 2
    assert "--require-confinement: the program was not run" in proc.stderr
    assert "RESUME_AUDIT_NETNS=off" in proc.stderr and "file writes are not confined" in proc.stderr
    assert report == ""  # no child ran


def test_require_confinement_runs_where_the_layers_hold(tmp_path):
    proc, report = _cli(f"{TARGET}:looks_for_secret", "--require-confinement", env=FALLBACK, tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "landlock tcp, seccomp udp/raw" in proc.stderr  # the header names the layers that held


def test_doctor_names_each_layer_and_why_one_is_off():
    env = {**os.environ, **UNCONFINED}
    proc = subprocess.run(
        [sys.executable, "-m", "resume_audit", "doctor", "--require-confinement"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "network namespace" in proc.stdout and "switched off (RESUME_AUDIT_NETNS=off)" in proc.stdout
    assert "--require-confinement would refuse" in proc.stdout
    default = subprocess.run(
        [sys.executable, "-m", "resume_audit", "doctor"], capture_output=True, text=True, timeout=120
    )
    assert default.returncode == 0 and "network namespace" in default.stdout


AUDITED = """import os
from typing import TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

NEEDED = os.environ["RA_AUDIT_NEEDED"]


class S(TypedDict, total=False):
    x: int


def node(state: S) -> dict:
    return {"x": 1}


builder = StateGraph(S)
builder.add_node("node", node)
builder.add_edge(START, "node")
builder.add_edge("node", END)
graph = builder.compile(checkpointer=InMemorySaver())
"""


def _audit(project: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "resume_audit", "audit", str(project), "--format", "json", *args],
        env={**os.environ, "NO_COLOR": "1", **env},
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_audit_passes_an_entry_points_pass_env_and_names_a_withheld_one(tmp_path):
    (tmp_path / "graph.py").write_text(AUDITED)
    withheld = _audit(tmp_path, env={"RA_AUDIT_NEEDED": "1"})
    note = next(n["message"] for n in json.loads(withheld.stdout)["notifications"] if "graph:graph" in n["message"])
    assert "was not swept" in note and "--pass-env RA_AUDIT_NEEDED" in note
    (tmp_path / "pyproject.toml").write_text(
        '[tool.resume-audit.audit."graph:graph"]\npass-env = ["RA_AUDIT_NEEDED"]\n'
    )
    passed = _audit(tmp_path, env={"RA_AUDIT_NEEDED": "1"})
    assert not any("graph:graph" in n["message"] for n in json.loads(passed.stdout)["notifications"]), passed.stdout


def test_audit_require_confinement_refuses_before_running_anything(tmp_path):
    (tmp_path / "graph.py").write_text(AUDITED)
    proc = _audit(tmp_path, "--require-confinement", env={**UNCONFINED, "RA_AUDIT_NEEDED": "1"})
    assert proc.returncode == 2 and "--require-confinement: no program was run" in proc.stderr
