"""RA602: pydantic-graph 1.x ``FileStatePersistence`` used to resume runs."""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from auditor.analysis.facts import CallInfo, ClassInfo, ModuleFacts
from auditor.findings import Finding, Related, Severity
from auditor.frameworks import pydantic_graph as pg
from auditor.frameworks.classes import named_class, project_bases

from .base import Example, Rule, RuleContext


def _method(call: cst.Call, names) -> bool:
    return isinstance(call.func, cst.Attribute) and call.func.attr.value in names


class FileStatePersistenceResume(Rule):
    id = "RA602"
    name = "file-state-persistence-resume"
    properties = ("LV",)
    severity = Severity.WARNING
    frameworks = ("pydantic-graph",)
    summary = "pydantic-graph FileStatePersistence resume: a crash inside a node leaves a snapshot the framework refuses to restore."
    description = """
A project constructs pydantic-graph 1.x `FileStatePersistence` (or a
subclass that keeps its `load_next`) and resumes runs from persistence
with `graph.iter_from_persistence(...)` (or reads `load_next()` itself).
"""
    runtime = """
Before a node runs, pydantic-graph marks its snapshot `running`
(`record_run`), and `error` if the node raises. `FileStatePersistence.load_next()`
only returns snapshots in status `created` (persistence/file.py), so after
a crash *inside* a node -- an exception, or SIGKILL mid-node -- there is
nothing to load and `iter_from_persistence` raises
`GraphRuntimeError: Unable to restore snapshot from state persistence`
(graph.py). Measured on pydantic-graph 1.107.10 (and 1.107.1): a kill while
parked between nodes restores and completes exactly once, a kill inside
the second node leaves the run unrestorable -- no effect is duplicated
because nothing resumes at all. A crash in a long-running agent step
usually lands inside a node. pydantic-graph 2.x (2.68.0) removes
`pydantic_graph.persistence` altogether, so this code also breaks on
upgrade.
"""
    fix = """
Recover a crashed run explicitly: read `await persistence.load_all()`,
take the last `NodeSnapshot` whose status is `running`/`error`, and
re-seed it with `await persistence.snapshot_node(snapshot.state,
snapshot.node)` (its effects must then be idempotent), or subclass
`FileStatePersistence` with a `load_next` that also returns those
snapshots. For new code, pin `pydantic-graph<2` knowingly or move to a
durable-execution backend (pydantic-ai's Temporal/DBOS integrations), since
2.x has no persistence module.
"""
    not_flagged = """
- `FileStatePersistence` used only to record a run (no `iter_from_persistence` / `load_next` anywhere in the project): nothing is resumed;
- in-memory `SimpleStatePersistence` / `FullStatePersistence` (not a resume-after-restart mechanism);
- subclasses that override `load_next` (they decide what is restorable), and projects that re-seed snapshots themselves with `snapshot_node(...)`;
- a project class that happens to be called `FileStatePersistence`.
"""

    INVALID = (
        Example(
            """
            from pathlib import Path
            from pydantic_graph import End
            from pydantic_graph.persistence.file import FileStatePersistence

            async def resume_or_start(graph, run_id, first_node):
                persistence = FileStatePersistence(Path(f"runs/{run_id}.json"))  # expect: RA602
                persistence.set_graph_types(graph)
                if await persistence.load_next() is None:
                    await graph.initialize(first_node, persistence)
                async with graph.iter_from_persistence(persistence) as run:
                    node = await run.next()
                    while not isinstance(node, End):
                        node = await run.next()
                return node.data
            """,
            note="The documented human-in-the-loop resume shape.",
        ),
        Example(
            {
                "agent/store.py": """
                    from pathlib import Path
                    import pydantic_graph.persistence.file as pgfile

                    def persistence_for(run_id):
                        return pgfile.FileStatePersistence(Path("state") / f"{run_id}.json")  # expect: RA602
                    """,
                "agent/runner.py": """
                    from .store import persistence_for

                    async def resume(graph, run_id):
                        async with graph.iter_from_persistence(persistence_for(run_id)) as run:
                            async for _ in run:
                                pass
                    """,
                "agent/__init__.py": "",
            },
            note="Module alias; the persistence is built in one module and resumed in another.",
        ),
        Example(
            """
            from pathlib import Path
            from pydantic_graph.persistence.file import FileStatePersistence

            class AuditedPersistence(FileStatePersistence):
                async def snapshot_end(self, state, end):
                    print("run finished")
                    await super().snapshot_end(state, end)

            async def resume(graph, path: Path):
                p = AuditedPersistence(path)  # expect: RA602
                async with graph.iter_from_persistence(p) as run:
                    async for _ in run:
                        pass
            """,
            note="A subclass that keeps FileStatePersistence.load_next.",
        ),
    )
    VALID = (
        Example(
            """
            from pathlib import Path
            from pydantic_graph.persistence.file import FileStatePersistence

            async def run_and_record(graph, start, path: Path):
                persistence = FileStatePersistence(path)
                result = await graph.run(start, persistence=persistence)
                return result.output, await persistence.load_all()
            """,
            note="Persistence as a run log: nothing is ever resumed from it.",
        ),
        Example(
            """
            from pydantic_graph.persistence.in_mem import FullStatePersistence

            async def run(graph, start):
                persistence = FullStatePersistence()
                async with graph.iter(start, persistence=persistence) as run:
                    async for _ in run:
                        pass
                async with graph.iter_from_persistence(persistence) as again:
                    return again
            """,
            note="In-memory persistence: not a file snapshot.",
        ),
        Example(
            """
            from pathlib import Path
            from pydantic_graph.persistence import NodeSnapshot
            from pydantic_graph.persistence.file import FileStatePersistence

            class RecoveringPersistence(FileStatePersistence):
                async def load_next(self):
                    for snapshot in await self.load_all():
                        if isinstance(snapshot, NodeSnapshot) and snapshot.status in ("created", "running", "error"):
                            snapshot.status = "pending"
                            return snapshot
                    return None

            async def resume(graph, path: Path):
                async with graph.iter_from_persistence(RecoveringPersistence(path)) as run:
                    async for _ in run:
                        pass
            """,
            note="load_next overridden to pick up a snapshot a crash left running.",
        ),
    )

    def __init__(self) -> None:
        self._resumes: tuple[int, tuple[CallInfo, ModuleFacts] | None, bool] | None = None

    def _project_resumes(self, project):
        """The first resume-from-persistence call in the project, and whether the project re-seeds snapshots."""
        if self._resumes is not None and self._resumes[0] == id(project):
            return self._resumes[1], self._resumes[2]
        first = None
        reseeds = False
        for module in project.modules:
            for info in module.all_calls:
                if _method(info.node, {pg.ITER_FROM_PERSISTENCE}) and (first is None or not first[2]):
                    first = (info, module, True)
                elif first is None and _method(info.node, {pg.LOAD_NEXT}) and not _in_persistence_class(info, project):
                    first = (info, module, False)
                if _method(info.node, pg.RESEED_METHODS) and not _in_persistence_class(info, project):
                    reseeds = True
        first = first[:2] if first is not None else None
        self._resumes = (id(project), first, reseeds)
        return first, reseeds

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        if not ctx.module.uses_any(pg.PACKAGES) and not _module_mentions_subclass(ctx):
            return
        project = ctx.project
        first, reseeds = self._project_resumes(project)
        if first is None or reseeds:
            return
        resolver = ctx.resolver
        for info in ctx.module.all_calls:
            names = resolver.call_names(info.node, info.function)
            what = None
            if names & pg.FILE_STATE_PERSISTENCE:
                what = "FileStatePersistence"
            else:
                cls = named_class(info.node.func, info.function, ctx.module, project)
                if cls is not None and pg.is_file_persistence_subclass(cls, project) and not _overrides_load_next(cls, project):
                    what = f"{cls.name} (a FileStatePersistence that keeps its load_next)"
            if what is None:
                continue
            call, where = first
            yield ctx.finding(
                info.node,
                f"{what} is resumed with {where.code(call.node.func).rpartition('.')[2]}(): after a crash inside a node "
                f"its snapshot stays 'running'/'error', load_next() only restores 'created' snapshots, and the resume "
                f"fails with GraphRuntimeError('Unable to restore snapshot from state persistence') -- the run never "
                f"completes. pydantic-graph 2.x removes this persistence module.",
                related=(Related(ctx.span(call.node, where), "the run is resumed from persistence here"),),
            )


def _overrides_load_next(cls: ClassInfo, project) -> bool:
    for klass in project_bases(cls, project):
        if pg.LOAD_NEXT in klass.methods:
            return True
    return False


def _in_persistence_class(info: CallInfo, project) -> bool:
    fn = info.function
    while fn is not None and fn.parent is not None:
        fn = fn.parent
    return fn is not None and fn.class_info is not None and pg.is_file_persistence_subclass(fn.class_info, project)


def _module_mentions_subclass(ctx: RuleContext) -> bool:
    """A module constructing a project subclass need not import pydantic_graph itself."""
    return any(m.uses_any(pg.PACKAGES) for m in ctx.project.modules)
