"""RA103: an effectful node or ``@task`` of a checkpointed LangGraph graph, with no idempotency key."""

from __future__ import annotations

from typing import Iterable

from resume_audit.findings import Finding, Related, Severity
from resume_audit.fixes.idempotency_key import idempotency_key_fix
from resume_audit.frameworks.langgraph.units import unit_effects, units_anchored_in
from resume_audit.rules.base import Example, FixExample, Rule, RuleContext


class EffectInCheckpointedNode(Rule):
    id = "RA103"
    confirmed_by = ("RA701", "RA702")
    name = "effect-in-checkpointed-node"
    properties = ("EO",)
    severity = Severity.WARNING
    frameworks = ("langgraph",)
    yields_to = ("RA101", "RA102", "RA104")
    summary = "Non-idempotent effect in a node (or @task) of a checkpointed LangGraph graph: a crash before the node's write is durable re-runs it on resume."
    description = """
A node of a graph compiled with a checkpointer (`builder.compile(checkpointer=...)`,
the function passed to `add_node` / `add_sequence`), a tool run by a
`ToolNode([...])` node of such a graph or by `create_react_agent(model,
tools, checkpointer=...)`, or a `@task` called from a checkpointed
`@entrypoint` or node, performs a side effect -- HTTP
POST, payment, email, SQL write, file write, message publish, subprocess --
directly or through project helpers, with no idempotency key.
"""
    runtime = """
LangGraph records a node as done only when its writes reach the saver
(`put_writes`, then the step's `put`). Measured on langgraph 1.2.24 with an
external effect ledger and SIGKILL: a node whose `put_writes` reached disk
never re-ran after a kill (0 of 60 runs), but a node whose effect fired and
whose write had not reached disk **re-ran on resume and fired its effect
again** -- the at-least-once gap. With the default `durability="async"`
the writes are handed to a background executor and the next step can start
before they are durable, which widens the window; `durability="sync"`
narrows it but does not close it (the effect and the write are two
separate operations in any mode, and the 1.2.24 loop waits only for
delta-channel write futures before the next `put`, so whether a crashed
node replays or re-executes depends on the race -- LangGraph #8039 reports
the duplicated side effect). The same holds for `@task` results in the
functional API: a task whose result was not yet saved re-runs on resume.
"""
    fix = """
Give the effect an idempotency key derived from the thread and the node
(`idempotency_key=f"{config['configurable']['thread_id']}:charge"`, an
`Idempotency-Key` header, `INSERT ... ON CONFLICT DO NOTHING`), so a re-run
is deduplicated by the receiver; or record it durably keyed by thread and
node and skip it when already done (`if ledger.already_done(thread_id,
"charge"): return {}`). Running with `durability="sync"` narrows the window
but does not close it.
"""
    no_autofix = """
The automatic fix covers SDK calls that take an idempotency key, made
directly in a node of a checkpointed graph. It is not offered for an effect
reached through a helper (the key belongs in the helper's call, which other
callers share), in a loop or comprehension (every iteration would share one
key), in a `@task` or tool (they get no `config` parameter), or when the node
calls the same API twice; there an outbox or a done-check keyed by the thread
is the repair.
"""
    not_flagged = """
- graphs compiled without a checkpointer (`compile()`, `checkpointer=None` / `False`): nothing is resumed, a crash re-runs the whole invocation by the caller's choice (subgraphs that inherit a parent's checkpointer, and graphs a LangGraph server checkpoints for you, are not seen);
- graphs whose only checkpointer keeps state in process memory (`InMemorySaver()`, `MemorySaver()`, SQLite `:memory:`): the crash that opens the window also loses the thread, so nothing resumes it (serving such a graph is RA601's finding; an effect before an `interrupt()` is still RA101's);
- effects keyed by an idempotency key, helpers called with a key they forward as `idempotency_key=` / `Idempotency-Key`, and effects under a durable done-check that names the thread (see `auditor/analysis/idempotency.py`);
- calls to a `@task` from a node: the task's result is memoised, so the call is not the node's effect (the task's own body is checked as a task);
- `@task`s never called from a checkpointed entrypoint or node;
- effects RA101 (before an `interrupt()`), RA102 or RA104 (in an `@entrypoint` body) already report at the same line: one finding per location;
- LLM calls and reads (GET requests, SELECTs): re-running them costs tokens, not correctness.
- file overwrites (`open(path, "w")`, `Path.write_text` / `write_bytes`, `shutil.copy*`): re-running one replaces the file with the same content instead of duplicating anything (appends, exclusive creates, deletes and moves are still reported);
- SQL upserts whose every assignment takes the statement's own values (`ON CONFLICT (...) DO UPDATE SET c = excluded.c`, `ON DUPLICATE KEY UPDATE c = VALUES(c)`): a re-run rewrites the same row. Accumulating upserts (`SET n = t.n + excluded.n`) and plain `UPDATE`s (a read-modify-write re-reads the updated value) are still reported.
"""

    INVALID = (
        Example(
            {
                "app/workflow.py": """
                    import requests
                    from langgraph.graph import START, StateGraph

                    def notify(state: dict) -> dict:
                        requests.post("https://hooks.example.com/done", json=state)  # expect: RA103
                        return {"done": True}

                    def create_graph(checkpointer=None):
                        builder = StateGraph(dict)
                        builder.add_node("notify", notify)
                        builder.add_edge(START, "notify")
                        return builder.compile(checkpointer=checkpointer)
                """,
                "app/worker.py": """
                    import sqlite3

                    from langgraph.checkpoint.sqlite import SqliteSaver

                    from app.workflow import create_graph

                    preview = create_graph()
                    graph = create_graph(SqliteSaver(sqlite3.connect("runs.db", check_same_thread=False)))
                """,
            },
            note="One caller of the factory passes a durable saver: its graphs resume after a crash.",
        ),
        Example(
            {
                "shop/pay.py": """
                    import stripe

                    def charge(state: dict) -> dict:
                        stripe.Charge.create(amount=state["cents"], currency="eur")  # expect: RA103
                        return {"charged": True}
                """,
                "shop/a_demo.py": """
                    from langgraph.checkpoint.memory import InMemorySaver
                    from langgraph.graph import START, StateGraph

                    from .pay import charge

                    def build_demo():
                        builder = StateGraph(dict)
                        builder.add_node("charge", charge)
                        builder.add_edge(START, "charge")
                        return builder.compile(checkpointer=InMemorySaver())
                """,
                "shop/b_prod.py": """
                    from langgraph.checkpoint.postgres import PostgresSaver
                    from langgraph.graph import START, StateGraph

                    from .pay import charge

                    def build_prod(conn):
                        builder = StateGraph(dict)
                        builder.add_node("charge", charge)
                        builder.add_edge(START, "charge")
                        return builder.compile(checkpointer=PostgresSaver(conn))
                """,
            },
            note="One node, two graphs: the demo's in-memory saver loses a crashed thread, the production "
            "graph's PostgreSQL saver resumes it and re-runs the charge (reported from b_prod.py's compile).",
        ),
        Example(
            """
            import sqlite3

            import stripe as payments
            from langgraph.checkpoint.sqlite import SqliteSaver
            from langgraph.graph.state import StateGraph as Builder

            def charge(state: dict) -> dict:
                intent = payments.PaymentIntent.create(amount=state["cents"], currency="eur")  # expect: RA103
                return {"intent": intent.id}

            builder = Builder(dict)
            builder.add_node("charge", charge)
            builder.set_entry_point("charge")
            graph = builder.compile(checkpointer=SqliteSaver(sqlite3.connect("runs.db")))
            """,
            note="Aliased imports; the payment re-fires if the process dies before the node's write is durable.",
        ),
        Example(
            {
                "agent/graph.py": """
                    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
                    from langgraph.graph import START, StateGraph

                    from .notify import post_update

                    async def announce(state: dict) -> dict:
                        await post_update(state["channel"], state["text"])  # expect: RA103
                        return {"announced": True}

                    def build(conn):
                        saver = AsyncSqliteSaver(conn)
                        builder = StateGraph(dict)
                        builder.add_sequence([("announce", announce)])
                        builder.add_edge(START, "announce")
                        return builder.compile(checkpointer=saver)
                    """,
                "agent/notify.py": """
                    import httpx

                    async def post_update(channel: str, text: str) -> None:
                        async with httpx.AsyncClient() as client:
                            await client.post(f"https://chat.example.com/{channel}", json={"text": text})
                    """,
                "agent/__init__.py": "",
            },
            note="Async node, add_sequence, the effect in a helper in a sibling module, the saver in a variable.",
        ),
        Example(
            """
            import smtplib

            from langgraph.checkpoint.sqlite import SqliteSaver
            from langgraph.func import entrypoint, task

            @task
            def send_invoice(email: str, total: int) -> bool:
                with smtplib.SMTP("localhost") as smtp:
                    smtp.sendmail("billing@example.com", [email], f"total {total}")  # expect: RA103
                return True

            def make_workflow(conn):
                @entrypoint(checkpointer=SqliteSaver(conn))
                def billing(order: dict) -> dict:
                    sent = send_invoice(order["email"], order["total"]).result()
                    return {"sent": sent}

                return billing
            """,
            note="Functional API: the @task's body re-runs if it dies before its result is saved.",
        ),
        Example(
            """
            import httpx
            from langchain_core.tools import tool
            from langgraph.checkpoint.sqlite import SqliteSaver
            from langgraph.prebuilt import create_react_agent

            @tool
            def open_ticket(title: str) -> str:
                \"\"\"Open a support ticket.\"\"\"
                return httpx.post("https://tracker.example.com/api/issues", json={"title": title}).json()["id"]  # expect: RA103

            TOOLS = [open_ticket]

            def build(model, conn):
                return create_react_agent(model, TOOLS, checkpointer=SqliteSaver(conn))
            """,
            note="A tool run by the prebuilt agent's ToolNode: the tools node re-runs like any node.",
        ),
    )
    VALID = (
        Example(
            {
                "app/workflow.py": """
                    import requests
                    from langgraph.graph import START, StateGraph

                    def notify(state: dict) -> dict:
                        requests.post("https://hooks.example.com/done", json=state)
                        return {"done": True}

                    def create_graph(checkpointer=None):
                        builder = StateGraph(dict)
                        builder.add_node("notify", notify)
                        builder.add_edge(START, "notify")
                        return builder.compile(checkpointer=checkpointer)
                """,
                "app/worker.py": """
                    from app.workflow import create_graph

                    graph = create_graph()
                """,
            },
            note="The factory takes a checkpointer, but the only caller passes none: nothing is checkpointed, "
            "nothing resumes.",
        ),
        Example(
            """
            import httpx
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.graph import START, StateGraph

            def announce(state: dict) -> dict:
                httpx.post("https://chat.example.com/general", json={"text": state["text"]})
                return {"announced": True}

            builder = StateGraph(dict)
            builder.add_node("announce", announce)
            builder.add_edge(START, "announce")
            graph = builder.compile(checkpointer=InMemorySaver())
            """,
            note="An in-memory saver: a crash after the POST loses the thread too, so no resume re-runs the node.",
        ),
        Example(
            """
            import stripe
            from langgraph.graph import StateGraph

            def charge(state: dict) -> dict:
                stripe.PaymentIntent.create(amount=state["cents"], currency="eur")
                return {}

            builder = StateGraph(dict)
            builder.add_node("charge", charge)
            builder.set_entry_point("charge")
            graph = builder.compile()
            """,
            note="No checkpointer: nothing is resumed.",
        ),
        Example(
            """
            import stripe
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.graph import StateGraph

            def refund(charge_id: str, cents: int, *, key: str | None = None) -> str:
                if key is not None:
                    return stripe.Refund.create(charge=charge_id, amount=cents, idempotency_key=key).id
                return stripe.Refund.create(charge=charge_id, amount=cents).id

            def issue_refund(state: dict, config: dict) -> dict:
                thread_id = config["configurable"]["thread_id"]
                return {"refund": refund(state["charge"], state["cents"], key=f"{thread_id}:issue_refund")}

            builder = StateGraph(dict)
            builder.add_node("issue_refund", issue_refund)
            builder.set_entry_point("issue_refund")
            graph = builder.compile(checkpointer=InMemorySaver())
            """,
            note="The helper is handed a key it forwards as idempotency_key; its unkeyed branch is not taken.",
        ),
        Example(
            """
            import requests
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.graph import StateGraph

            from ledger import already_done, mark_done

            def ship(state: dict, config: dict) -> dict:
                thread_id = config["configurable"]["thread_id"]
                if already_done(thread_id, "ship"):
                    return {}
                requests.post("https://warehouse.example.com/shipments", json=state)
                mark_done(thread_id, "ship")
                return {"shipped": True}

            builder = StateGraph(dict)
            builder.add_node("ship", ship)
            builder.set_entry_point("ship")
            graph = builder.compile(checkpointer=InMemorySaver())
            """,
            note="A durable done-check keyed by the thread guards the effect.",
        ),
        Example(
            """
            import smtplib

            from langgraph.func import entrypoint, task

            @task
            def send(email: str) -> None:
                with smtplib.SMTP("localhost") as smtp:
                    smtp.sendmail("a@example.com", [email], "hi")

            @entrypoint()
            def notify(email: str) -> None:
                send(email).result()
            """,
            note="A task under an entrypoint with no checkpointer: nothing is resumed.",
        ),
        Example(
            """
            from pathlib import Path

            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.graph import StateGraph

            def write_report(state: dict, config: dict) -> dict:
                out = Path("reports") / f"{config['configurable']['thread_id']}.md"
                out.write_text(state["markdown"], encoding="utf-8")
                with open(out.with_suffix(".json"), "w") as fh:
                    fh.write(state["json"])
                return {"report": str(out)}

            builder = StateGraph(dict)
            builder.add_node("write_report", write_report)
            builder.set_entry_point("write_report")
            graph = builder.compile(checkpointer=InMemorySaver())
            """,
            note="Overwriting a file on a re-run replaces it; nothing is duplicated.",
        ),
    )

    FIXES = (
        FixExample(
            """
            import sqlite3

            import stripe
            from langgraph.checkpoint.sqlite import SqliteSaver
            from langgraph.graph import StateGraph


            def refund(state, config):
                stripe.Refund.create(
                    charge=state["charge_id"],
                    amount=state["cents"],  # partial refunds allowed
                )
                return {"refunded": True}


            builder = StateGraph(dict)
            builder.add_node("refund", refund)
            builder.set_entry_point("refund")
            graph = builder.compile(checkpointer=SqliteSaver(sqlite3.connect("runs.db")))
            """,
            """
            import sqlite3

            import stripe
            from langgraph.checkpoint.sqlite import SqliteSaver
            from langgraph.graph import StateGraph
            import hashlib


            def refund(state, config):
                stripe.Refund.create(
                    charge=state["charge_id"],
                    amount=state["cents"],  # partial refunds allowed
                    idempotency_key=hashlib.sha256(repr((config["configurable"]["thread_id"], "refund", "stripe.Refund.create", "charge", state["charge_id"], "amount", state["cents"])).encode()).hexdigest(),
                )
                return {"refunded": True}


            builder = StateGraph(dict)
            builder.add_node("refund", refund)
            builder.set_entry_point("refund")
            graph = builder.compile(checkpointer=SqliteSaver(sqlite3.connect("runs.db")))
            """,
            note="The node already takes config; the key is added as a line of its own, like the arguments before it.",
            unsafe=True,
        ),
    )

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        # each checkpointed node/task/tool is reported from the module that makes it
        # checkpointed (its graph's compile(...) or entrypoint), wherever its code lives
        for unit in units_anchored_in(ctx.project, ctx.module):
            if unit.in_memory:
                continue  # a crash loses the thread with the effect: nothing resumes it (RA601's concern)
            fn = unit.function
            for call, reached in unit_effects(ctx, fn):
                what = reached.hit.label
                via = f" (via {ctx.describe_call(call.node, fn.module)})" if reached.via_helper else ""
                related, flow = ctx.reached_related(reached, f"the {reached.hit.kind} effect {what}")
                anchor_note = {
                    "node": "compiled with a checkpointer here",
                    "task": "checkpointed entrypoint or graph that runs this task",
                    "tool": "checkpointed graph whose tools node runs this tool",
                }[unit.kind]
                where = {"node": "node", "task": "@task", "tool": "tool"}[unit.kind]
                yield ctx.finding(
                    call.node,
                    f"{what}{via} in {where} '{fn.qualname}' of a checkpointed graph has no idempotency key. "
                    f"If the process dies after this {reached.hit.kind} effect and before the {where}'s writes are "
                    f'durable (with the default durability="async" they are saved in the background while the next '
                    f"step starts), resuming the thread re-runs the {where} and {reached.hit.repeat}.",
                    related=(Related(ctx.span(unit.anchor, unit.anchor_module), anchor_note), *related),
                    flows=(flow,) if reached.via_helper else (),
                    module=fn.module,
                    autofix=idempotency_key_fix(call, fn, ctx.project.resolver(fn.module))
                    if unit.kind == "node"
                    else None,
                )
