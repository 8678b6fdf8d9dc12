"""RA102: a non-idempotent effect (or a prompt written to the stream) before ``ctx.wait_for_event``."""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from resume_audit.analysis.deployments import deployment_of
from resume_audit.analysis.order import completes_before
from resume_audit.facts.model import FunctionInfo
from resume_audit.facts.syntax import receiver
from resume_audit.findings import Finding, Related, Severity
from resume_audit.frameworks.llamaindex import names as llamaindex
from resume_audit.rules.base import Example, Rule, RuleContext


def _method(call: cst.Call, name: str) -> bool:
    return isinstance(call.func, cst.Attribute) and call.func.attr.value == name


def _is_context_receiver(call: cst.Call, fn: FunctionInfo, ctx: RuleContext) -> bool:
    """``ctx.wait_for_event``: the receiver is typed as a workflows Context, or the
    function is a ``@step`` (whose context parameter may be unannotated)."""
    obj = receiver(call)
    if obj is not None and ctx.resolver.names(obj, fn) & llamaindex.CONTEXT:
        return True
    return any(ctx.resolver.names(d.target, fn.parent) & llamaindex.STEP for d in fn.decorators)


class EffectBeforeWaitForEvent(Rule):
    id = "RA102"
    confirmed_by = ("RA701",)
    name = "effect-before-wait-for-event"
    properties = ("EO", "PC")
    severity = Severity.ERROR
    frameworks = ("llamaindex-workflows",)
    summary = "Effect (or a prompt written to the stream) before ctx.wait_for_event() in a LlamaIndex step: the step replays it."
    description = """
A LlamaIndex Workflows step performs a side effect, or writes a prompt
event with `ctx.write_event_to_stream(...)`, and later in the same step
awaits `ctx.wait_for_event(...)` for the human's answer.
"""
    runtime = """
`wait_for_event` does not suspend the step. In llama-index-workflows 2.26.1
"the runtime pauses by throwing an internal control-flow exception and
replays the entire step when the event arrives" (its docstring). So
everything before the wait runs **again when the answer arrives -- in the
same process, with no restore at all** -- and once more if the run is
restored from `Context.to_dict()` / `Context.from_dict()`. Measured: the
prefix effect goes 1 -> 2 on the in-process answer. A prompt written with
`write_event_to_stream` before the wait is emitted again on every replay,
so a UI asks the human twice.
"""
    fix = """
Move the effect after `wait_for_event` (or into the next step), and pass
the prompt as `wait_for_event(..., waiter_event=InputRequiredEvent(...),
waiter_id="...")`, which the runtime emits once per `waiter_id`. Or use the
two-step pattern: one step returns `InputRequiredEvent`, another consumes
`HumanResponseEvent` -- measured clean across snapshot and restore. If the
effect must come first, key it with an idempotency key.
"""
    no_autofix = """
The effect has to move to a step after the event, or be guarded by a
flag in `ctx.store` that the replay reads; both change the workflow's
structure, and which step owns the effect is a design decision.
"""
    not_flagged = """
- effects after the wait (they run once, when the answer has arrived);
- the prompt passed as `waiter_event=` (emitted once per `waiter_id` by the runtime);
- the two-step `InputRequiredEvent` / `HumanResponseEvent` pattern (no replay);
- a `wait_for_event` method on an object that is not a workflows `Context` in a function that is not a `@step`;
- effects keyed by an idempotency key.
"""

    INVALID = (
        Example(
            """
            import httpx
            from workflows import Context, Workflow, step
            from workflows.events import HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent

            class RefundFlow(Workflow):
                @step
                async def refund(self, ctx: Context, ev: StartEvent) -> StopEvent:
                    async with httpx.AsyncClient() as client:
                        await client.post("https://pay.example.com/holds", json={"order": ev.order})  # expect: RA102
                    answer = await ctx.wait_for_event(
                        HumanResponseEvent, waiter_event=InputRequiredEvent(prefix="Refund?"), waiter_id="refund"
                    )
                    return StopEvent(result=answer.response)
            """,
            note="The hold is placed again when the human answers: the step replays.",
        ),
        Example(
            """
            from llama_index.core.workflow import Context, Workflow, step, StartEvent, StopEvent
            from llama_index.core.workflow import InputRequiredEvent, HumanResponseEvent

            class Approvals(Workflow):
                @step
                async def ask(self, ctx, ev: StartEvent) -> StopEvent:
                    ctx.write_event_to_stream(InputRequiredEvent(prefix="Approve the invoice?"))  # expect: RA102
                    reply = await ctx.wait_for_event(HumanResponseEvent)
                    return StopEvent(result=reply.response)
            """,
            note="Older import path; the prompt is emitted twice, once per replay.",
        ),
        Example(
            {
                "flows/billing.py": """
                    from workflows import Context, Workflow, step
                    from workflows.events import HumanResponseEvent, StartEvent, StopEvent
                    from .ledger import record_invoice

                    class Billing(Workflow):
                        @step
                        async def bill(self, ctx: Context, ev: StartEvent) -> StopEvent:
                            record_invoice(ev.customer)  # expect: RA102
                            ok = await ctx.wait_for_event(HumanResponseEvent, waiter_id="confirm")
                            return StopEvent(result=ok.response)
                    """,
                "flows/ledger.py": """
                    import sqlite3

                    def record_invoice(customer):
                        con = sqlite3.connect("billing.db")
                        con.execute("INSERT INTO invoices(customer) VALUES (?)", (customer,))
                        con.commit()
                    """,
                "flows/__init__.py": "",
            },
            note="The SQL write is in a helper module.",
        ),
    )
    VALID = (
        Example(
            """
            import httpx
            from workflows import Context, Workflow, step
            from workflows.events import HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent

            class RefundFlow(Workflow):
                @step
                async def refund(self, ctx: Context, ev: StartEvent) -> StopEvent:
                    answer = await ctx.wait_for_event(
                        HumanResponseEvent, waiter_event=InputRequiredEvent(prefix="Refund?"), waiter_id="refund"
                    )
                    if answer.response == "yes":
                        async with httpx.AsyncClient() as client:
                            await client.post("https://pay.example.com/refunds", json={"order": ev.order})
                    return StopEvent(result=answer.response)
            """,
            note="Wait first, act after: the replay happens before the effect.",
        ),
        Example(
            """
            import httpx
            from workflows import Context, Workflow, step
            from workflows.events import HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent

            class TwoStep(Workflow):
                @step
                async def ask(self, ctx: Context, ev: StartEvent) -> InputRequiredEvent:
                    httpx.post("https://pay.example.com/holds", json={"order": ev.order})
                    return InputRequiredEvent(prefix="Refund?")

                @step
                async def act(self, ctx: Context, ev: HumanResponseEvent) -> StopEvent:
                    return StopEvent(result=ev.response)
            """,
            note="The two-step event pattern does not replay the first step.",
        ),
        Example(
            """
            import requests

            class Mailbox:
                async def wait_for_event(self, kind):
                    return kind

            async def poll(box: Mailbox):
                requests.post("https://example.com/ping")
                return await box.wait_for_event("mail")
            """,
            note="Not a workflows Context and not a step.",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        if not ctx.module.uses_any(llamaindex.PACKAGES):
            return
        for fn in ctx.module.functions:
            waits = [
                c
                for c in fn.calls
                if _method(c.node, llamaindex.WAIT_FOR_EVENT) and _is_context_receiver(c.node, fn, ctx)
            ]
            if not waits:
                continue
            for call in fn.calls:
                if call in waits:
                    continue
                target = next((w for w in waits if completes_before(call, w, ctx.module, fn.node)), None)
                if target is None:
                    continue
                if llamaindex.context_flag_guard(call.node, fn, ctx.module):
                    continue  # guarded by a flag kept in the Context store: the replay skips it
                wait_line = target.line
                related = (
                    Related(
                        ctx.span(target.node), "wait_for_event() replays the step from its start when the event arrives"
                    ),
                )
                if _method(call.node, llamaindex.WRITE_EVENT_TO_STREAM):
                    host = deployment_of(ctx.module, ctx.project, "uipath")
                    yield ctx.finding(
                        call.node,
                        f"The prompt written by {ctx.describe_call(call.node)} before wait_for_event() at line {wait_line} "
                        f"in step '{fn.qualname}' is emitted again each time the step replays (when the answer arrives, "
                        f"and after a context restore): the human is asked twice."
                        + (
                            f" Lowered to a note: this module is {host.note} ({host.manifest.name}), so a resume there "
                            f"asks once; a parallel tool call or a run outside that host still asks twice."
                            if host is not None
                            else ""
                        ),
                        severity=Severity.NOTE if host is not None else None,
                        related=related,
                        fix="Pass the prompt as wait_for_event(..., waiter_event=InputRequiredEvent(...), waiter_id=...) "
                        "so the runtime emits it once per waiter_id.",
                    )
                    continue
                effect = ctx.effect_reached(call)
                if effect is None:
                    continue
                via = f" (via {ctx.describe_call(call.node)})" if effect.via_helper else ""
                more, flow = ctx.reached_related(effect, f"the {effect.hit.kind} effect {effect.hit.label}")
                yield ctx.finding(
                    call.node,
                    f"{effect.hit.label}{via} runs before wait_for_event() at line {wait_line} in step '{fn.qualname}'. "
                    f"The workflow replays the whole step when the awaited event arrives (in process, and again after a "
                    f"Context restore), so this {effect.hit.kind} effect fires twice or more: each replay {effect.hit.repeat}.",
                    related=(*related, *more),
                    flows=(flow,) if effect.via_helper else (),
                )
