"""RA602: pydantic-graph 1.x ``FileStatePersistence`` used to resume runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, AbstractSet, Iterable

import libcst as cst

from resume_audit.facts.model import ClassInfo, FunctionInfo, ModuleFacts
from resume_audit.findings import Finding, Related, Severity
from resume_audit.frameworks.classes import named_class, project_bases
from resume_audit.frameworks.pydantic_graph import names as pg
from resume_audit.rules.base import Example, Rule, RuleContext

if TYPE_CHECKING:
    from resume_audit.analysis.project import Project


def _method(call: cst.Call, names: AbstractSet[str]) -> bool:
    return isinstance(call.func, cst.Attribute) and call.func.attr.value in names


class FileStatePersistenceResume(Rule):
    id = "RA602"
    confirmed_by = ("RA703", "RA708")
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
    no_autofix = """
pydantic-graph refuses to restore a snapshot left mid-node; the repair is
making the node restartable (idempotent effects), which is program-specific.
"""
    not_flagged = """
- `FileStatePersistence` used only to record a run (traced to `graph.run(..., persistence=p)` / `load_all()` and never to `iter_from_persistence` / `load_next`; an untraceable one counts when the project resumes anywhere): nothing is resumed;
- in-memory `SimpleStatePersistence` / `FullStatePersistence` (not a resume-after-restart mechanism);
- subclasses that override `load_next` (they decide what is restorable), and persistences the code re-seeds itself with `persistence.snapshot_node(...)`;
- a project class that happens to be called `FileStatePersistence`.
"""

    INVALID = (
        Example(
            """
            from pathlib import Path

            from pydantic_graph.persistence.file import FileStatePersistence

            STORES = {}

            def open_run(run_id):
                STORES[run_id] = FileStatePersistence(Path(f"{run_id}.json"))  # expect: RA602

            async def resume(graph, run_id):
                async with graph.iter_from_persistence(STORES[run_id]) as run:
                    async for _ in run:
                        pass
            """,
            note="The persistence goes into a registry the rule does not follow; the project resumes from persistence elsewhere.",
        ),
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

    def _project_resume(self, project: Project) -> tuple[cst.Call, ModuleFacts] | None:
        """The first resume-from-persistence call anywhere in the project (for untraceable persistences)."""

        def first_resume() -> tuple[cst.Call, ModuleFacts] | None:
            for module in project.modules_mentioning([pg.ITER_FROM_PERSISTENCE]):
                for info in module.all_calls:
                    if _method(info.node, {pg.ITER_FROM_PERSISTENCE}):
                        return (info.node, module)
            return None

        return project.cached(self.id, "resume", first_resume)

    def _project_subclasses(self, project: Project) -> bool:
        """Does any project class extend FileStatePersistence (cached per project)?"""
        return project.cached(
            self.id,
            "subclasses",
            lambda: any(
                pg.is_file_persistence_subclass(c, project)
                for m in project.modules_using(pg.PACKAGES)
                for c in m.classes
            ),
        )

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        if not ctx.module.uses_any(pg.PACKAGES) and not self._project_subclasses(ctx.project):
            return
        subclasses = self._project_subclasses(ctx.project)
        project = ctx.project
        resolver = ctx.resolver
        for info in ctx.module.all_calls:
            names = resolver.call_names(info.node, info.function)
            what = None
            if names & pg.FILE_STATE_PERSISTENCE:
                what = "FileStatePersistence"
            elif subclasses:
                cls = named_class(info.node.func, info.function, ctx.module, project)
                if (
                    cls is not None
                    and pg.is_file_persistence_subclass(cls, project)
                    and not _overrides_load_next(cls, project)
                ):
                    what = f"{cls.name} (a FileStatePersistence that keeps its load_next)"
            if what is None:
                continue
            uses = _uses(info.node, info.function, ctx.module, project, 0)
            resumes = sorted(
                ((c, m) for c, m, kind in uses if kind == "resume"),
                key=lambda cm: not _method(cm[0], {pg.ITER_FROM_PERSISTENCE}),
            )
            resume: tuple[cst.Call, ModuleFacts] | None = resumes[0] if resumes else None
            if any(kind == "reseed" for _, _, kind in uses):
                continue
            if resume is None:
                if uses:
                    continue  # traced: used to run and record, never resumed from
                resume = self._project_resume(project)
                if resume is None:
                    continue
            call, where = resume
            yield ctx.finding(
                info.node,
                f"{what} is resumed with {where.code(call.func).rpartition('.')[2]}(): after a crash inside a node "
                f"its snapshot stays 'running'/'error', load_next() only restores 'created' snapshots, and the resume "
                f"fails with GraphRuntimeError('Unable to restore snapshot from state persistence') -- the run never "
                f"completes. pydantic-graph 2.x removes this persistence module.",
                related=(Related(ctx.span(call, where), "the run is resumed from persistence here"),),
            )


def _uses(
    node: cst.CSTNode, scope: FunctionInfo | None, module: ModuleFacts, project: Project, depth: int
) -> list[tuple[cst.Call, ModuleFacts, str]]:
    """Where a persistence value goes: ("resume", call) for ``iter_from_persistence(p)`` /
    ``p.load_next()``, ("reseed", call) for ``p.snapshot_node(...)``, ("other", call) for any other
    call it is passed to -- inline, through a variable, or returned from a project helper."""
    if depth > 4:
        return []
    out: list[tuple[cst.Call, ModuleFacts, str]] = []
    parent = module.parent(node)
    if isinstance(parent, cst.Arg):
        user = module.parent(parent)
        if isinstance(user, cst.Call):
            kind = "resume" if _method(user, {pg.ITER_FROM_PERSISTENCE}) else "other"
            out.append((user, module, kind))
        return out
    if isinstance(parent, cst.Attribute) and parent.value is node:
        user = module.parent(parent)
        if isinstance(user, cst.Call):
            out.append((user, module, _receiver_kind(user)))
        return out
    var = None
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
        var = parent.targets[0].target.value
    elif isinstance(parent, cst.WithItem) and parent.asname is not None and isinstance(parent.asname.name, cst.Name):
        var = parent.asname.name.value
    if var is not None:
        calls = scope.calls if scope is not None else module.module_calls
        for info in calls:
            f = info.node.func
            if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.value.value == var:
                out.append((info.node, module, _receiver_kind(info.node)))
                continue
            for arg in info.node.args:
                if isinstance(arg.value, cst.Name) and arg.value.value == var:
                    kind = "resume" if _method(info.node, {pg.ITER_FROM_PERSISTENCE}) else "other"
                    out.append((info.node, module, kind))
        returned = scope is not None and any(
            isinstance(r.value, cst.Name) and r.value.value == var for r in scope.returns
        )
        if scope is not None and returned:
            out.extend(_call_sites_uses(scope, project, depth))
        return out
    if isinstance(parent, cst.Return) and scope is not None:
        out.extend(_call_sites_uses(scope, project, depth))
    return out


def _receiver_kind(call: cst.Call) -> str:
    if _method(call, {pg.LOAD_NEXT}):
        return "resume"
    if _method(call, pg.RESEED_METHODS):
        return "reseed"
    return "other"


def _call_sites_uses(fn: FunctionInfo, project: Project, depth: int) -> list[tuple[cst.Call, ModuleFacts, str]]:
    """Uses of the value a helper returns, at every project call site of the helper."""
    out: list[tuple[cst.Call, ModuleFacts, str]] = []
    for module in project.modules_mentioning([fn.name]):
        resolver = project.resolver(module)
        for info in module.all_calls:
            if fn.full_name in resolver.call_names(info.node, info.function):
                out.extend(_uses(info.node, info.function, module, project, depth + 1))
    return out


def _overrides_load_next(cls: ClassInfo, project: Project) -> bool:
    for klass in project_bases(cls, project):
        if pg.LOAD_NEXT in klass.methods:
            return True
    return False
