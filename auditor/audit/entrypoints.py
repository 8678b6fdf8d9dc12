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

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from resume_audit.audit.callers import calls_of, first_kwargs
from resume_audit.audit.importroots import ImportRoots, Placement
from resume_audit.audit.modules import Modules
from resume_audit.audit.syntax import absolute_import_tops, assigned, top_level_statements
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
    #: keyword arguments the factory is called with: the literal ones the project's own callers pass
    factory_kwargs: tuple[tuple[str, Any], ...] = ()

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
    #: the parameters a factory needs beyond what the sweep passes (the audit looks for callers that pass them)
    needs: tuple[str, ...] = ()


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


def discover(
    files: Iterable[tuple[Path, str]],
    base: Path | None = None,
    modules: Modules | None = None,
    targets: Iterable[str] = (),
) -> list[EntryPoint]:
    """Every entry point in ``files`` ((path, display path) pairs), in file and line order; ``base`` is the
    folder displayed paths are relative to (for the programs a manifest names); ``modules``: the audit's
    parsed modules (parsed here when not given); ``targets``: the entry points the user named
    (``--target``, ``targets = [...]``), swept instead of the ones discovery finds."""
    base = (base or Path.cwd()).resolve()
    modules = modules or Modules()
    roots = ImportRoots(base, modules)
    parsed = [
        (path, display, facts)
        for path, display in files
        for facts in [modules.facts(path, display)]
        if facts is not None
    ]  # the scan reports the others
    frameworks = _frameworks(parsed)
    placed = {
        path.resolve(): roots.place(path, {m.split(".")[0] for m in facts.imported_modules})
        for path, _d, facts in parsed
    }
    named = list(dict.fromkeys(targets))
    if named:
        return [_named(t, parsed, placed, frameworks, base) for t in named]
    with_manifest = [(fw.id, d) for fw in registry.frameworks() for d in [discovery(fw.id)] if d.manifest]
    found: list[tuple[EntryPoint, Found, ModuleFacts]] = []
    manifests: dict[Path, str] = {}
    for path, display, facts in parsed:
        framework = frameworks.get(path)
        if framework is None:
            continue
        where = placed[path.resolve()]
        found += [
            (
                EntryPoint(
                    f"{where.module}:{f.attr}",
                    framework,
                    f.kind,
                    display,
                    f.line,
                    str(where.root),
                    f.why_not,
                    f.run_config,
                ),
                f,
                facts,
            )
            for f in discovery(framework).find(facts)
        ]
        for owner, d in with_manifest:
            for folder in (path.parent, *path.parents):
                manifest = folder / str(d.manifest)
                if manifest.is_file():
                    manifests[manifest] = owner
                    break
    entries = _join_callers(found, [facts for _p, _d, facts in parsed], placed)
    known = {(e.root, e.target) for e in entries}
    for manifest in sorted(manifests):
        entries += [
            e
            for e in _manifest_entries(manifest, manifests[manifest], base, modules, roots)
            if (e.root, e.target) not in known
        ]
    return sorted(entries, key=lambda e: (e.path, e.line, e.target))


def _frameworks(parsed: list[tuple[Path, str, ModuleFacts]]) -> dict[Path, str]:
    """The framework of each file: its first framework import, else the framework of the first project
    module it imports that has one (an ``app.py`` that imports only ``from .graph import build``)."""
    by_import = registry.by_import_name()
    out: dict[Path, str] = {}
    by_module: dict[str, Path] = {}
    for path, _display, facts in parsed:
        by_module[facts.module_name] = path
        imported = absolute_import_tops(facts, by_import)
        framework = next((by_import[top] for top in imported if top in by_import), None)
        if framework is not None:
            out[path] = framework
    for _round in range(3):  # a chain of plain modules in front of the framework's, a few deep
        added = False
        for path, _display, facts in parsed:
            if path in out:
                continue
            for name in sorted(facts.imported_modules):
                owner = _module_file(name, by_module)
                if owner is not None and owner != path and owner in out:
                    out[path], added = out[owner], True
                    break
        if not added:
            break
    return out


def _module_file(qualified: str, by_module: dict[str, Path]) -> Path | None:
    """The project file a dotted name (a module, or a name in one) is defined in."""
    parts = qualified.split(".")
    for n in range(len(parts), 0, -1):
        path = by_module.get(".".join(parts[:n]))
        if path is not None:
            return path
    return None


def _module_level_name(facts: ModuleFacts, node: cst.CSTNode) -> str:
    """The name a module-level assignment binds when ``node`` is inside its value (else "")."""
    import libcst as cst

    for ancestor in facts.ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return ""
        if isinstance(ancestor, (cst.Assign, cst.AnnAssign)):
            statement_line = facts.parent(ancestor)
            if isinstance(statement_line, cst.SimpleStatementLine) and isinstance(
                facts.parent(statement_line), cst.Module
            ):
                names, _value = assigned(ancestor)
                return names[0] if names else ""
            return ""
    return ""


