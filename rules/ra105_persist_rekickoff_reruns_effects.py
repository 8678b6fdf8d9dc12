"""RA105: effectful methods of a CrewAI ``@persist`` flow that is re-kicked with its persisted id."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

import libcst as cst

from resume_audit.facts.model import CallInfo, ClassInfo, FunctionInfo, ModuleFacts
from resume_audit.facts.syntax import argument, receiver
from resume_audit.findings import Finding, Related, Severity
from resume_audit.frameworks.classes import instance_class, module_constant
from resume_audit.frameworks.crewai import names as crewai
from resume_audit.rules.base import Example, Rule, RuleContext

if TYPE_CHECKING:
    from resume_audit.analysis.project import Project


@dataclass
class _Index:
    """Per scan: persisted flow classes and the kickoffs that re-run them with a persisted id."""

    persisted: dict[int, tuple[ClassInfo, crewai.Persistence]] = field(default_factory=dict)
    #: id(class) -> kickoff calls with a persisted id addressed to that class
    rekicks: dict[int, list[tuple[CallInfo, ModuleFacts]]] = field(default_factory=dict)
    #: kickoffs with a persisted id whose receiver could not be typed
    untyped: list[tuple[CallInfo, ModuleFacts]] = field(default_factory=list)


def resume_id(call: cst.Call, scope: FunctionInfo | None, module: ModuleFacts, project: Project) -> cst.CSTNode | None:
    """The id of a kickoff that *resumes* a persisted flow: ``inputs={"id": flow_id}`` and nothing
    else, with an id that is not a constant. Not counted: a constant id (one long-lived flow run
    again on purpose: a daily job, a singleton), new inputs next to the id (the next turn of a
    conversational flow), ``restore_from_state_id=`` (a fork, documented for re-running a flow
    seeded from saved state)."""
    if not crewai.is_kickoff(call):
        return None
    inputs = argument(call, 0, "inputs")
    found = crewai.inputs_carry_id(inputs, scope, module, project)
    if found is None or not crewai.inputs_only_id(inputs, scope, module, project):
        return None
    if _constant_id(found, scope, module, project):
        return None
    return found


def _constant_id(expr: cst.CSTNode, scope: FunctionInfo | None, module: ModuleFacts, project: Project) -> bool:
    if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString, cst.Integer)):
        return True
    if isinstance(expr, (cst.Name, cst.Attribute)):
        if isinstance(expr, cst.Name):
            found = project.resolver(module).binding_value(expr.value, scope, module.order(expr))
            if found is not None:
                return (
                    found[1] is None
                    and found[0].kind == "assign"
                    and _constant_id(found[0].value, None, module, project)
                )
        for name in project.resolver(module).names(expr, scope):
            value = module_constant(name, project)
            if value is not None and isinstance(value[0], (cst.SimpleString, cst.ConcatenatedString, cst.Integer)):
                return True
    return False


def _untyped_flow_receiver(
    receiver: cst.BaseExpression, scope: FunctionInfo | None, module: ModuleFacts, project: Project
) -> bool:
    """An untyped receiver that may be a flow: a variable or attribute (a parameter, ``self.flow``),
    not a call result such as ``MyCrew().crew()`` and not typed as a Crew/Agent."""
    if not isinstance(receiver, (cst.Name, cst.Attribute)):
        return False
    if isinstance(receiver, cst.Attribute) and receiver.attr.value in ("crew", "agent"):
        return False
    return not project.resolver(module).names(receiver, scope) & (crewai.CREW | crewai.AGENT)


def _mentions_state(expr: cst.CSTNode) -> bool:
    """Does the expression read ``self.state`` (``self.state.charged``, ``self.state["sent"]``)?"""
    stack = [expr]
    while stack:
        cur = stack.pop()
        if (
            isinstance(cur, cst.Attribute)
            and cur.attr.value == "state"
            and isinstance(cur.value, cst.Name)
            and cur.value.value == "self"
        ):
            return True
        stack.extend(cur.children)
    return False


def _exits(block: cst.BaseSuite) -> bool:
    body = block.body if isinstance(block, (cst.IndentedBlock, cst.SimpleStatementSuite)) else []
    for stmt in body:
        small = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else [stmt]
        if any(isinstance(s, (cst.Return, cst.Raise)) for s in small):
            return True
    return False


def guarded_by_state(call: CallInfo, fn: FunctionInfo, module: ModuleFacts) -> bool:
    """Is the effect under an "already done?" check on the flow's (reloaded) state:
    inside ``if not self.state.x:``, or after ``if self.state.x: return``?"""
    for anc in module.ancestors(call.node):
        if anc is fn.node:
            break
        if isinstance(anc, (cst.If, cst.While)) and _mentions_state(anc.test):
            return True
    body = fn.node.body
    if isinstance(body, cst.IndentedBlock):
        for stmt in body.body:
            if module.order(stmt) > call.order:
                break
            if (
                isinstance(stmt, cst.If)
                and _mentions_state(stmt.test)
                and _exits(stmt.body)
                and module.done(stmt) < call.order
            ):
                return True
    return False


class PersistRekickoffRerunsEffects(Rule):
    id = "RA105"
    # a second kickoff of a completed flow firing its effects again (the stray probe) is this hazard too
    confirmed_by = ("RA701", "RA702", "RA704")
    name = "persist-rekickoff-reruns-effects"
    properties = ("EO", "PC")
    severity = Severity.ERROR
    frameworks = ("crewai",)
    # a kickoff is a CrewAI marker (resume_audit.reading.prefilter): a driver module that imports no crewai is a candidate
    summary = (
        "CrewAI @persist flow re-kicked with its persisted id: completed methods run again, and so do their effects."
    )
    description = """
