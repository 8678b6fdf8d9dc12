"""The effect-sink model, case by case: each snippet runs before an ``interrupt()`` in a node,
so RA101 fires exactly when the model classifies it as a non-idempotent effect."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from conftest import write_tree

from resume_audit.config.settings import Config
from resume_audit.engine.scan import scan

EFFECTS = {
    "requests.post": 'import requests\n{i}requests.post("https://x", json={{}})',
    "requests.Session().put": 'import requests\n{i}s = requests.Session()\n{i}s.put("https://x")',
    "requests.request POST": 'import requests\n{i}requests.request("POST", "https://x")',
    "httpx async client": 'import httpx\n{i}client = httpx.AsyncClient()\n{i}client.delete("https://x")',
    "urlopen with data": 'import urllib.request\n{i}urllib.request.urlopen("https://x", data=b"1")',
    "stripe": 'import stripe\n{i}stripe.Refund.create(charge="ch_1")',
    "stripe client": 'from stripe import StripeClient\n{i}StripeClient("k").v1.payment_intents.create(params={{}})',
    "smtplib": 'import smtplib\n{i}smtplib.SMTP("h").sendmail("a", ["b"], "m")',
    "boto3 sqs": 'import boto3\n{i}boto3.client("sqs").send_message(QueueUrl="q", MessageBody="m")',
    "kafka": 'from kafka import KafkaProducer\n{i}KafkaProducer().send("topic", b"m")',
    "slack": 'from slack_sdk import WebClient\n{i}WebClient(token="t").chat_postMessage(channel="c", text="t")',
    "sql insert": 'import sqlite3\n{i}sqlite3.connect("d").execute("INSERT INTO t VALUES (1)")',
    "sql update relative": '{i}cur = state["cur"]\n{i}cur.execute("UPDATE accounts SET balance = balance - 5")',
    "orm add+commit": '{i}db = state["db"]\n{i}db.add(object())\n{i}db.commit()',
    "file append": '{i}open("log.txt", "a").write("x")',
    "path unlink": 'from pathlib import Path\n{i}Path("out.txt").unlink()',
    "os.remove": 'import os\n{i}os.remove("f")',
    "subprocess": 'import subprocess\n{i}subprocess.run(["git", "push", "origin", "main"])',
    "celery apply_async": '{i}state["task"].apply_async(args=[1])',
    "npm publish": 'import subprocess\n{i}subprocess.run(["npm", "publish"], cwd="pkg")',
    "exec-style git push": 'import asyncio\n{i}asyncio.create_subprocess_exec("git", "push", "origin", "HEAD")',
    "exec-style command from a list": 'import asyncio\n{i}cmd = ["kubectl", "apply", "-f", "x.yaml"]\n{i}asyncio.create_subprocess_exec(*cmd)',
    "configured sink": "from billing import charge\n{i}charge(1)",
}

NOT_EFFECTS = {
    "requests.get": 'import requests\n{i}requests.get("https://x")',
    "stripe retrieve": 'import stripe\n{i}stripe.Charge.retrieve("ch_1")',
    "idempotency_key": 'import stripe\n{i}stripe.Refund.create(charge="c", idempotency_key="t:refund")',
    "Idempotency-Key header": 'import requests\n{i}h = {{"Idempotency-Key": "t:n"}}\n{i}requests.post("https://x", headers=h)',
    "SQS dedup id": 'import boto3\n{i}boto3.client("sqs").send_message(QueueUrl="q", MessageBody="m", MessageDeduplicationId="t")',
    "select": 'import sqlite3\n{i}sqlite3.connect("d").execute("SELECT * FROM t")',
    "insert on conflict do nothing": 'import sqlite3\n{i}sqlite3.connect("d").execute("INSERT INTO t VALUES (1) ON CONFLICT DO NOTHING")',
    "open for reading": '{i}open("f").read()',
    "local read-only command": 'import subprocess\n{i}subprocess.run(["git", "clone", "https://x/r.git", "/tmp/r"])',
    "pip install into a local environment": 'import subprocess, sys\n{i}subprocess.run([sys.executable, "-m", "pip", "install", "-r", "requirements.txt"])',
    "npm ci": 'import subprocess\n{i}subprocess.run(["npm", "ci"], cwd="web")',
    "git merge-base": 'import subprocess\n{i}subprocess.run(["git", "merge-base", "main", "HEAD"], capture_output=True)',
    "exec-style dry run and its output": (
        'import asyncio\n{i}p = asyncio.create_subprocess_exec("npx", "playwright", "install", "--dry-run")\n'
        "{i}out = p.communicate()"
    ),
    "exec-style git diff from a list": 'import asyncio\n{i}cmd = ["git", "diff", "main...HEAD"]\n{i}asyncio.create_subprocess_exec(*cmd)',
    "python -m pytest in a sandbox": 'import subprocess, sys\n{i}subprocess.run([sys.executable, "-m", "pytest", "-q"])',
    "merge-only commit": "from sqlmodel import Session\n{i}s = Session(e)\n{i}s.merge(row)\n{i}s.commit()",
    "embeddings POST": 'import httpx\n{i}httpx.post(f"{{BASE}}/v1/embeddings", json={{}})',
    # an overwrite replays harmlessly: the re-run writes the same file from the same state
    "path write_text overwrite": 'from pathlib import Path\n{i}Path("out.txt").write_text("x")',
    "open for writing overwrite": '{i}open("out.txt", "w").write("x")',
    "request with variable method": 'import requests\n{i}m = state["m"]\n{i}requests.request(m, "https://x")',
    "commit without staging": '{i}db = state["db"]\n{i}db.query(1)\n{i}db.commit()',
    "str.replace": '{i}"a".replace("a", "b")',
    "safe-calls config": "from billing import audit\n{i}audit(1)",
}


def _node(snippet: str) -> str:
    imports = [line for line in snippet.format(i="").splitlines() if line.startswith(("import ", "from "))]
    body = [line for line in snippet.format(i="    ").splitlines() if not line.startswith(("import ", "from "))]
    return "\n".join(
        [
            "from langgraph.types import interrupt",
            *imports,
            "",
            "",
            "def node(state):",
            *body,
            '    return {"ok": interrupt("go?")}',
            "",
        ]
    )


def _findings(tmp_path: Path, snippet: str) -> list:
    write_tree(tmp_path, {"node.py": _node(snippet)})
    config = Config(select=["RA101"], effect_sinks=["billing.charge"], safe_calls=["billing.audit"])
    result = scan([tmp_path], config, tmp_path, jobs=1)
    assert result.notifications == [], result.notifications
    return [f for f in result.findings if f.rule_id == "RA101"]


def _flags(tmp_path: Path, snippet: str) -> bool:
    return bool(_findings(tmp_path, snippet))


@pytest.mark.parametrize("name", sorted(EFFECTS))
def test_effect_is_recognised(tmp_path: Path, name: str) -> None:
    assert _flags(tmp_path, EFFECTS[name]), textwrap.indent(_node(EFFECTS[name]), "  ")


@pytest.mark.parametrize("name", sorted(NOT_EFFECTS))
def test_non_effect_is_not_flagged(tmp_path: Path, name: str) -> None:
    assert not _flags(tmp_path, NOT_EFFECTS[name]), textwrap.indent(_node(NOT_EFFECTS[name]), "  ")


def test_effects_command_lists_the_catalog() -> None:
    """`resume-audit effects` lists every SDK of the catalog with its calls, consequence and key."""
    import json
    import subprocess
    import sys

    from resume_audit.analysis.effect_catalog import CATALOG

    out = subprocess.run(
        [sys.executable, "-m", "resume_audit.cli", "effects", "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = {r["sdk"]: r for r in json.loads(out.stdout)}
    for sdk in CATALOG:
        assert sdk.name in rows
    slack = rows["Slack (slack_sdk, slack_bolt)"]
    assert "slack_sdk.*.chat_postMessage" in slack["calls"] and "posts the Slack message again" in slack["why"]
    assert (
        rows["Payments (stripe, braintree, paypalrestsdk, square, Adyen)"]["idempotency_key"]
        == "Stripe: `idempotency_key=`"
    )
    text = subprocess.run(
        [sys.executable, "-m", "resume_audit.cli", "effects"],
        capture_output=True,
        text=True,
        check=True,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    ).stdout
    assert "Google APIs" in text and "MCP" in text


SDK_EFFECTS = {
    "gmail send chain": (
        'from googleapiclient.discovery import build\n{i}build("gmail", "v1").users().messages().send(userId="me", body={{}}).execute()',
        "sends the Gmail message again",
    ),
    "calendar insert via request name": (
        '{i}req = svc.events().insert(calendarId="primary", body={{}})\n{i}req.execute()',
        "creates a second Calendar event",
    ),
    "salesforce task": (
        'from simple_salesforce import Salesforce\n{i}sf = Salesforce(username="u")\n{i}sf.Task.create({{"Subject": "x"}})',
        "creates a second Salesforce record",
    ),
    "notion page": (
        'from notion_client import Client\n{i}Client(auth="t").pages.create(parent={{}})',
        "creates a second Notion page",
    ),
    "github issue": ('{i}repo.create_issue(title="x")', "opens a second GitHub issue"),
    "twilio sms": (
        'from twilio.rest import Client\n{i}Client("a", "b").messages.create(to="+1", body="x")',
        "sends the SMS again",
    ),
    "mcp write tool": ('{i}session.call_tool("delete_record", {{}})', "calls the MCP tool again"),
}
SDK_READS = {
    "gmail list": '{i}svc.users().messages().list(userId="me").execute()',
    "gmail label change": '{i}svc.users().messages().modify(userId="me", id="1", body={{}}).execute()',
    "mcp read tool": '{i}session.call_tool("get_record", {{}})',
    "slack history": 'from slack_sdk import WebClient\n{i}WebClient(token="t").conversations_history(channel="c")',
}


@pytest.mark.parametrize("name", sorted(SDK_EFFECTS))
def test_sdk_write_is_an_effect_with_its_consequence(tmp_path: Path, name: str) -> None:
    snippet, consequence = SDK_EFFECTS[name]
    findings = _findings(tmp_path, snippet)
    assert findings and consequence in findings[0].message, findings


@pytest.mark.parametrize("name", sorted(SDK_READS))
def test_sdk_read_is_not_an_effect(tmp_path: Path, name: str) -> None:
    assert not _flags(tmp_path, SDK_READS[name])


TOOL_FORMS = {
    "StructuredTool.from_function": """
        from langchain_core.tools import StructuredTool
        import requests

        def _refund(order: str) -> str:
            requests.post("https://pay.example.com/refunds", json={"order": order})
            return "ok"

        refund = StructuredTool.from_function(func=_refund, name="refund", description="refund an order")
    """,
    "BaseTool subclass": """
        from langchain_core.tools import BaseTool
        import requests

        class RefundTool(BaseTool):
            name: str = "refund"
            description: str = "refund an order"

            def _run(self, order: str) -> str:
                requests.post("https://pay.example.com/refunds", json={"order": order})
                return "ok"

        refund = RefundTool()
    """,
    "@tool in a dict(zip(...)) registry": '''
        from langchain_core.tools import tool
        import requests

        @tool
        def refund_tool(order: str) -> str:
            """Refund an order."""
            requests.post("https://pay.example.com/refunds", json={"order": order})
            return "ok"

        refund = dict(zip(["refund"], [refund_tool]))["refund"]
    ''',
}


@pytest.mark.parametrize("form", sorted(TOOL_FORMS))
def test_tool_invoke_reaches_the_tool_function(tmp_path: Path, form: str) -> None:
    """``refund.invoke(...)`` before ``interrupt()`` runs the tool's function: an RA101 at the call."""
    write_tree(
        tmp_path,
        {
            "agent/tools.py": textwrap.dedent(TOOL_FORMS[form]),
            "agent/graph.py": textwrap.dedent("""
            from langgraph.types import interrupt

            from agent.tools import refund


            def node(state):
                refund.invoke({"order": state["order"]})
                return {"ok": interrupt("go?")}
        """),
        },
    )
    result = scan([tmp_path], Config(select=["RA101"]), tmp_path, jobs=1)
    assert [(f.span.path, f.span.start_line) for f in result.findings] == [("agent/graph.py", 8)], result.findings


