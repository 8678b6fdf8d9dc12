"""RA604: ``checkpoint=True`` / ``CheckpointConfig()`` on a CrewAI Flow: the default trigger never fires for it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable

import libcst as cst

from resume_audit.facts.model import CallInfo, ClassInfo, FunctionInfo, ModuleFacts
from resume_audit.facts.syntax import bool_value, is_none, keyword
from resume_audit.findings import Autofix, Finding, Related, Severity
from resume_audit.fixes.source_edits import import_edit
from resume_audit.frameworks.classes import extends, named_class
from resume_audit.frameworks.crewai import names as crewai
from resume_audit.rules.base import Example, FixExample, Rule, RuleContext

if TYPE_CHECKING:
    from resume_audit.analysis.project import Project


#: where a flow's checkpoint config is: the ``CheckpointConfig(...)`` call, its module, and its
#: ``on_events`` value when given (None: left to the default)
_Where = tuple[cst.Call, ModuleFacts, "cst.CSTNode | None"]


def _crew_checkpoint_classifier(project: Project) -> Callable[[CallInfo, ModuleFacts], CallInfo | None]:
    """Classifier for ``project.reach``: a ``Crew(...)``/``Agent(...)`` built with its own checkpoint config."""
    targets = crewai.CREW | crewai.AGENT

    def classify(call: CallInfo, module: ModuleFacts) -> CallInfo | None:
        node = call.node
        names = project.resolver(module).call_names(node, call.function)
        if not names & targets:
            cls = named_class(node.func, call.function, module, project)
            if cls is None or not extends(cls, targets, project):
                return None
        arg = keyword(node, "checkpoint")
        if arg is None or is_none(arg.value) or bool_value(arg.value) is False:
            return None
        return call

    return classify


class FlowCheckpointNeverWritten(Rule):
    id = "RA604"
    confirmed_by = ("RA708",)
    name = "flow-checkpoint-never-written"
    properties = ("LV",)
    severity = Severity.WARNING
    frameworks = ("crewai",)
    summary = "checkpoint=True / CheckpointConfig() on a CrewAI Flow: the default trigger (task_completed) never checkpoints the flow."
    description = """
A CrewAI `Flow` is given `checkpoint=True`, `checkpoint=CheckpointConfig()`
or a config whose `on_events` lists only crew/task/agent events -- on the
constructor, through a config built in a variable or a helper, or as a
class attribute -- and nothing else in the flow writes checkpoints.
"""
    runtime = """