def _enclosing_top_level(facts: ModuleFacts, node: cst.CSTNode) -> str:
    """The name of the module-level ``def`` or ``class`` that ``node`` is in (else "")."""
    import libcst as cst

    name = ""
    for ancestor in facts.ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
            name = ancestor.name.value
    return name


#: the kinds whose callers discovery reads: the functions (and classes) that build a program
_BUILDERS = ("factory", "builder function", "graph holder")


def _join_callers(
    found: list[tuple[EntryPoint, Found, ModuleFacts]], modules: list[ModuleFacts], placed: dict[Path, Placement]
) -> list[EntryPoint]:
    """The entry points with what the project's own callers say (see :mod:`.callers`): a factory gets the
    literal keyword arguments its callers pass; a program the project builds at module level from one of
    its builder functions (or from a factory the sweep cannot call alone) is swept in that form, and the
    function it came from is then not swept again."""
    by_name: dict[str, int] = {}
    for i, (entry, _f, facts) in enumerate(found):
        if entry.kind in _BUILDERS:
            by_name[f"{entry.module}.{entry.target.partition(':')[2]}"] = i
            by_name[f"{facts.module_name}.{entry.target.partition(':')[2]}"] = i
    calls = calls_of(set(by_name), modules, skip=CHECKPOINTER_PARAMS)
    targets = {e.target: i for i, (e, _f, _m) in enumerate(found)}
    dropped: set[int] = set()
    added: list[EntryPoint] = []
    for i, (entry, f, facts) in enumerate(found):
        if entry.kind not in _BUILDERS:
            continue
        mine = [c for c in calls if by_name.get(c.callee) == i]
        kwargs = first_kwargs(mine)
        missing = [n for n in f.needs if n not in kwargs]
        if kwargs and not missing:
            found[i] = (replace(entry, why_not="", factory_kwargs=tuple(kwargs.items())), f, facts)
        elif kwargs:
            found[i] = (replace(entry, factory_kwargs=tuple(kwargs.items())), f, facts)
        # the project's module-level results of this function: swept as built, when that form is the better one
        if entry.kind == "factory" and not found[i][0].why_not:
            continue  # the factory takes the sweep's checkpointer and its callers' arguments: it is the program
        for call in mine:
            name = _module_level_name(call.facts, call.node)
            if not name:
                continue
            where = placed.get(call.facts.path.resolve())
            if where is None:
                continue
            target = f"{where.module}:{name}"
            if target not in targets:
                added.append(
                    EntryPoint(
                        target, entry.framework, "built graph", call.facts.display_path, call.line, str(where.root)
                    )
                )
                targets[target] = -1
            dropped.add(i)
    # a builder function the project's other programs build on (inside their own defs) is swept through them
    for call in calls:
        i = by_name.get(call.callee, -1)
        if i >= 0 and found[i][0].kind == "builder function":
            where = placed.get(call.facts.path.resolve())
            owner = _enclosing_top_level(call.facts, call.node)
            if where is not None and owner and targets.get(f"{where.module}:{owner}", -1) not in (-1, i):
                dropped.add(i)
    # a module-level graph built from a factory kept above is that factory's program
    kept_factories = {k for k, i in by_name.items() if i not in dropped and found[i][0].kind == "factory"}
    for call in calls:
        name = _module_level_name(call.facts, call.node)
        if call.callee in kept_factories and name:
            where = placed.get(call.facts.path.resolve())
            index = targets.get(f"{where.module}:{name}") if where is not None else None
            if index is not None and index >= 0:
                dropped.add(index)
    return [e for i, (e, _f, _m) in enumerate(found) if i not in dropped] + added


def _named(
    target: str,
    parsed: list[tuple[Path, str, ModuleFacts]],
    placed: dict[Path, Placement],
    frameworks: dict[Path, str],
    base: Path,
) -> EntryPoint:
    """An entry point the user named (``module:attr``, or ``path/to/file.py:attr``): placed where its
    module's file is, when the project has it."""
    module, _, attr = target.rpartition(":")
    for path, display, facts in parsed:
        where = placed[path.resolve()]
        if where.module == module or facts.module_name == module or display == module or str(path) == module:
            line = next(
                (facts.line(s) for s in top_level_statements(facts) if attr.split(".")[0] in _defined_names(s)), 1
            )
            return EntryPoint(
                f"{where.module}:{attr}" if where.how != "file" else target,
                frameworks.get(path, ""),
                "named target",
                display,
                line,
                str(where.root),
            )
    return EntryPoint(target, "", "named target", module, 1, str(base))


def _manifest_entries(
    manifest: Path, framework: str, base: Path, modules: Modules, roots: ImportRoots
) -> list[EntryPoint]:
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