def test_tool_node_tools_are_units_of_a_checkpointed_graph(tmp_path: Path) -> None:
    """A ``ToolNode([...])`` node of a checkpointed graph runs its tools: RA103 at the tool's effect."""
    write_tree(
        tmp_path,
        {
            "agent.py": textwrap.dedent('''
        from typing import TypedDict

        import requests
        from langchain_core.tools import tool
        from langgraph.checkpoint.sqlite import SqliteSaver
        from langgraph.graph import StateGraph
        from langgraph.prebuilt import ToolNode


        @tool
        def open_ticket(title: str) -> str:
            """Open a ticket."""
            requests.post("https://tickets.example.com/api", json={"title": title})
            return "ok"


        @tool
        def search_tickets(query: str) -> str:
            """Search tickets."""
            return requests.get("https://tickets.example.com/api", params={"q": query}).text


        class State(TypedDict):
            messages: list


        def build(conn):
            builder = StateGraph(State)
            builder.add_node("tools", ToolNode([open_ticket, search_tickets]))
            builder.set_entry_point("tools")
            return builder.compile(checkpointer=SqliteSaver(conn))
    ''')
        },
    )
    result = scan([tmp_path], Config(select=["RA103"]), tmp_path, jobs=1)
    assert [(f.rule_id, f.span.start_line) for f in result.findings] == [("RA103", 14)], result.findings


