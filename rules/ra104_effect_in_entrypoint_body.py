"""RA104: an effect in an ``@entrypoint`` body outside any ``@task``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from resume_audit.findings import Finding, Related, Severity
from resume_audit.frameworks.langgraph.units import entrypoint_for, regressing_overwrites, unit_effects
from resume_audit.rules.base import Example, Rule, RuleContext

if TYPE_CHECKING:
    from resume_audit.analysis.effects import Effect
    from resume_audit.analysis.queries import Reached
    from resume_audit.facts.model import CallInfo


class EffectInEntrypointBody(Rule):
    id = "RA104"
    confirmed_by = ("RA701", "RA702")
    name = "effect-in-entrypoint-body"
    properties = ("EO",)
    severity = Severity.ERROR
    frameworks = ("langgraph",)
    yields_to = ("RA101",)
    summary = (
        "Effect in an @entrypoint body outside any @task: only task results are memoised, so every resume re-runs it."
    )
    description = """
A LangGraph functional-API workflow (`@entrypoint(checkpointer=...)`)
performs a side effect in its own body -- directly or through project
helpers -- instead of inside a `@task`. Calls to project functions
decorated `@task` (or wrapped with `task(fn)`) are memoised and are not
reported; everything else the body does runs again.
"""
    runtime = """