A CrewAI Flow persisted with `@persist` (on the class or on methods) is
kicked off again with a saved id and nothing else --
`kickoff(inputs={"id": flow_id})`, `kickoff_async`/`akickoff` -- to
resume it after a crash, and its `@start`/`@listen`/`@router` methods
perform side effects (directly or through project helpers).
"""
    runtime = """
`@persist` saves the flow's state after each method; it does not record
which methods completed. On `kickoff(inputs={"id": ...})` a class-level
`@persist` flow reloads the saved state and then runs **every method
again from `@start`** (`crewai/flow/runtime/__init__.py`: with no
completed methods restored, "the flow executes from scratch"). Measured
on crewai 1.15.30: re-kicking a completed flow whose methods add 1 and 10
takes the state from 11 to 22 and fires both effects twice; after a crash
in the second method the resumed run ends at 12 (the first method's
effect fired twice). Method-level `@persist` never reloads state at all
(`self.persistence` stays unset), so the re-kicked flow re-runs
everything on fresh state: state reads 11, every effect fired twice.
"""
    fix = """
Make each effect idempotent under re-execution: key it with the flow id
(`idempotency_key=f"{self.state.id}:charge"`), or record completion in the
persisted state and skip it when already done (`if not
self.state.charged: ...; self.state.charged = True`, with class-level
`@persist`). For resume that skips completed methods use checkpointing
instead: `Flow(checkpoint=CheckpointConfig(on_events=["method_execution_finished"]))`
and `Flow.from_checkpoint(...)`.
"""
    no_autofix = """
Which completed methods may run again, and what marks them done in the
persisted state, is specific to each flow.
"""
    not_flagged = """
