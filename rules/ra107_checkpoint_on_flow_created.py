"""RA107: a CrewAI ``CheckpointConfig`` whose ``on_events`` includes ``"flow_created"`` or ``"*"``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Iterator

import libcst as cst

from resume_audit.facts.model import CallInfo, ClassInfo, FunctionInfo, ModuleFacts
from resume_audit.findings import Autofix, Finding, Related, Severity
from resume_audit.frameworks.classes import extends, instance_class, named_class
from resume_audit.frameworks.crewai import names as crewai
from resume_audit.rules.base import Example, FixExample, Rule, RuleContext

if TYPE_CHECKING:
    from resume_audit.analysis.project import Project


def config_calls(ctx: RuleContext) -> Iterator[CallInfo]:
    """Every ``CheckpointConfig(...)`` (or ``CheckpointConfig.model_validate({...})``) in the module."""
    resolver = ctx.resolver
    for info in ctx.module.all_calls:
        names = resolver.call_names(info.node, info.function)
        if names & crewai.CHECKPOINT_CONFIG:
            yield info
            continue
        f = info.node.func
        if isinstance(f, cst.Attribute) and f.attr.value == "model_validate":
            if resolver.names(f.value, info.function) & crewai.CHECKPOINT_CONFIG:
                yield info


def _owner_kind(cls_names: set[str], cls: ClassInfo | None, project: Project) -> str | None:
    """ "flow" / "crew" for the class a config is attached to, else None."""
    if cls_names & crewai.FLOW or (cls is not None and crewai.is_flow_class(cls, project)):
        return "flow"
    if cls_names & (crewai.CREW | crewai.AGENT) or (
        cls is not None and extends(cls, crewai.CREW | crewai.AGENT, project)
    ):
        return "crew"
    return None


def config_consumers(call: cst.Call, scope: FunctionInfo | None, module: ModuleFacts, project: Project) -> set[str]:
    """Who receives this config: ``{"flow"}``, ``{"crew"}``, both, or empty when unknown.

    Followed: the config passed inline (``MyFlow(checkpoint=CheckpointConfig(...))``,
    ``Crew(..., checkpoint=...)``, ``kickoff(from_checkpoint=...)``,
    ``MyFlow.from_checkpoint(cfg)``), bound to a variable then passed in the
    same scope, or assigned in a class body (``checkpoint = CheckpointConfig(...)``).
    """
    targets: list[cst.CSTNode] = [call]
    parent = module.parent(call)
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
        tgt = parent.targets[0].target
        if isinstance(tgt, cst.Name):
            # class body: `checkpoint = CheckpointConfig(...)` in a Flow subclass
            for owner in module.classes:
                if any(b.value is call for b in owner.body_bindings):
                    kind = _owner_kind(set(), owner, project)
                    return {kind} if kind else set()
            calls = scope.calls if scope is not None else module.module_calls
            for info in calls:
                for arg in info.node.args:
                    if isinstance(arg.value, cst.Name) and arg.value.value == tgt.value:
                        targets.append(arg.value)
    kinds: set[str] = set()
    resolver = project.resolver(module)
    for node in targets:
        parent = module.parent(node)
        if not isinstance(parent, cst.Arg):
            continue
        arg = parent
        user = module.parent(arg)
        if not isinstance(user, cst.Call):
            continue
        kw = arg.keyword.value if arg.keyword is not None else None
        f = user.func
        if kw == "checkpoint":
            cls = named_class(f, scope, module, project)
            kind = _owner_kind(resolver.names(f, scope), cls, project)
        elif kw == "from_checkpoint" and isinstance(f, cst.Attribute):
            cls = instance_class(f.value, scope, module, project)
            kind = _owner_kind(resolver.names(f.value, scope), cls, project)
        elif kw is None and isinstance(f, cst.Attribute) and f.attr.value in crewai.RESTORE_CLASSMETHODS:
            cls = named_class(f.value, scope, module, project)
            kind = _owner_kind(resolver.names(f.value, scope), cls, project)
        else:
            kind = None
        if kind:
            kinds.add(kind)
    return kinds


class CheckpointOnFlowCreated(Rule):
    id = "RA107"
    confirmed_by = ("RA708",)
    name = "checkpoint-on-flow-created"
    properties = ("EO", "PC")
    severity = Severity.ERROR
    frameworks = ("crewai",)
    summary = 'CrewAI CheckpointConfig(on_events=...) includes "flow_created" or "*": every restore silently starts the flow from scratch.'
    description = """