The entrypoint is a single node. When the run is resumed -- after an
`interrupt()` answered with `Command(resume=...)`, or after a crash or an
exception, with `invoke(None, config)` -- LangGraph re-runs the entrypoint
**from its first line**. Completed `@task` calls return their saved
results without running (the docstring of `entrypoint` in langgraph 1.2.24:
"Upon resuming the workflow, compose_essay task will not be re-executed as
its result is cached by the checkpointer"), but code in the body itself has
no saved result and runs again: its effects fire once per resume. The
entrypoint's own write happens only when the whole body returns, so the
window is the whole body, not one step.
"""
    fix = """
Move the effect into a `@task` and call it from the entrypoint
(`send_receipt(email).result()`): its result is saved when it completes
and is replayed, not re-run, on resume. Give the effect an idempotency key
derived from the thread as well, to cover a crash inside the task before
its result is saved (RA103).
"""
    no_autofix = """
Wrapping the effect in an `@task` changes what the entrypoint memoises
and requires the task's result to be serialisable; where the task boundary
goes is a design decision.
"""
    not_flagged = """
- calls to `@task` functions (and to names bound with `task(fn)`): memoised;
- effects inside the task bodies themselves (RA103 covers the task's own crash window);
- entrypoints with no checkpointer (`@entrypoint()`): there is no resume (an entrypoint used as a subgraph of a checkpointed parent is not followed);
- effects keyed by an idempotency key, or under a durable done-check naming the thread;
- effects before an `interrupt()` in the body: RA101 reports them at the same line (one finding per location).
- file overwrites (`open(path, "w")`, `Path.write_text` / `write_bytes`, `shutil.copy*`): re-running one replaces the file with the same content instead of duplicating anything (appends, exclusive creates, deletes and moves are still reported);
- SQL upserts whose every assignment takes the statement's own values (`ON CONFLICT (...) DO UPDATE SET c = excluded.c`, `ON DUPLICATE KEY UPDATE c = VALUES(c)`): a re-run rewrites the same row. Accumulating upserts (`SET n = t.n + excluded.n`) and plain `UPDATE`s (a read-modify-write re-reads the updated value) are still reported.
"""

    INVALID = (
        Example(
            """
            import requests
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.func import entrypoint, task

            @task
            def draft(topic: str) -> str:
                return f"An essay about {topic}"

            @entrypoint(checkpointer=InMemorySaver())
            def publish(topic: str) -> dict:
                essay = draft(topic).result()
                requests.post("https://blog.example.com/posts", json={"body": essay})  # expect: RA104
                return {"essay": essay}
            """,
            note="The draft is memoised; the POST in the body is not.",
        ),
        Example(
            {
                "flows/workflow.py": """
                    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
                    from langgraph.func import entrypoint as workflow

                    from .billing import record_payment

                    def build(conn):
                        @workflow(checkpointer=AsyncSqliteSaver(conn))
                        async def settle(order: dict) -> dict:
                            await record_payment(order["id"], order["cents"])  # expect: RA104
                            return {"settled": True}

                        return settle
                    """,
                "flows/billing.py": """
                    import asyncpg

                    async def record_payment(order_id: str, cents: int) -> None:
                        conn = await asyncpg.connect("postgresql://localhost/shop")
                        await conn.execute("INSERT INTO payments (order_id, cents) VALUES ($1, $2)", order_id, cents)
                    """,
                "flows/__init__.py": "",
            },
            note="Async entrypoint under an alias; the SQL write is in a helper in a sibling module.",
        ),
        Example(
            """
            import subprocess

            import langgraph.func as lgf
            from langgraph.checkpoint.postgres import PostgresSaver

            saver = PostgresSaver.from_conn_string("postgresql://localhost/agents")

            def deploy(spec: dict) -> dict:
                subprocess.run(["kubectl", "apply", "-f", spec["manifest"]], check=True)  # expect: RA104
                return {"deployed": True}

            deploy_flow = lgf.entrypoint(checkpointer=saver)(deploy)
            """,
            note="entrypoint applied as a call, the checkpointer from a module variable.",
        ),
    )
    VALID = (
        Example(
            """
            import requests
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.func import entrypoint, task

            @task
            def post(body: str) -> int:
                return requests.post("https://blog.example.com/posts", json={"body": body}).status_code

            @entrypoint(checkpointer=InMemorySaver())
            def publish(topic: str) -> dict:
                return {"status": post(topic).result()}
            """,
            note="The effect lives in a @task: memoised on resume.",
        ),
        Example(
            """
            import requests
            from langgraph.func import entrypoint, task

            post_task = task(lambda body: requests.post("https://x.example.com", json=body))

            @entrypoint()
            def publish(body: dict) -> dict:
                requests.post("https://audit.example.com/events", json=body)
                return {"ok": True}
            """,
            note="No checkpointer: the entrypoint is never resumed.",
        ),
        Example(
            """
            import requests
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.func import entrypoint

            @entrypoint(checkpointer=InMemorySaver())
            def notify(event: dict, config: dict) -> dict:
                thread_id = config["configurable"]["thread_id"]
                requests.post(
                    "https://hooks.example.com/events",
                    json=event,
                    headers={"Idempotency-Key": f"{thread_id}:notify"},
                )
                return {"ok": True}
            """,
            note="The effect is keyed by the thread: the receiver deduplicates the replay.",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        for fn in ctx.module.functions:
            ep = entrypoint_for(ctx.project, fn)
            if ep is None or not ep.persisted:
                continue
            anchor = Related(ctx.span(ep.node), "@entrypoint with a checkpointer: resumed by re-running the body")
            for call, reached in unit_effects(ctx, fn):
                yield self._report(
                    ctx,
                    call,
                    reached,
                    anchor,
                    (),
                    f"runs in the body of @entrypoint '{fn.qualname}', outside any @task. Only task results are "
                    f"memoised: every resume of this workflow (after an interrupt, a crash or an error) re-runs the "
                    f"body from its first line and {reached.hit.repeat}.",
                )
            for call, reached, later in regressing_overwrites(ctx, fn):
                yield self._report(
                    ctx,
                    call,
                    reached,
                    anchor,
                    (Related(ctx.span(later.node), "the later write to the same place"),),
                    f"runs in the body of @entrypoint '{fn.qualname}', outside any @task, and "
                    f"{ctx.describe_call(later.node)} writes the same place after the next interrupt. The write "
                    f"replays harmlessly on its own, but every resume re-runs the body from its first line: it "
                    f"puts the older value back over the newer one until the later write runs again, and a crash "
                    f"or an error in between leaves the older value stored.",
                )

    @staticmethod
    def _report(
        ctx: RuleContext,
        call: CallInfo,
        reached: Reached[Effect],
        anchor: Related,
        extra: tuple[Related, ...],
        what_happens: str,
    ) -> Finding:
        """One finding for an effect reached from the entrypoint body (directly or via helpers)."""
        what = reached.hit.label
        via = f" (via {ctx.describe_call(call.node)})" if reached.via_helper else ""
        related, flow = ctx.reached_related(reached, f"the {reached.hit.kind} effect {what}")
        return ctx.finding(
            call.node,
            f"{what}{via} {what_happens}",
            related=(anchor, *extra, *related),
            flows=(flow,) if reached.via_helper else (),
        )
