"""Every effect the static stage can see in a project, as the sweep's ``--effect`` names it.

A static finding names only the effects that are hazards *there*; a sweep also
needs the others recorded and stubbed, or an HTTP call the sandbox refuses
fails the uninterrupted run (an approving branch that pays through a helper
nobody flagged). This asks the static stage's effect model about every call
of every function in the project: the user function that performs an effect
becomes the ``--effect`` (``claims.effects:pay_out``) -- unless it is itself a
unit of work (it parks, or a graph registers it), whose body must run; then the
library call is named instead (``requests:post``) when it can be addressed.
Nothing is imported.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import libcst as cst

from resume_audit.audit.modules import Modules
from resume_audit.audit.syntax import positional
from resume_audit.config.settings import Config
from resume_audit.discovery.modulenames import SourceFile, module_name_for
from resume_audit.discovery.walk import SourcePath

if TYPE_CHECKING:
    from resume_audit.engine.scan import Analyzer

#: calls that make a function a unit whose body must run, not an effect to stub
_PARKS = ("interrupt", "wait_for_event", "input")


def imported_modules(file: Path, modules: Modules | None = None) -> set[str]:
    """The dotted names ``file`` imports (relative imports resolved, ``from m import a`` as ``m`` and
    ``m.a``), and its own name; read, not run (``modules``: the audit's parsed modules, else parsed here)."""
    facts = (modules or Modules()).facts(file)
    if facts is None:
        return set()
    own, _is_package = module_name_for(file.resolve())
    return {own, *facts.imported_modules}


def imported_closure(file: Path, root: Path, modules: Modules | None = None, depth: int = 3) -> set[Path]:
    """The project files ``file`` imports, and those they import, ``depth`` levels down (read, not run):
    the sweep wraps only effects the program loads anyway, never imports a module it would not."""
    modules = modules or Modules()
    seen: set[Path] = {file.resolve()}
    frontier = [file.resolve()]
    for _ in range(depth):
        nxt = []
        for f in frontier:
            for name in imported_modules(f, modules):
                for candidate in _files_for(name, root, f.parent):
                    if candidate not in seen:
                        seen.add(candidate)
                        nxt.append(candidate)
        frontier = nxt
    return seen


def _files_for(module: str, root: Path, beside: Path) -> list[Path]:
    parts = [p for p in module.split(".") if p]
    out = []
    for base in (root, beside):
        for folder in (base, *base.parents):
            if folder != root and root not in folder.parents:
                continue
            for candidate in (folder.joinpath(*parts).with_suffix(".py"), folder.joinpath(*parts, "__init__.py")):
                if parts and candidate.is_file():
                    out.append(candidate.resolve())
    return out


def sink_analyzer(sources: Sequence[SourcePath], config: Config) -> Analyzer:
    """The static stage's analysis of the whole project (no rules): its effect model and project are
    what :func:`effect_sinks` asks, and its loader parses each module for the rest of the audit too."""
    from resume_audit.engine.scan import Analyzer

    return Analyzer([_source_file(sp) for sp in sources], config, [], None, {})


def _source_file(sp: SourcePath) -> SourceFile:
    name, is_package = module_name_for(sp.resolved, resolved=True)
    return SourceFile(sp.resolved, sp.display, name, is_package)


def effect_sinks(analyzer: Analyzer, sources: Sequence[SourcePath], modules: Modules) -> list[tuple[str, Path | None]]:
    """(``module:function`` or ``library:attr``, the file defining it) for every effect the model recognises."""
    files = [_source_file(sp) for sp in sources]
    registered = _registered_units(files, modules)
    out: dict[str, Path | None] = {}
    for entry in files:
        module = modules.facts(entry.path, entry.display)
        if module is None:
            continue
        resolver = analyzer.project.resolver(module)
        for fn in module.functions:
            for call in fn.calls:
                try:
                    hit = analyzer.effects.classify_keyed(call, module, resolver)
                except Exception:  # one odd call must not cost the plan
                    continue
                if hit is None:
                    continue
                effect, keyed = hit
                if keyed:
                    # still an effect (the sandbox refuses it unstubbed), recorded where its key is visible:
                    # the ledger counts a keyed call once per key, as the provider would
                    library = _library_target(call.node, module.imports) or _addressable(effect.label)
                    if library:
                        out.setdefault(library, None)
                    continue
                top = fn
                while top.parent is not None:
                    top = top.parent
                is_unit = top.name in registered or any(_called(c.node) in _PARKS for c in top.calls)
                if top.class_info is None and not is_unit:
                    out.setdefault(f"{module.module_name}:{top.name}", entry.path)
                else:
                    library = _library_target(call.node, module.imports)
                    if library:
                        out.setdefault(library, None)
    return list(out.items())


def _called(call: object) -> str:
    """The called name of a LibCST call: ``interrupt`` for ``interrupt(...)`` and ``ctx.wait_for_event(...)``."""
    func = getattr(call, "func", None)
    if isinstance(func, cst.Attribute):
        return func.attr.value
    if isinstance(func, cst.Name):
        return func.value
    return ""


def _library_target(call: object, imports: dict[str, str]) -> str | None:
    """``requests.post(...)`` -> ``requests:post`` when ``requests`` is an imported module name."""
    func = getattr(call, "func", None)
    chain: list[str] = []
    while isinstance(func, cst.Attribute):
        chain.insert(0, func.attr.value)
        func = func.value
    if not isinstance(func, cst.Name) or not chain:
        return None
    module = imports.get(func.value)
    if module is not None and "." in module and module.rsplit(".", 1)[1] != func.value:
        return None  # a name imported from a module, not the module
    return library_effect(module, chain)


def _addressable(qualified: str) -> str | None:
    """A library effect's qualified name as ``--effect`` names it: ``requests.Session.post`` ->
    ``requests:Session.post`` (the module is the part before the first class name), ``boto3.client`` ->
    ``boto3:client``; None for a name-only match (``.execute()``) or the standard library."""
    parts = qualified.split(".")
    if len(parts) < 2 or not all(p.isidentifier() for p in parts):
        return None
    cut = next((i for i, p in enumerate(parts) if i and p[:1].isupper()), len(parts) - 1)
    return library_effect(".".join(parts[:cut]), parts[cut:])


def library_effect(module: str | None, chain: list[str]) -> str | None:
    """``requests`` + ``["post"]`` -> ``requests:post``: a library call as ``--effect`` names it; None
    outside a module, or inside the standard library (see :func:`is_stdlib`)."""
    if module is None or not chain or is_stdlib(module):
        return None
    return f"{module}:{'.'.join(chain)}"


def is_stdlib(module: str) -> bool:
    """The sweep never wraps the standard library: its own children write results with ``os.replace`` and
    talk through ``subprocess``/``sqlite3``; a stubbed ``os.replace`` would silence every report. A
    standard-library effect is recorded through the user function that makes it, or not at all."""
    import sys

    return module.split(".")[0] in getattr(sys, "stdlib_module_names", ()) or module.split(".")[0] in ("os", "sys")


#: decorators that make a function a unit of a framework (its body must run)
_UNIT_DECORATORS = frozenset({"step", "start", "listen", "router", "entrypoint", "task", "persist"})


def _registered_units(files: list[SourceFile], modules: Modules) -> set[str]:
    """Names passed to ``add_node`` or decorated as steps, tasks, flow methods: their bodies must run.
    (A LangChain ``@tool`` is not one: the sweep wraps tool objects like functions.)"""
    names: set[str] = set()
    for _display, _facts, call, _method in modules.method_calls([(f.path, f.display) for f in files], ("add_node",)):
        names.update(a.value.value for a in positional(call.node)[:2] if not a.star and isinstance(a.value, cst.Name))
    for f in files:
        facts = modules.facts(f.path, f.display)
        if facts is None:
            continue
        for fn in facts.functions:
            for d in fn.decorators:
                target = d.target
                name = (
                    target.attr.value
                    if isinstance(target, cst.Attribute)
                    else target.value
                    if isinstance(target, cst.Name)
                    else ""
                )
                if name in _UNIT_DECORATORS:
                    names.add(fn.name)
    return names
