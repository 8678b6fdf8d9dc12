"""`audit` on the issue-34 ticket desk (fixtures/audit-desk): every verdict checked against a direct probe.

The direct probe runs the fixture's own graphs in fresh interpreters against a local HTTP server that
creates tickets and -- like a real provider -- deduplicates requests carrying the same Idempotency-Key,
SIGKILLs the process right after the ticket POST returns (before the node's write is durable), and
resumes from the checkpoint in a new interpreter. What the server created is the truth the audit's
verdicts are compared with.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from resume_audit.audit.forks import fork_sites
from resume_audit.audit.modules import Modules
from resume_audit.audit.needs import explain
from resume_audit.audit.sinks import sink_analyzer
from resume_audit.config.settings import Config
from resume_audit.discovery.walk import discover as discover_files

REPO = Path(__file__).resolve().parent.parent
DESK = REPO / "fixtures" / "audit-desk"

PROBE = textwrap.dedent("""
    import importlib, json, os, signal, sqlite3, sys
    phase, module, builder, db, port, kill = sys.argv[1:7]
    sys.path.insert(0, os.environ["DESK"])
    import requests
    import ticketdesk.calls as calls
    calls.API = f"http://127.0.0.1:{port}/v1"
    real_post = requests.post
    def post(*args, **kwargs):
        response = real_post(*args, **kwargs)
        if kill == "after-post":
            os.kill(os.getpid(), signal.SIGKILL)
        return response
    requests.post = post
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.types import Command
    graph = getattr(importlib.import_module(module), builder)().compile(
        checkpointer=SqliteSaver(sqlite3.connect(db, check_same_thread=False)))
    config = {"configurable": {"thread_id": "t-1"}}
    value = {"summary": "printer on fire"} if phase == "start" else Command(resume="approve") if phase == "resume" else None
    graph.invoke(value, config, durability="sync")
    print(json.dumps(graph.get_state(config).values))
""")


class TicketService(BaseHTTPRequestHandler):
    """Creates a ticket per POST; a repeated Idempotency-Key gets the first ticket back (no new one)."""

    created: list[str] = []
    by_key: dict[str, str] = {}
    requests: int = 0

    def do_POST(self) -> None:  # noqa: N802 - the http.server hook
        self.rfile.read(int(self.headers.get("content-length") or 0))
        cls = type(self)
        cls.requests += 1
        key = self.headers.get("Idempotency-Key")
        if key and key in cls.by_key:
            ticket = cls.by_key[key]
        else:
            ticket = f"T-{len(cls.created) + 1}"
            cls.created.append(ticket)
            if key:
                cls.by_key[key] = ticket
        body = json.dumps({"id": ticket}).encode()
        self.send_response(201)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def crash_after_the_ticket(tmp_path: Path, module: str, builder: str) -> tuple[int, list[str], dict]:
    """Park, answer with a SIGKILL right after the POST returns, recover in a fresh interpreter: (POSTs the service
    received, tickets it created, the thread's final state)."""
    service = type("Service", (TicketService,), {"created": [], "by_key": {}, "requests": 0})
    server = ThreadingHTTPServer(("127.0.0.1", 0), service)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        env = {**os.environ, "DESK": str(DESK)}
        db, port = str(tmp_path / "desk.db"), str(server.server_address[1])

        def run(phase: str, kill: str = "") -> subprocess.CompletedProcess:
            return subprocess.run(
                [sys.executable, "-c", PROBE, phase, module, builder, db, port, kill],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )

        assert run("start").returncode == 0
        killed = run("resume", "after-post")
        assert killed.returncode == -9, killed.stderr
        recovered = run("recover")
        assert recovered.returncode == 0, recovered.stderr
        return service.requests, list(service.created), json.loads(recovered.stdout.splitlines()[-1])
    finally:
        server.shutdown()


def test_direct_probe_unkeyed_ticket_is_created_twice_keyed_once(tmp_path):
    (tmp_path / "unkeyed").mkdir()
    requests_made, created, state = crash_after_the_ticket(tmp_path / "unkeyed", "ticketdesk.graph", "build_graph")
    assert requests_made == 2 and created == ["T-1", "T-2"] and state["ticket_id"] == "T-2"
    (tmp_path / "keyed").mkdir()
    requests_made, created, state = crash_after_the_ticket(
        tmp_path / "keyed", "ticketdesk.keyed_graph", "build_keyed_graph"
    )
    assert requests_made == 2 and created == ["T-1"] and state["ticket_id"] == "T-1"  # the provider deduped the retry


@pytest.fixture(scope="module")
def desk() -> dict:
    # discovery now sweeps each program once (the app's factories); the graph module's builder is named as a
    # second entry point on purpose, so that one hazard reached from two entry points is seen to merge
    targets = ["ticketdesk.app:compiled", "ticketdesk.app:compiled_keyed", "ticketdesk.graph:build_graph"]
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "resume_audit",
            "audit",
            ".",
            "--format",
            "json",
            *[a for t in targets for a in ("--target", t)],
        ],
        cwd=DESK,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 1, proc.stderr  # the unkeyed ticket is a dynamic-only finding
    return json.loads(proc.stdout)


def test_the_keyed_twin_is_swept_with_its_call_stubbed_and_its_key_checked(desk):
    entries = {e["target"]: e for e in desk["audit"]["entry_points"]}
    keyed = entries["ticketdesk.app:compiled_keyed"]
    # before: the keyed POST was left unstubbed, "approve" failed with ConnectionError and True (no ticket) was kept
    assert keyed["swept"] and keyed["answers"] == ["approve"] and "requests.post" in keyed["effects"]
    assert not [f for f in desk["findings"] if f["path"] == "ticketdesk/keyed_graph.py"]  # as the direct probe: once


