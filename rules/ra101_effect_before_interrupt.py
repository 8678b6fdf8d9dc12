"""RA101: a non-idempotent effect runs before ``interrupt()`` in the same LangGraph node."""

from __future__ import annotations

from typing import Iterable

from resume_audit.analysis.order import completes_before
from resume_audit.facts.model import FunctionInfo
from resume_audit.findings import Finding, Related, Severity
from resume_audit.fixes.idempotency_key import idempotency_key_fix
from resume_audit.frameworks.langgraph import names as langgraph
from resume_audit.frameworks.langgraph.names import interrupt_classifier
from resume_audit.frameworks.langgraph.units import is_checkpointed_node
from resume_audit.rules.base import Example, FixExample, Rule, RuleContext


class EffectBeforeInterrupt(Rule):
    id = "RA101"
    confirmed_by = ("RA701",)
    name = "effect-before-interrupt"
    properties = ("EO", "PC")
    severity = Severity.ERROR
    frameworks = ("langgraph",)
    summary = "Non-idempotent effect before interrupt() in the same LangGraph node: it fires again on every resume."
    description = """
A LangGraph node (or `@task`/`@entrypoint` body) performs a side effect --
an HTTP POST, a payment, an email, a SQL write, a file write, a subprocess --
and *later in the same function* calls `interrupt()` to wait for a human.
This includes an effect in one loop iteration followed by an `interrupt()`
in the next, and effects reached through helper functions.
"""
    runtime = """
`interrupt()` does not suspend the Python frame. It raises, the run parks,
and when you resume with `Command(resume=...)` LangGraph **re-runs the
node from its first line**; `interrupt()` then returns the resume value.
Everything before the `interrupt()` call runs again: measured on langgraph
1.2.24, the pre-interrupt effect of a node fires once per delivery (1 -> 2
after one resume). With several interrupts in one node (or one in a loop),
each resume replays every earlier effect. The LangGraph docs warn that code
before `interrupt()` must be idempotent; nothing enforces it.
"""
    fix = """
Move the effect after the `interrupt()` call (so it only runs once the human
has answered), or into its own node that runs after the approval node. If it
must happen first, make it idempotent: pass an idempotency key derived from
the thread and node (`idempotency_key=f"{thread_id}:charge"`) or record it
durably and skip it when already done.
"""
    no_autofix = """
Moving the effect after `interrupt()` (or into a node of its own behind the
gate) is the lasting repair, and no tool can make it: whether the effect's
result feeds the question the human is asked is the program's business. The
automatic fix covers SDK calls that take an idempotency key, directly in a
node of a checkpointed graph; it is not offered for an effect reached through
a helper, in a loop, in a `@task` or tool, or when the node calls the same
API twice.
"""
    not_flagged = """
- effects *after* the last `interrupt()` of a node (they run once, on the resume that completes the node);
- effects in a branch that always returns or raises before reaching the `interrupt()`;
- effects keyed by an idempotency key (`idempotency_key=`, an `Idempotency-Key` header, SQS `MessageDeduplicationId`, ...);
- effects in a *different* node that ran before the interrupting node (completed nodes are not re-run on the interrupt path);
- static breakpoints (`interrupt_before=[...]`): no node code runs before them;
- calls to a `@task` before the `interrupt()`: the task's result is replayed on resume, not re-run (measured on langgraph 1.2.24: a task called before `interrupt()` in a node or an entrypoint ran once across park and resume while the body ran twice).
"""

    INVALID = (
        Example(
            """
            import stripe
            from langgraph.types import interrupt

            def charge_then_confirm(state):
                stripe.Charge.create(amount=state["amount"], currency="usd")  # expect: RA101
                answer = interrupt({"question": "Charged. Ship it?"})
                return {"shipped": answer == "yes"}
            """,
            note="The charge re-runs when the human answers.",
        ),
        Example(
            """
            import requests
            from langgraph.types import interrupt as ask_human

            def refund_each(state):
                for item in state["items"]:
                    if ask_human(f"refund {item}?"):
                        requests.post("https://api.example.com/refunds", json={"item": item})  # expect: RA101
                return {}
            """,
            note="Loop: resuming item 2's question re-runs item 1's refund.",
        ),
        Example(
            {
                "agent/graph.py": """
                    import langgraph.types as lgt
                    from .tools import notify_customer

                    def review(state):
                        notify_customer(state["email"])  # expect: RA101
                        return {"ok": lgt.interrupt("approve?")}
                    """,
                "agent/tools.py": """
                    import smtplib

                    def notify_customer(email):
                        with smtplib.SMTP("localhost") as smtp:
                            smtp.sendmail("shop@example.com", [email], "your order")
                    """,
                "agent/__init__.py": "",
            },
            note="The effect is in a helper in a sibling module.",
        ),
    )
    VALID = (
        Example(
            """
            import stripe
            from langgraph.types import interrupt

            def confirm_then_charge(state):
                answer = interrupt({"question": "Charge the card?"})
                if answer == "yes":
                    stripe.Charge.create(amount=state["amount"], currency="usd")
                return {"charged": answer == "yes"}
            """,
            note="The effect runs after the interrupt: once.",
        ),
        Example(
            """
            import stripe
            from langgraph.types import interrupt

            def charge(state):
                stripe.Charge.create(
                    amount=state["amount"],
                    idempotency_key=f"{state['thread_id']}:charge",
                )
                return {"ok": interrupt("charged; continue?")}
            """,
            note="Keyed by an idempotency key: the replay is deduplicated by Stripe.",
        ),
        Example(
            """
            import requests
            from langgraph.types import interrupt

            def route(state):
                if state.get("pre_approved"):
                    requests.post("https://api.example.com/ship", json=state)
                    return {"shipped": True}
                return {"shipped": interrupt("ship?")}
            """,
            note="The branch with the effect returns before the interrupt.",
        ),
        Example(
            """
            import smtplib

            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.func import entrypoint, task
            from langgraph.types import interrupt

            @task
            def send_receipt(email: str) -> bool:
                with smtplib.SMTP("localhost") as smtp:
                    smtp.sendmail("shop@example.com", [email], "receipt")
                return True

            @entrypoint(checkpointer=InMemorySaver())
            def order(email: str) -> dict:
                sent = send_receipt(email).result()
                return {"sent": sent, "ok": interrupt("ship?")}
            """,
            note="A @task before the interrupt is memoised: the resume replays its result.",
        ),
        Example(
            """
            import requests

            def interrupt(msg):
                print(msg)

            def node(state):
                requests.post("https://api.example.com/log", json=state)
                interrupt("done")
                return {}
            """,
            note="A local function called interrupt is not LangGraph's.",
        ),
    )

    FIXES = (
        FixExample(
            """
            import stripe
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.graph import StateGraph
            from langgraph.types import interrupt


            def reserve(state: dict) -> dict:
                hold = stripe.PaymentIntent.create(amount=state["cents"], currency="usd", capture_method="manual")
                answer = interrupt({"question": "Held the amount. Book it?", "hold": hold["id"]})
                return {"booked": answer == "yes"}


            builder = StateGraph(dict)
            builder.add_node("reserve", reserve)
            builder.set_entry_point("reserve")
            graph = builder.compile(checkpointer=InMemorySaver())
            """,
            """
            import stripe
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.graph import StateGraph
            from langgraph.types import interrupt
            from langchain_core.runnables import RunnableConfig
            import hashlib


            def reserve(state: dict, config: RunnableConfig) -> dict:
                hold = stripe.PaymentIntent.create(amount=state["cents"], currency="usd", capture_method="manual", idempotency_key=hashlib.sha256(repr((config["configurable"]["thread_id"], "reserve", "stripe.PaymentIntent.create", "amount", state["cents"], "currency", "usd", "capture_method", "manual")).encode()).hexdigest())
                answer = interrupt({"question": "Held the amount. Book it?", "hold": hold["id"]})
                return {"booked": answer == "yes"}


            builder = StateGraph(dict)
            builder.add_node("reserve", reserve)
            builder.set_entry_point("reserve")
            graph = builder.compile(checkpointer=InMemorySaver())
            """,
            note="The node gets a config parameter (annotated like its state) and the key; the hold is answered, not repeated, when the human answers.",
            unsafe=True,
        ),
    )

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        project = ctx.project
        classify_interrupt = interrupt_classifier(project)
        for fn in ctx.module.functions:
            interrupts = []
            for call in fn.calls:
                reached = project.reach("interrupt", classify_interrupt, call, ctx.module)
                if reached is not None:
                    interrupts.append((call, reached))
            if not interrupts:
                continue
            interrupt_calls = {id(c.node) for c, _ in interrupts}
            for call in fn.calls:
                if id(call.node) in interrupt_calls:
                    continue
                if langgraph.calls_task(call.node, call.function, ctx.module, project):
                    continue  # a @task's result is replayed on resume, not re-run
                effect = ctx.effect_reached(call)
                if effect is None:
                    continue
                target = next(
                    ((ic, ir) for ic, ir in interrupts if completes_before(call, ic, ctx.module, fn.node)), None
                )
                if target is None:
                    continue
                icall, ireached = target
                line = icall.line
                what = effect.hit.label
                via = f" (via {ctx.describe_call(call.node)})" if effect.via_helper else ""
                related, flow = ctx.reached_related(effect, f"the {effect.hit.kind} effect {what}")
                interrupt_note = (
                    "interrupt() parks the run here; on resume the node restarts from its first line"
                    if not ireached.via_helper
                    else f"{ctx.describe_call(icall.node)} reaches interrupt(); on resume the node restarts"
                )
                yield ctx.finding(
                    call.node,
                    f"{what}{via} runs before interrupt() at line {line} in node '{fn.qualname}'. "
                    f"LangGraph re-runs the whole node when the run is resumed, so this {effect.hit.kind} effect "
                    f"fires again on every resume (once per answer delivered): each resume {effect.hit.repeat}.",
                    related=(Related(ctx.span(icall.node), interrupt_note), *related),
                    flows=(flow,) if effect.via_helper else (),
                    autofix=idempotency_key_fix(call, fn, ctx.resolver) if self._is_node(ctx, fn) else None,
                )

    @staticmethod
    def _is_node(ctx: RuleContext, fn: FunctionInfo) -> bool:
        """A node of a checkpointed graph: LangGraph hands it ``config`` (a helper or a task gets none)."""
        return is_checkpointed_node(ctx.project, fn)