A CrewAI `CheckpointConfig` used by a Flow lists `"flow_created"` (or the
wildcard `"*"`) in `on_events` -- inline, through a list built in a
variable or a settings module, a `**options` dict, or a later
`cfg.on_events = [...]`.
"""
    runtime = """
`Flow.from_checkpoint(CheckpointConfig(restore_from=path))` (and
`kickoff(from_checkpoint=...)`, `Flow.fork`, `crewai checkpoint resume`)
rebuilds the flow object, and constructing a flow emits `flow_created`
(`crewai/flow/runtime/__init__.py`, `_flow_post_init`). With that event in
`on_events` the checkpoint listener writes a checkpoint of the *fresh*
flow at that moment, and the restored run proceeds from it: completed
methods run again while the final state looks right. Measured on crewai
1.15.30 (and 1.15.2): method s1 completes and is checkpointed, s2 raises,
restore + `kickoff()` -- with `on_events=["method_execution_finished"]`
s1 runs once; with `["flow_created", "method_execution_finished"]` or
`["*"]` s1 runs twice while the state counter still reads 11. If s1
charges a card the card is charged twice and nothing in the flow's state
shows it. CrewAI's docs promise restore resumes "without re-running
completed work".
"""
    fix = """
Drop `"flow_created"` and `"*"` from `on_events` and list the events that
mark progress, e.g. `CheckpointConfig(on_events=["method_execution_finished"])`
(plus `"task_completed"` if the flow's crews should checkpoint mid-crew).
"""
    not_flagged = """
- configs whose `on_events` lists neither `"flow_created"` nor `"*"` (the default `["task_completed"]` is RA604's concern on flows);
- configs passed only to a `Crew(...)` / `Agent(...)` (or a crew's `kickoff`/`from_checkpoint`): crews emit no `flow_created`, and a crew restore was not measured to clobber its state;
- `on_events` values that cannot be read statically (built at runtime from input): unknown, not assumed.
"""

    INVALID = (
        Example(
            """
            from crewai import CheckpointConfig
            from crewai.flow.flow import Flow, listen, start

            class Billing(Flow):
                @start()
                def charge(self):
                    return "charged"

                @listen(charge)
                def ship(self, _):
                    return "shipped"

            flow = Billing(checkpoint=CheckpointConfig(on_events=["flow_created", "method_execution_finished"]))  # expect: RA107
            flow.kickoff()
            """,
            note="Inline config on the flow's constructor.",
        ),
        Example(
            """
            from crewai.flow import Flow, start
            from crewai.state import CheckpointConfig as CC

            EVENTS = ["*"]

            class Digest(Flow):
                @start()
                def send(self):
                    return "sent"

            async def resume(path):
                restore = CC(restore_from=path, on_events=EVENTS)  # expect: RA107
                return await Digest().kickoff_async(from_checkpoint=restore)
            """,
            note="Aliased import, the events list in a module constant, async kickoff.",
        ),
        Example(
            {
                "app/settings.py": """
                    CHECKPOINT_EVENTS = ("flow_created", "method_execution_finished")
                    """,
                "app/flows.py": """
                    from crewai import CheckpointConfig, Flow
                    from crewai.flow.flow import start
                    from .settings import CHECKPOINT_EVENTS

                    class Onboard(Flow):
                        @start()
                        def create_account(self):
                            return 1

                    def checkpointing():
                        opts = {"location": "./.checkpoints", "on_events": list(CHECKPOINT_EVENTS)}  # expect: RA107
                        return CheckpointConfig(**opts)

                    def run():
                        return Onboard(checkpoint=checkpointing()).kickoff()
                    """,
                "app/__init__.py": "",
            },
            note="The events come from a settings module through a `**options` dict built in a helper.",
        ),
    )
    VALID = (
        Example(
            """
            from crewai import CheckpointConfig
            from crewai.flow.flow import Flow, listen, start

            class Billing(Flow):
                @start()
                def charge(self):
                    return "charged"

                @listen(charge)
                def ship(self, _):
                    return "shipped"

            Billing(checkpoint=CheckpointConfig(on_events=["method_execution_finished"])).kickoff()
            """,
            note="Checkpoints after each method; a restore resumes after the last completed one.",
        ),
        Example(
            """
            from crewai import Agent, CheckpointConfig, Crew, Task

            def research_crew(llm):
                analyst = Agent(role="analyst", goal="summarise", backstory="...", llm=llm)
                task = Task(description="summarise the filings", expected_output="a summary", agent=analyst)
                return Crew(agents=[analyst], tasks=[task], checkpoint=CheckpointConfig(on_events=["*"]))
            """,
            note="A crew's config: crews emit no flow_created.",
        ),
        Example(
            """
            from crewai.flow.flow import Flow, start

            class CheckpointConfig:
                def __init__(self, on_events):
                    self.on_events = on_events

            class Report(Flow):
                @start()
                def build(self):
                    return CheckpointConfig(on_events=["*"])
            """,
            note="A project class that happens to be called CheckpointConfig is not CrewAI's.",
        ),
    )

    FIXES = (
        FixExample(
            """
            from crewai import CheckpointConfig
            from crewai.flow.flow import Flow, listen, start

            class Billing(Flow):
                @start()
                def charge(self):
                    return "charged"

                @listen(charge)
                def ship(self, _):
                    return "shipped"

            config = CheckpointConfig(
                location="./.checkpoints",
                on_events=[
                    "method_execution_finished",  # after every step
                    "flow_created",  # so a new run has a file at once
                ],
            )
            Billing(checkpoint=config).kickoff()
            """,
            """
            from crewai import CheckpointConfig
            from crewai.flow.flow import Flow, listen, start

            class Billing(Flow):
                @start()
                def charge(self):
                    return "charged"

                @listen(charge)
                def ship(self, _):
                    return "shipped"

            config = CheckpointConfig(
                location="./.checkpoints",
                on_events=[
                    "method_execution_finished",  # after every step
                ],
            )
            Billing(checkpoint=config).kickoff()
            """,
            note='Only the "flow_created" entry goes; the other entry keeps its comment.',
        ),
        FixExample(
            """
            from crewai import CheckpointConfig
            from crewai.flow.flow import Flow, start

            class Intake(Flow):
                @start()
                def register(self):
                    return "registered"

            Intake(checkpoint=CheckpointConfig(on_events=("*",))).kickoff()
            """,
            """
            from crewai import CheckpointConfig
            from crewai.flow.flow import Flow, start

            class Intake(Flow):
                @start()
                def register(self):
                    return "registered"

            Intake(checkpoint=CheckpointConfig(on_events=("method_execution_finished",))).kickoff()
            """,
            note='"*" also checkpointed on every other event: fewer checkpoint files is visible, so the fix is unsafe.',
            unsafe=True,
        ),
    )

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        if not ctx.module.uses_any(crewai.PACKAGES):
            return
        project = ctx.project
        for info in config_calls(ctx):
            ev = crewai.on_events(info.node, info.function, ctx.module, project)
            if not ev.explicit or ev.events is None:
                continue
            bad = sorted(ev.events & crewai.RESTORE_CLOBBERING_EVENTS)
            if not bad:
                continue
            consumers = config_consumers(info.node, info.function, ctx.module, project)
            if consumers and consumers <= {"crew"}:
                continue
            which = " and ".join(f'"{b}"' for b in bad)
            related = [Related(ctx.span(info.node), "the CheckpointConfig this configures")]
            yield ctx.finding(
                ev.node,
                f"on_events includes {which}. Restoring this flow from a checkpoint constructs it, which fires "
                f"flow_created; the checkpoint listener then saves the fresh flow over the restored progress, so "
                f"every restore silently starts from scratch and re-runs completed methods and their effects "
                f"(measured on crewai 1.15.30: a completed method fires twice while the final state looks correct).",
                related=related,
                autofix=_without_clobbering_events(ctx, ev),
            )


def _close(node: cst.List | cst.Tuple, kept: list[cst.BaseElement]) -> dict[str, Any]:
    """Changes that close the list after its last kept element when the elements after it were
    removed: no comma on one line (``["a", "b"]`` -> ``["a"]``); across lines the kept element's
    own comment stays on its line and the bracket keeps its indentation."""
    last, original_last = kept[-1], node.elements[-1]
    if last is original_last or not isinstance(last, cst.Element) or not isinstance(last.comma, cst.Comma):
        return {}
    trailing = isinstance(original_last, cst.Element) and isinstance(original_last.comma, cst.Comma)
    own = last.comma.whitespace_after
    if (
        isinstance(node, cst.List)
        and isinstance(own, cst.ParenthesizedWhitespace)
        and isinstance(node.rbracket.whitespace_before, cst.ParenthesizedWhitespace)
    ):
        comma = (
            last.comma.with_changes(whitespace_after=cst.SimpleWhitespace(""))
            if trailing
            else cst.MaybeSentinel.DEFAULT
        )
        bracket = node.rbracket.with_changes(
            whitespace_before=own.with_changes(last_line=node.rbracket.whitespace_before.last_line)
        )
        return {"elements": [*kept[:-1], last.with_changes(comma=comma)], "rbracket": bracket}
    if trailing or (isinstance(node, cst.Tuple) and len(kept) == 1):
        return {"elements": [*kept[:-1], last.with_changes(comma=cst.Comma())]}
    return {"elements": [*kept[:-1], last.with_changes(comma=cst.MaybeSentinel.DEFAULT)]}


def _without_clobbering_events(ctx: RuleContext, ev: crewai.OnEvents) -> Autofix | None:
    """An ``on_events`` list or tuple literal of strings, rewritten through LibCST without
    ``"flow_created"``, and with ``"*"`` replaced by the progress event (or the progress event alone
    if nothing else is left). Removing ``flow_created`` changes nothing else: safe. Replacing ``"*"``
    drops the checkpoints the other events wrote: the user sees fewer files, so unsafe."""
    node = ev.node
    if not isinstance(node, (cst.List, cst.Tuple)):
        return None
    names = []
    for el in node.elements:
        if not isinstance(el, cst.Element) or not isinstance(el.value, cst.SimpleString):
            return None
        names.append(el.value.evaluated_value)
    star = "*" in names
    kept: list[cst.BaseElement] = []
    for el, name in zip(node.elements, names):
        if name == "flow_created" or (name == "*" and crewai.PROGRESS_EVENT in names):
            continue
        kept.append(el.with_changes(value=cst.SimpleString(f'"{crewai.PROGRESS_EVENT}"')) if name == "*" else el)
    if not kept:
        kept = [cst.Element(cst.SimpleString(f'"{crewai.PROGRESS_EVENT}"'))]
    changes: dict[str, Any] = {"elements": kept, **_close(node, kept)}
    # positions leave out the parentheses around an expression: render it without them too
    code = ev.module.tree.code_for_node(node.with_changes(**changes, lpar=[], rpar=[]))
    what = '"*" becomes "method_execution_finished"' if star else 'drop "flow_created"'
    return ctx.autofix(
        f"on_events: {what}; a restore then resumes instead of starting over",
        ctx.replace(node, code, ev.module),
        unsafe=star,
    )