def test_the_sink_index_matches_what_trying_every_pattern_in_order_matches() -> None:
    """SinkIndex only narrows which patterns are tried: for names spelled from every built-in
    pattern (wildcards filled in several ways, prefixes, other packages' names) it yields exactly
    the patterns a full scan of the list would, in the same order."""
    import itertools

    from resume_audit.analysis.effects import BUILTIN_SINKS, SinkIndex, SinkSpec, _name_glob

    specs = [SinkSpec("acme.billing.*", "configured"), SinkSpec("*.send_invoice", "configured"), *BUILTIN_SINKS]
    index = SinkIndex(specs)
    names = {"acme.billing.charge", "acme.send_invoice", "x.send_invoice", "print", "requests", "requests.post"}
    for spec, fill in itertools.product(specs, ("x", "a.b", "", "Client.chat")):
        concrete = spec.pattern.replace("*", fill).replace("?", "q")
        names.update({concrete, concrete + ".more", concrete.rsplit(".", 1)[0], "other." + concrete})
    assert len(names) > 1000
    for name in sorted(names):
        expected = [s for s in specs if _name_glob(s.pattern).match(name)]
        assert list(index.matching(name)) == expected, name


def test_a_star_inside_a_part_of_a_sink_pattern_stays_in_that_part() -> None:
    """``asyncio.create_subprocess_*`` names the spawn, not a method called on what it returned
    (``proc.communicate()``, resolved as ``asyncio.create_subprocess_exec.communicate``); a part that
    is only ``*`` still spans any number of parts."""
    from resume_audit.analysis.effects import _name_glob

    assert _name_glob("asyncio.create_subprocess_*").match("asyncio.create_subprocess_exec")
    assert not _name_glob("asyncio.create_subprocess_*").match("asyncio.create_subprocess_exec.communicate")
    assert _name_glob("slack_sdk.*.files_upload*").match("slack_sdk.web.client.WebClient.files_upload_v2")
    assert not _name_glob("os.exec*").match("os.execute.wait")
    assert _name_glob("acme.billing.*").match("acme.billing.Client.charge")