`checkpoint=True` is coerced to `CheckpointConfig()`, whose `on_events`
defaults to `["task_completed"]` (`crewai/state/checkpoint_config.py`).
The checkpoint listener picks the config by the event's *source*
(`crewai/state/checkpoint_listener.py`, `_find_checkpoint`): a flow's own
events (`flow_*`, `method_execution_*`) use `flow.checkpoint`, but a
`task_completed` event comes from the Task and walks Task -> Agent ->
Crew, never reaching the Flow. So the flow's config never fires. Measured
on crewai 1.15.30: a two-method flow with `CheckpointConfig()` writes no
checkpoint, and so does a flow whose `@start` method kicks off a crew
whose task completes (the task event's source is `Task`); with
`on_events=["method_execution_finished"]` the same flow writes one per
method. There is nothing to restore: after a crash, `from_checkpoint`
has no file and the run starts over.
"""
    fix = """
Checkpoint on the flow's own progress events:
`MyFlow(checkpoint=CheckpointConfig(on_events=["method_execution_finished"]))`.
If you rely on crews inside the flow, give those crews their own
`checkpoint=` (their checkpoints include the running flow).
"""
    not_flagged = """
- configs whose `on_events` includes any event the flow itself emits (`method_execution_finished`, `flow_started`, `flow_finished`, ...); `"flow_created"` and `"*"` are RA107's;
- flows whose methods kick off a `Crew`/`Agent` built with its own `checkpoint=` (directly, through a `@CrewBase` class's `crew()` method, or a helper): those checkpoints contain the flow (measured) and can restore it;
- `checkpoint=` on a `Crew` or `Agent` (task events are theirs);
- `checkpoint=False` / `None`, and configs that cannot be evaluated statically.
"""

    INVALID = (
        Example(
            """
            import httpx
            from crewai.flow.flow import Flow, listen, start

            class Refunds(Flow):
                @start()
                def approve(self):
                    return "approved"

                @listen(approve)
                def refund(self, _):
                    httpx.post("https://pay.example.com/refunds", json={"order": 1})

            Refunds(checkpoint=True).kickoff()  # expect: RA604
            """,
            note="checkpoint=True on a flow with no crews.",
        ),
        Example(
            """
            from crewai import CheckpointConfig, Flow
            from crewai.flow import listen, start

            class Pipeline(Flow):
                @start()
                def fetch(self):
                    return [1, 2, 3]

                @listen(fetch)
                def store(self, rows):
                    return len(rows)

            async def run():
                cfg = CheckpointConfig(location="./.checkpoints", on_events=["task_completed", "crew_kickoff_completed"])
                flow = Pipeline(checkpoint=cfg)  # expect: RA604
                return await flow.kickoff_async()
            """,
            note="A config built in a variable lists only crew/task events; async kickoff.",
        ),
        Example(
            {
                "app/crews.py": """
                    from crewai import Agent, Crew, Task

                    def writer_crew(llm):
                        writer = Agent(role="writer", goal="write", backstory="...", llm=llm)
                        return Crew(agents=[writer], tasks=[Task(description="write", expected_output="text", agent=writer)])
                    """,
                "app/flow.py": """
                    from crewai import CheckpointConfig
                    from crewai.flow.flow import Flow, start
                    from .crews import writer_crew

                    class Newsletter(Flow):
                        checkpoint: CheckpointConfig | bool | None = CheckpointConfig()  # expect: RA604

                        @start()
                        def draft(self):
                            return writer_crew(self.state.get("llm")).kickoff().raw
                    """,
                "app/__init__.py": "",
            },
            note="Class attribute; the flow runs a crew, but the crew has no config of its own, so its task events checkpoint nothing.",
        ),
    )
    VALID = (
        Example(
            """
            from crewai import CheckpointConfig
            from crewai.flow.flow import Flow, listen, start

            class Refunds(Flow):
                @start()
                def approve(self):
                    return "approved"

                @listen(approve)
                def refund(self, _):
                    return "refunded"

            Refunds(checkpoint=CheckpointConfig(on_events=["method_execution_finished"])).kickoff()
            """,
            note="Checkpoints on the flow's own method events.",
        ),
        Example(
            {
                "app/crews.py": """
                    from crewai import Agent, Crew, Task
                    from crewai.project import CrewBase, crew

                    @CrewBase
                    class WriterCrew:
                        @crew
                        def crew(self) -> Crew:
                            writer = Agent(role="writer", goal="write", backstory="...")
                            task = Task(description="write", expected_output="text", agent=writer)
                            return Crew(agents=[writer], tasks=[task], checkpoint=True)
                    """,
                "app/flow.py": """
                    from crewai.flow.flow import Flow, start
                    from .crews import WriterCrew

                    class Newsletter(Flow):
                        @start()
                        def draft(self):
                            return WriterCrew().crew().kickoff().raw

                    Newsletter(checkpoint=True).kickoff()
                    """,
                "app/__init__.py": "",
            },
            note="The crew the flow runs checkpoints itself; its checkpoints contain the flow.",
        ),
        Example(
            """
            from crewai import Agent, CheckpointConfig, Crew, Task

            def build(llm):
                analyst = Agent(role="analyst", goal="g", backstory="b", llm=llm)
                task = Task(description="analyse", expected_output="report", agent=analyst)
                return Crew(agents=[analyst], tasks=[task], checkpoint=CheckpointConfig())
            """,
            note="checkpoint= on a Crew: task_completed is the crew's own event.",
        ),
        Example(
            """
            from crewai.flow.flow import Flow, start

            class Draft(Flow):
                @start()
                def write(self):
                    return "draft"

            Draft(checkpoint=False).kickoff()
            """,
            note="Checkpointing explicitly off.",
        ),
    )

    FIXES = (
        FixExample(
            """
            import httpx
            from crewai.flow.flow import Flow, listen, start

            class Refunds(Flow):
                @start()
                def approve(self):
                    return "approved"

                @listen(approve)
                def refund(self, _):
                    httpx.post("https://pay.example.com/refunds", json={"order": 1})

            Refunds(checkpoint=True).kickoff()  # resumable, we hope
            """,
            """
            import httpx
            from crewai.flow.flow import Flow, listen, start
            from crewai import CheckpointConfig

            class Refunds(Flow):
                @start()
                def approve(self):
                    return "approved"

                @listen(approve)
                def refund(self, _):
                    httpx.post("https://pay.example.com/refunds", json={"order": 1})

            Refunds(checkpoint=CheckpointConfig(on_events=["method_execution_finished"])).kickoff()  # resumable, we hope
            """,
            note="checkpoint=True becomes a config that fires; the import is added after the last one.",
        ),
        FixExample(
            """
            from crewai import CheckpointConfig, Flow
            from crewai.flow import listen, start

            class Pipeline(Flow):
                @start()
                def fetch(self):
                    return [1, 2, 3]

                @listen(fetch)
                def store(self, rows):
                    return len(rows)

            config = CheckpointConfig(
                location="./.checkpoints",  # shared volume
                max_checkpoints=5
            )
            Pipeline(checkpoint=config).kickoff()
            """,
            """
            from crewai import CheckpointConfig, Flow
            from crewai.flow import listen, start

            class Pipeline(Flow):
                @start()
                def fetch(self):
                    return [1, 2, 3]

                @listen(fetch)
                def store(self, rows):
                    return len(rows)

            config = CheckpointConfig(
                location="./.checkpoints",  # shared volume
                max_checkpoints=5, on_events=["method_execution_finished"]
            )
            Pipeline(checkpoint=config).kickoff()
            """,
            note="A config left on the default trigger gets on_events; its other arguments and comments stay.",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        if not ctx.module.uses_any(crewai.PACKAGES):
            return
        project = self._project = ctx.project
        resolver = ctx.resolver
        # MyFlow(checkpoint=...)
        for info in ctx.module.all_calls:
            arg = keyword(info.node, "checkpoint")
            if arg is None:
                continue
            names = resolver.call_names(info.node, info.function)
            cls = named_class(info.node.func, info.function, ctx.module, project)
            if not (names & crewai.FLOW or (cls is not None and crewai.is_flow_class(cls, project))):
                continue
            found = self._never_written(arg.value, info.function, ctx.module, cls)
            if found is not None:
                yield self._finding(ctx, arg, cls, found, info.node)
        # class MyFlow(Flow): checkpoint = ...
        for cls in crewai.flow_classes(ctx.module, project):
            for binding in cls.body_bindings:
                if binding.name != "checkpoint" or binding.kind != "assign":
                    continue
                found = self._never_written(binding.value, None, ctx.module, cls)
                if found is not None:
                    yield self._finding(ctx, binding.value, cls, found, cls.node.name)

    def _never_written(
        self, value: cst.BaseExpression, scope: FunctionInfo | None, module: ModuleFacts, cls: ClassInfo | None
    ) -> tuple[frozenset[str], _Where | None] | None:
        """The config node and its events when the flow's checkpoint can never fire, else None."""
        project = self._project
        enabled = crewai.checkpoint_enabled(value)
        if enabled is False:
            return None
        where: _Where | None
        if enabled is True:
            events, where = frozenset(crewai.DEFAULT_ON_EVENTS), None
        else:
            found = crewai.checkpoint_config_call(value, scope, module, project)
            if found is None:
                return None
            call, cscope, cmodule = found
            ev = crewai.on_events(call, cscope, cmodule, project)
            if ev.events is None:
                return None
            events, where = ev.events, (call, cmodule, ev.node if ev.explicit else None)
        if events & crewai.FLOW_SOURCED_EVENTS:
            return None
        if cls is not None and self._runs_checkpointed_crew(cls):
            return None
        return events, where

    def _runs_checkpointed_crew(self, cls: ClassInfo) -> bool:
        project = self._project
        classify = _crew_checkpoint_classifier(project)
        for fn in crewai.flow_methods(cls, project):
            for call in fn.calls:
                if project.reach("crewai-crew-checkpoint", classify, call, fn.module) is not None:
                    return True
        return False

    def _finding(
        self,
        ctx: RuleContext,
        node: cst.CSTNode,
        cls: ClassInfo | None,
        found: tuple[frozenset[str], _Where | None],
        owner: cst.CSTNode,
    ) -> Finding:
        events, where = found
        flow = cls.name if cls is not None else "this flow"
        listed = ", ".join(sorted(events)) or "nothing"
        related = []
        if where is not None:
            call, cmodule, _listed = where
            related.append(Related(ctx.span(call, cmodule), f"the config: on_events = [{listed}]"))
        if cls is not None:
            related.append(
                Related(ctx.span(cls.node.name, cls.module), f"{flow} runs no crew with its own checkpoint config")
            )
        if not related:
            related.append(Related(ctx.span(owner), "the flow this configures"))
        return ctx.finding(
            node,
            f"{flow} checkpoints on [{listed}] only, events the flow never sources: a task_completed event is "
            f"checkpointed with its crew's config (Task -> Agent -> Crew), never the flow's. No checkpoint is ever "
            f"written for {flow}, so after a crash there is nothing to restore and the run starts over.",
            related=related,
            autofix=_progress_config(ctx, node, where),
        )


def _progress_config(ctx: RuleContext, node: cst.CSTNode, where: _Where | None) -> Autofix | None:
    """Make the flow's config fire on the flow's own progress: ``checkpoint=True`` becomes
    ``CheckpointConfig(on_events=["method_execution_finished"])`` (imported from ``crewai`` when the
    module has no name for it), a ``CheckpointConfig(...)`` without ``on_events`` gets that keyword,
    and an ``on_events`` list or tuple of strings gets the event appended. Checkpoints the user
    asked for start being written, nothing else changes: a safe fix."""
    progress = f'"{crewai.PROGRESS_EVENT}"'
    description = 'checkpoint on "method_execution_finished", an event the flow itself sources'
    if where is None:
        value = node.value if isinstance(node, cst.Arg) else node
        local = next(
            (name for name, qualified in ctx.module.imports.items() if qualified in crewai.CHECKPOINT_CONFIG), None
        )
        edits = []
        if local is None:
            local = "CheckpointConfig"
            insert = import_edit(ctx.module, f"from crewai import {local}", local)
            if insert is None:
                return None
            edits.append(insert)
        return ctx.autofix(description, *edits, ctx.replace(value, f"{local}(on_events=[{progress}])"))
    call, cmodule, listed = where
    if not isinstance(call, cst.Call) or any(a.star for a in call.args):
        return None
    if listed is None:  # on_events left to its default
        if any(a.keyword is not None and a.keyword.value == "on_events" for a in call.args):
            return None
        args = list(call.args)
        closing: cst.BaseParenthesizableWhitespace = cst.SimpleWhitespace("")
        if args and args[-1].comma is cst.MaybeSentinel.DEFAULT:
            # the line break before ")" belongs to the last argument: it moves to the new one
            closing = args[-1].whitespace_after_arg
            args[-1] = args[-1].with_changes(
                comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
                whitespace_after_arg=cst.SimpleWhitespace(""),
            )
        added = cst.Arg(
            cst.List([cst.Element(cst.SimpleString(progress))]),
            keyword=cst.Name("on_events"),
            equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
            whitespace_after_arg=closing,
        )
        code = cmodule.tree.code_for_node(call.with_changes(args=[*args, added], lpar=[], rpar=[]))
        return ctx.autofix(description, ctx.replace(call, code, cmodule))
    if not isinstance(listed, (cst.List, cst.Tuple)) or not all(
        isinstance(e, cst.Element) and isinstance(e.value, cst.SimpleString) for e in listed.elements
    ):
        return None
    elements = list(listed.elements)
    if elements and elements[-1].comma is cst.MaybeSentinel.DEFAULT:
        elements[-1] = elements[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    elements.append(cst.Element(cst.SimpleString(progress)))
    code = cmodule.tree.code_for_node(listed.with_changes(elements=elements, lpar=[], rpar=[]))
    return ctx.autofix(description, ctx.replace(listed, code, cmodule))