- `@persist` flows that are never kicked off with a persisted id (every kickoff starts a new flow: nothing re-runs);
- kickoffs that bring new inputs next to the id (`inputs={"id": session, "message": text}`): the next turn of a conversational flow, where running the methods again is the point;
- kickoffs with a constant id (`inputs={"id": OPERATOR_FLOW_ID}`): one long-lived flow (a daily job, a singleton) run again on purpose -- RA303 covers constant ids in served code;
- `restore_from_state_id=` forks: documented for re-running a flow seeded from a saved state;
- flows without `@persist` (an `"id"` input is only stamped on the state; nothing is reloaded or repeated);
- effects keyed by an idempotency key;
- with class-level `@persist`, effects under an "already done" check on the reloaded state (`if not self.state.sent:` or an early `return`);
- effects in plain methods that no flow method calls (they do not run on kickoff);
- checkpoint restore (`from_checkpoint`), which skips completed methods (see RA107 for when it does not).
"""

    INVALID = (
        Example(
            """
            import stripe
            from crewai.flow.flow import Flow, listen, start
            from crewai.flow.persistence import persist

            @persist()
            class Checkout(Flow):
                @start()
                def charge(self):
                    stripe.PaymentIntent.create(amount=self.state["amount"], currency="usd")  # expect: RA105

                @listen(charge)
                def ship(self, _):
                    return "shipped"

            def resume(flow_id):
                return Checkout().kickoff(inputs={"id": flow_id})
            """,
            note="Class-level @persist: the charge re-runs on every resume.",
        ),
        Example(
            """
            import smtplib
            from crewai import Flow
            from crewai.flow import listen, persist, start
            from crewai.flow.persistence import SQLiteFlowPersistence

            class Welcome(Flow):
                @start()
                @persist(SQLiteFlowPersistence("flows.db"))
                def create(self):
                    return "created"

                @listen(create)
                async def email(self, _):
                    with smtplib.SMTP("localhost") as smtp:
                        smtp.sendmail("hi@example.com", [self.state["email"]], "welcome")  # expect: RA105

            async def retry(flow_id):
                inputs = {"id": flow_id}
                return await Welcome().kickoff_async(inputs=inputs)
            """,
            note="Method-level @persist never reloads: an async resume with inputs built in a variable re-runs everything.",
        ),
        Example(
            {
                "shop/notify.py": """
                    import requests

                    def post_receipt(order):
                        requests.post("https://crm.example.com/receipts", json={"order": order})
                    """,
                "shop/flow.py": """
                    from crewai.flow.flow import Flow, listen, start
                    from crewai.flow.persistence import persist as keep_state
                    from .notify import post_receipt

                    @keep_state(verbose=True)
                    class Order(Flow):
                        @start()
                        def place(self):
                            return self.state["order"]

                        @listen(place)
                        def receipt(self, order):
                            post_receipt(order)  # expect: RA105
                    """,
                "shop/worker.py": """
                    from .flow import Order

                    def on_retry(message):
                        flow = Order()
                        flow.kickoff(inputs={"id": message["flow_id"]})
                    """,
                "shop/__init__.py": "",
            },
            note="Aliased decorator; the effect is in a helper module; the re-kick is in a third module.",
        ),
    )
    VALID = (
        Example(
            """
            import stripe
            from crewai.flow.flow import Flow, start
            from crewai.flow.persistence import persist

            @persist()
            class Checkout(Flow):
                @start()
                def charge(self):
                    stripe.PaymentIntent.create(amount=self.state["amount"], currency="usd")

            def new_checkout(amount):
                return Checkout().kickoff(inputs={"amount": amount})
            """,
            note="Never re-kicked with a persisted id: each kickoff is a new flow.",
        ),
        Example(
            """
            import stripe
            from crewai.flow.flow import Flow, start
            from crewai.flow.persistence import persist

            @persist()
            class Checkout(Flow):
                @start()
                def charge(self):
                    if self.state.get("charged"):
                        return "already charged"
                    stripe.PaymentIntent.create(amount=self.state["amount"], currency="usd")
                    self.state["charged"] = True

            def resume(flow_id):
                return Checkout().kickoff(inputs={"id": flow_id})
            """,
            note="Class-level @persist reloads state, and the charge is skipped once recorded.",
        ),
        Example(
            """
            import stripe
            from crewai.flow.flow import Flow, start
            from crewai.flow.persistence import persist

            @persist()
            class Checkout(Flow):
                @start()
                def charge(self):
                    stripe.PaymentIntent.create(
                        amount=self.state["amount"], currency="usd", idempotency_key=f"{self.state['id']}:charge"
                    )

            def resume(flow_id):
                return Checkout().kickoff(inputs={"id": flow_id})
            """,
            note="Keyed by the flow id: Stripe deduplicates the replay.",
        ),
        Example(
            """
            import requests
            from crewai.flow.flow import Flow, start

            class Ping(Flow):
                @start()
                def ping(self):
                    requests.post("https://example.com/ping")

            Ping().kickoff(inputs={"id": "abc"})
            """,
            note="Not persisted: the id is only stamped on the state.",
        ),
        Example(
            """
            import requests
            from crewai.flow.flow import Flow, start
            from crewai.flow.persistence import persist

            @persist()
            class Assistant(Flow):
                @start()
                def reply(self):
                    history = self.state.setdefault("history", [])
                    history.append(self.state["message"])
                    requests.post("https://chat.example.com/send", json={"text": f"{len(history)} messages so far"})

            def on_message(session_id, text):
                return Assistant().kickoff(inputs={"id": session_id, "message": text})
            """,
            note="The next turn of a conversational flow: new input next to the id, the methods are meant to run again.",
        ),
    )

    def _build(self, project: Project) -> _Index:
        return project.cached(self.id, "index", lambda: self._index(project))

    def _index(self, project: Project) -> _Index:
        index = _Index()
        # flows are defined where crewai is imported; re-kicks happen wherever kickoff is called
        for module in project.modules_mentioning(["crewai", "kickoff"]):
            uses = module.uses_any(crewai.PACKAGES)
            if uses:
                for flow in crewai.flow_classes(module, project):
                    p = crewai.persistence_of(flow, project)
                    if p.any:
                        index.persisted[id(flow)] = (flow, p)
            for info in module.all_calls:
                if not crewai.is_kickoff(info.node):
                    continue
                if resume_id(info.node, info.function, module, project) is None:
                    continue
                flow_object = receiver(info.node)
                if flow_object is None:  # (a kickoff is a method call: never)
                    continue
                cls = instance_class(flow_object, info.function, module, project)
                if cls is not None:
                    index.rekicks.setdefault(id(cls), []).append((info, module))
                elif uses and _untyped_flow_receiver(flow_object, info.function, module, project):
                    index.untyped.append((info, module))
        return index

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        if not ctx.module.uses_any(crewai.PACKAGES):
            return
        project = ctx.project
        index = self._build(project)
        for cls, persistence in index.persisted.values():
            rekicks = index.rekicks.get(id(cls)) or index.untyped
            if not rekicks:
                continue
            methods = [m for m in crewai.flow_methods(cls, project) if m.module is ctx.module]
            for fn in methods:
                yield from self._method_findings(ctx, cls, persistence, fn, rekicks[0])

    def _method_findings(
        self,
        ctx: RuleContext,
        cls: ClassInfo,
        persistence: crewai.Persistence,
        fn: FunctionInfo,
        rekick: tuple[CallInfo, ModuleFacts],
    ) -> Iterable[Finding]:
        kick, kick_module = rekick
        class_level = persistence.class_level is not None
        for call in fn.calls:
            effect = ctx.effect_reached(call)
            if effect is None:
                continue
            if class_level and guarded_by_state(call, fn, ctx.module):
                continue
            via = f" (via {ctx.describe_call(call.node)})" if effect.via_helper else ""
            more, flow = ctx.reached_related(effect, f"the {effect.hit.kind} effect {effect.hit.label}")
            if persistence.class_level is not None:
                how = (
                    f"{cls.name} is @persist'ed at class level: a kickoff with its persisted id reloads the state and then "
                    f"runs every method again from @start"
                )
                decorator = persistence.class_level
            else:
                how = (
                    f"{cls.name} is @persist'ed per method, which never reloads state: a kickoff with its persisted id "
                    f"re-runs the whole flow on fresh state"
                )
                decorator = next(iter(persistence.method_level.values()))
            related = [
                Related(ctx.span(kick.node, kick_module), "re-kicked here with a persisted id"),
                Related(ctx.span(decorator, persistence.modules.get(id(decorator), cls.module)), "@persist"),
                *more,
            ]
            yield ctx.finding(
                call.node,
                f"{effect.hit.label}{via} in flow method '{fn.name}' fires again when the flow is resumed ({effect.hit.repeat}). {how} "
                f"(measured on crewai 1.15.30: state 11 -> 22, every effect twice).",
                related=related,
                flows=(flow,) if effect.via_helper else (),
            )