HELPER = """
import asyncio
import sqlite3

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, StateGraph


async def run_git(*args, cwd=None):
    cmd = ["git"] + list(args)
    proc = await asyncio.create_subprocess_exec(*cmd, cwd=cwd, stdout=asyncio.subprocess.PIPE)
    out, _ = await proc.communicate()
    return out.decode()


def run_tool(argv: list, cwd: str):
    import subprocess

    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True).stdout


async def publish(state):
    diff = await run_git("diff", "main...HEAD", cwd=state["wt"])
    base = await run_git("merge-base", "main", "HEAD", cwd=state["wt"])
    files = run_tool(["git", "ls-files"], state["wt"])
    await run_git("push", "origin", "HEAD", cwd=state["wt"])
    run_tool(["gh", "pr", "create", "--fill"], state["wt"])
    return {"diff": diff, "base": base, "files": files}


builder = StateGraph(dict)
builder.add_node("publish", publish)
builder.add_edge(START, "publish")
graph = builder.compile(checkpointer=SqliteSaver(sqlite3.connect("s.db", check_same_thread=False)))
"""


def test_a_command_running_helper_is_an_effect_only_where_its_caller_hands_it_one(tmp_path: Path) -> None:
    """``run_git(*args)`` runs ``["git", *args]``: each call's own words decide (``diff`` and
    ``merge-base`` read, ``push`` changes the remote); the same for a helper given the whole argv."""
    write_tree(tmp_path, {"node.py": HELPER})
    result = scan([tmp_path], Config(select=["RA103"]), tmp_path, jobs=1)
    assert sorted(f.span.start_line for f in result.findings) == [26, 27], result.findings