def test_each_hazard_is_one_result_whatever_the_entry_points(desk):
    results = [(f["rule_id"], f["path"], f["start_line"], f["confirmation"]) for f in desk["findings"]]
    assert results == [
        ("RA705", "ticketdesk/graph.py", 20, "dynamic-only"),
        # the static stage follows the builder returned by build_graph() to its compile(checkpointer=SqliteSaver)
        # in app.py (RA103); the sweep confirms it with the direct probe's two tickets (RA701), reached from both
        # entry points and reported once
        ("RA103", "ticketdesk/graph.py", 23, "confirmed"),
    ]
    note = desk["findings"][1]["confirmation_note"]
    assert "RA701 when ticketdesk.app:compiled was swept" in note and "fired 2 times" in note
    assert "(1 more dynamic finding(s) of the same hazard)" in note


def test_no_finding_rests_on_a_stub_or_on_the_build(desk):
    assert not [f for f in desk["findings"] if f["rule_id"] == "RA706"]  # ticket_id is a str: the stub answers one
    assert not [f for f in desk["findings"] if "save_outline" in f["message"] or "node ?" in f["message"]]


def test_ra703_is_a_note_where_nothing_forks(desk):
    notes = [n["message"] for n in desk["notifications"]]
    assert any(n.startswith("RA703") and "ticketdesk/graph.py:16" in n and "checkpoint_id" in n for n in notes), notes


def test_fork_sites_are_resumes_and_updates_at_a_checkpoint_id(tmp_path):
    (tmp_path / "fork.py").write_text(
        textwrap.dedent("""
        from langgraph.types import Command

        def change_answer(graph, thread_id, checkpoint_id, answer):
            config = {"configurable": {"thread_id": thread_id, "checkpoint_id": checkpoint_id}}
            return graph.invoke(Command(resume=answer), config)

        def replay(graph, thread_id):
            snapshot = list(graph.get_state_history({"configurable": {"thread_id": thread_id}}))[-1]
            graph.update_state(snapshot.config, {"note": "x"})

        def ordinary(graph, thread_id, answer):
            return graph.invoke(Command(resume=answer), {"configurable": {"thread_id": thread_id}})
    """)
    )

    def sites(root: Path) -> list[str]:
        sources = list(discover_files([root], root, []))
        analyzer = sink_analyzer(sources, Config())
        return [str(s) for s in fork_sites(analyzer, sources, Modules(analyzer.project.load))]

    assert sites(tmp_path) == ["fork.py:6 (.invoke(...))", "fork.py:10 (.update_state(...))"]
    assert sites(DESK) == [] and sites(REPO / "fixtures" / "audit") == []


def test_what_a_program_needed_is_named_with_the_snippet():
    target = "pkg.app:graph"
    assert 'env = { DATABASE_URL = "..." }' in explain("cannot import 'pkg.app': KeyError: 'DATABASE_URL'", target)
    refused = explain(
        "the graph raised SandboxRefusal: resume-audit sandbox refused connect to ('93.184.215.14', 443) "
        "(only loopback is allowed; pass --allow-network) at pkg/app.py:9",
        target,
    )
    assert (
        "--allow-network" not in refused
        and "stub-reads" in refused
        and '[tool.resume-audit.audit."pkg.app:graph"]' in refused
    )
    postgres = explain(
        "cannot import 'pkg.app': OperationalError: connection to server at \"localhost\" (127.0.0.1), "
        "port 5432 failed: Connection refused",
        target,
    )
    assert "a PostgreSQL server" in postgres and "skip" in postgres
    assert explain("the graph raised ValueError: bad", target) == "the graph raised ValueError: bad"


def test_a_hazard_no_probe_could_show_is_not_exercised_not_reproduced(tmp_path):
    """A route resuming a graph that never parks (the server's `interrupt_before` is not the factory's): no
    concurrent resume can be set up, so RA302 was never tested -- before, it came out `not-reproduced`."""
    shutil.copytree(REPO / "fixtures" / "audit-desk", tmp_path, dirs_exist_ok=True)
    (tmp_path / "ticketdesk" / "api.py").write_text(
        textwrap.dedent("""
        import sqlite3

        from fastapi import FastAPI
        from langgraph.checkpoint.sqlite import SqliteSaver
        from langgraph.types import Command

        from .graph import build_graph

        app = FastAPI()
        graph = build_graph().compile(checkpointer=SqliteSaver(sqlite3.connect("d.db", check_same_thread=False)),
                                      interrupt_before=["file_ticket"])


        @app.post("/tickets/{ticket}/decision")
        def decide(ticket: str, decision: str) -> dict:
            return graph.invoke(Command(resume=decision), {"configurable": {"thread_id": ticket}})
    """)
    )
    (tmp_path / "ticketdesk" / "graph.py").write_text(
        (tmp_path / "ticketdesk" / "graph.py")
        .read_text()
        .replace(
            'return {"decision": interrupt({"summary": state["summary"], "question": "open a ticket?"})}',
            'return {"decision": "approve"}',
        )
    )
    # the graph module's builder, swept without the server's `interrupt_before` (discovery would now pick the
    # server's module-level graph, which imports FastAPI; the test's subject is a sweep with no pause point)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "resume_audit",
            "audit",
            ".",
            "--format",
            "json",
            "--fail-on",
            "never",
            "--target",
            "ticketdesk.graph:build_graph",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr
    ra302 = [f for f in json.loads(proc.stdout)["findings"] if f["rule_id"] == "RA302"]
    assert [f["confirmation"] for f in ra302] == ["not-exercised"]
    assert "no concurrent cell could run" in ra302[0]["confirmation_note"]
