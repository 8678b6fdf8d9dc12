"""Which programs in a project the sweep can run, found by reading the code (nothing is imported).

``audit`` sweeps what a user would deploy, without being told where it is. This module is the
framework-neutral half: which framework a file uses (its first framework import), how the program
imports the file and where it runs from, deployment manifests, the order of the report. What a program
looks like is each framework's own knowledge, in ``frameworks/<name>/entrypoints.py`` (a
:class:`Discovery` its registry record names): LangGraph's factories, compiled graphs, ``@entrypoint`` s
and ``langgraph.json``; CrewAI's ``Flow`` subclasses; LlamaIndex's ``Workflow`` subclasses;
pydantic-graph's module-level ``Graph(nodes=...)``.

Files are read as the scan reads them (:class:`~resume_audit.facts.collect.ModuleFacts`, through
:mod:`.modules`), never with a second parser. A candidate that cannot be swept as it stands (a factory
that needs a database URL) is kept, with the reason, so the report can say why its findings were not
exercised. Targets are named ``package.module:attr`` by the module Python imports the file as, and swept from
that module's import root (:mod:`.importroots`), so the program's own imports resolve as they do in production.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Collection, Iterable

from resume_audit.audit.importroots import ImportRoots
from resume_audit.audit.modules import Modules
from resume_audit.audit.syntax import absolute_import_tops, top_level_statements
from resume_audit.discovery.walk import display_path
from resume_audit.frameworks import registry

if TYPE_CHECKING:
    import libcst as cst

    from resume_audit.facts.collect import ModuleFacts

#: parameters a factory may take: the sweep passes its checkpointer by name or position
CHECKPOINTER_PARAMS = ("checkpointer", "saver", "memory", "checkpoint_saver")


@dataclass(frozen=True)
class EntryPoint:
    """One program ``audit`` can sweep (or explain why it cannot)."""

    target: str  # "helpdesk.refunds:build_refund_graph"
    framework: str
    kind: str  # "factory", "compiled graph", "entrypoint", "flow", "workflow", "graph", "deployed graph"
    path: str  # as the report shows paths
    line: int
    #: the folder the sweep runs from (above the top package)
    root: str
    #: non-empty: why it cannot be swept as it stands
    why_not: str = ""
    #: run configuration read off the code, under the user's own (pydantic-graph: ``start``, the first node)
    run_config: tuple[tuple[str, str], ...] = ()

    @property
    def sweepable(self) -> bool:
        return not self.why_not

    @property
    def module(self) -> str:
        return self.target.partition(":")[0]


@dataclass(frozen=True)
class Found:
    """A program a framework's discovery sees in one module, before it is named and placed."""

    attr: str
    kind: str
    line: int
    why_not: str = ""
    run_config: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Discovery:
    """A framework's half of entry-point discovery (``frameworks/<name>/entrypoints.py``)."""

    #: the programs one module of the framework's defines, in statement order
    find: Callable[["ModuleFacts"], list[Found]]
    #: the file name of a deployment manifest that names programs (``langgraph.json``)
    manifest: str | None = None
    #: a manifest -> the (file, attribute) pairs it serves
    deployed: Callable[[Path], list[tuple[Path, str]]] | None = None
    #: the kind a served program is reported as
    deployed_kind: str = "deployed program"


def discovery(framework: str) -> Discovery:
    """The discovery the framework's registry record names."""
    found = registry.load(registry.get(framework).entrypoints)
    if not isinstance(found, Discovery):
        raise TypeError(f"{registry.get(framework).entrypoints} is not a Discovery")
    return found


def discover(files: Iterable[tuple[Path, str]], base: Path | None = None, modules: Modules | None = None) -> list[EntryPoint]:
    """Every entry point in ``files`` ((path, display path) pairs), in file and line order; ``base`` is the
    folder displayed paths are relative to (for the programs a manifest names); ``modules``: the audit's
    parsed modules (parsed here when not given)."""
    base = base or Path.cwd()
    modules = modules or Modules()
    roots = ImportRoots(base.resolve(), modules)
    by_import = registry.by_import_name()
    with_manifest = [(fw.id, d) for fw in registry.frameworks() for d in [discovery(fw.id)] if d.manifest]
    found: list[EntryPoint] = []
    manifests: dict[Path, str] = {}
    for path, display in files:
        facts = modules.facts(path, display)
        if facts is None:
            continue  # the scan reports files it could not read or parse
        imported = absolute_import_tops(facts, by_import)
        framework = next((by_import[top] for top in imported if top in by_import), None)
        if framework is None:
            continue
        placed = roots.place(path, imported)
        module, root = placed.module, str(placed.root)
        found += [EntryPoint(f"{module}:{f.attr}", framework, f.kind, display, f.line, root, f.why_not, f.run_config)
                  for f in discovery(framework).find(facts)]
        for owner, d in with_manifest:
            for folder in (path.parent, *path.parents):
                manifest = folder / str(d.manifest)
                if manifest.is_file():
                    manifests[manifest] = owner
                    break
    known = {(e.root, e.target) for e in found}
    for manifest in sorted(manifests):
        found += [e for e in _manifest_entries(manifest, manifests[manifest], base, modules, roots) if (e.root, e.target) not in known]
    return sorted(found, key=lambda e: (e.path, e.line, e.target))


def _manifest_entries(manifest: Path, framework: str, base: Path, modules: Modules, roots: ImportRoots) -> list[EntryPoint]:
    """The programs a manifest serves (paths shown relative to ``base``)."""
    d = discovery(framework)
    out = []
    for path, attr in d.deployed(manifest) if d.deployed is not None else []:
        facts = modules.facts(path)
        if facts is None:
            continue
        placed = roots.place(path, absolute_import_tops(facts))
        module, root = placed.module, str(placed.root)
        line = next((facts.line(s) for s in top_level_statements(facts) if attr in _defined_names(s)), 1)
        out.append(EntryPoint(f"{module}:{attr}", framework, d.deployed_kind, display_path(path, base), line, root))
    return out


def _defined_names(statement: cst.CSTNode) -> list[str]:
    """The names a module-level assignment, annotated assignment or (plain) ``def`` binds."""
    import libcst as cst

    if isinstance(statement, cst.Assign):
        return [t.target.value for t in statement.targets if isinstance(t.target, cst.Name)]
    if isinstance(statement, cst.AnnAssign):
        return [statement.target.value] if isinstance(statement.target, cst.Name) else []
    if isinstance(statement, cst.FunctionDef) and statement.asynchronous is None:
        return [statement.name.value]
    return []
