"""Which programs in a project the sweep can run, found by reading the code (nothing is imported).

``audit`` sweeps what a user would deploy, without being told where it is:

- LangGraph: a function whose body ends in ``builder.compile(...)`` and that
  can be called with nothing or with a checkpointer (a *factory*); a
  module-level ``graph = builder.compile(...)``; a functional-API
  ``@entrypoint``; the graphs ``langgraph.json`` serves;
- CrewAI: a ``Flow`` subclass; LlamaIndex: a ``Workflow`` subclass;
  pydantic-graph: a module-level ``Graph(nodes=...)``.

A candidate that cannot be swept as it stands (a factory that needs a
database URL, a graph built inside another function) is kept, with the
reason, so the report can say why its findings were not exercised.
Targets are named ``package.module:attr`` and swept from the folder above the
top package, so the program's own imports resolve as they do in production.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from resume_audit.discovery.modulenames import module_name_for
from resume_audit.discovery.walk import display_path

#: parameters a factory may take: the sweep passes its checkpointer by name or position
CHECKPOINTER_PARAMS = ("checkpointer", "saver", "memory", "checkpoint_saver")
#: imports that say which framework a file uses
FRAMEWORK_IMPORTS = {
    "langgraph": "langgraph",
    "crewai": "crewai",
    "llama_index": "llamaindex",
    "workflows": "llamaindex",
    "pydantic_graph": "pydantic-graph",
}


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
    #: pydantic-graph: the node a run starts at (the first of ``Graph(nodes=(...))``)
    start: str | None = None

    @property
    def sweepable(self) -> bool:
        return not self.why_not

    @property
    def module(self) -> str:
        return self.target.partition(":")[0]


def discover(files: Iterable[tuple[Path, str]], base: Path | None = None) -> list[EntryPoint]:
    """Every entry point in ``files`` ((path, display path) pairs), in file and line order; ``base`` is the
    folder displayed paths are relative to (for the graphs a ``langgraph.json`` names)."""
    base = base or Path.cwd()
    found: list[EntryPoint] = []
    manifests: set[Path] = set()
    for path, display in files:
        try:
            tree = ast.parse(path.read_bytes(), filename=str(path))
        except (OSError, SyntaxError, ValueError):
            continue  # the scan reports files it could not read or parse
        framework = _framework(tree)
        if framework is None:
            continue
        module, root = module_and_root(path, tree)
        found += _entries(tree, framework, module, display, root)
        for folder in (path.parent, *path.parents):
            manifest = folder / "langgraph.json"
            if manifest.is_file():
                manifests.add(manifest)
                break
    known = {(e.root, e.target) for e in found}
    for manifest in sorted(manifests):
        found += [e for e in _manifest_entries(manifest, base) if (e.root, e.target) not in known]
    return sorted(found, key=lambda e: (e.path, e.line, e.target))


def _framework(tree: ast.Module) -> str | None:
    """The framework of the first framework import in the file."""
    return next((FRAMEWORK_IMPORTS[top] for top in _top_level_imports(tree) if top in FRAMEWORK_IMPORTS), None)


def _top_level_imports(tree: ast.Module) -> list[str]:
    """The top-level package of every absolute import, in the order the file makes them."""
    out: dict[str, None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update((a.name.split(".")[0], None) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out[node.module.split(".")[0]] = None
    return list(out)


def module_and_root(path: Path, tree: ast.Module) -> tuple[str, str]:
    """How the program imports this file, and the folder to sweep it from.

    A package (``__init__.py`` folders) is imported under its dotted name from
    above its top folder. A folder without ``__init__.py`` whose name the file
    itself imports through (``from email_approval.tools import ...`` inside
    ``email_approval/graph.py``) is a namespace package the app runs from its
    parent. A file whose name is not an identifier (``hil-func.py``) is named
    by its path: the sweep loads it from the file.
    """
    path = path.resolve()
    module, _packaged = module_name_for(path)
    parts = module.split(".")
    folder = path.parent
    for _ in parts[1:]:
        folder = folder.parent
    imported = _top_level_imports(tree)
    while folder.name in imported and folder.name.isidentifier() and folder.parent != folder:
        parts.insert(0, folder.name)
        folder = folder.parent
    if not all(p.isidentifier() for p in parts):
        return path.name, str(path.parent)  # a file target: "hil-func.py:graph", swept from its folder
    return ".".join(parts), str(folder)


#: modules whose ``compile`` is not LangGraph's
_OTHER_COMPILES = frozenset({"re", "regex", "jinja2", "ast", "sre_compile", "py_compile", "torch", "jit"})


def _is_compile(node: ast.AST) -> bool:
    """``<builder>.compile(...)``: not ``re.compile("...")`` and friends."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "compile"):
        return False
    receiver = node.func.value
    if isinstance(receiver, ast.Name) and receiver.id in _OTHER_COMPILES:
        return False
    return not (node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, (str, bytes)))


def _callee(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def _base_names(cls: ast.ClassDef) -> list[str]:
    out = []
    for base in cls.bases:
        if isinstance(base, ast.Subscript):
            base = base.value
        out.append(_callee(base))
    return out


def _required_params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    required = positional[: len(positional) - len(args.defaults)]
    required += [a for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is None]
    return [a.arg for a in required]


def _entries(tree: ast.Module, framework: str, module: str, display: str, root: str) -> list[EntryPoint]:
    out: list[EntryPoint] = []

    def add(attr: str, kind: str, line: int, why_not: str = "", start: str | None = None) -> None:
        out.append(EntryPoint(f"{module}:{attr}", framework, kind, display, line, root, why_not, start))

    factories: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            decorators = [_callee(d) for d in node.decorator_list]
            if framework == "langgraph" and "entrypoint" in decorators:
                add(node.name, "entrypoint", node.lineno)
                continue
            returns_compiled = any(isinstance(n, ast.Return) and n.value is not None and _is_compile(n.value)
                                   for n in ast.walk(node))
            if framework == "langgraph" and not returns_compiled and _returns_builder(node):
                factories.add(node.name)
                extra = [p for p in _required_params(node) if p not in CHECKPOINTER_PARAMS]
                why = (f"the builder function needs {', '.join(extra)}; the sweep can only call it with nothing")
                add(node.name, "builder function", node.lineno, why if extra else "")
                continue
            if framework == "langgraph" and returns_compiled:
                factories.add(node.name)
                extra = [p for p in _required_params(node) if p not in CHECKPOINTER_PARAMS]
                why = (f"the factory needs {', '.join(extra)}; the sweep can only call a factory with nothing or a "
                       "checkpointer -- add one that builds the same graph that way") if extra else ""
                add(node.name, "factory", node.lineno, why)
        elif isinstance(node, ast.ClassDef):
            bases = _base_names(node)
            if framework == "crewai" and "Flow" in bases:
                add(node.name, "flow", node.lineno)
            elif framework == "llamaindex" and "Workflow" in bases:
                add(node.name, "workflow", node.lineno)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            value = node.value
            if not names or value is None:
                continue
            if framework == "langgraph" and _is_compile(value):
                add(names[0], "compiled graph", node.lineno)
            elif framework == "langgraph" and _callee(value) == "StateGraph":
                add(names[0], "builder", node.lineno)
            elif framework == "pydantic-graph" and _callee(value) == "Graph":
                add(names[0], "graph", node.lineno, start=_first_node(value))
    # a module-level graph built by one of this module's factories is the same program: keep the factory;
    # a module-level builder that the module also compiles is that compiled graph
    compiled = any(e.kind == "compiled graph" for e in out)
    return [e for e in out if not ((e.kind in ("compiled graph", "builder") and factories)
                                   or (e.kind == "builder" and compiled))]


def _returns_builder(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``return StateGraph(...)`` or ``builder = StateGraph(...); ...; return builder`` (not compiled)."""
    bound = {t.id for n in ast.walk(fn) if isinstance(n, ast.Assign) and _callee(n.value) == "StateGraph"
             for t in n.targets if isinstance(t, ast.Name)}
    for n in ast.walk(fn):
        if isinstance(n, ast.Return) and n.value is not None:
            if _callee(n.value) == "StateGraph" and isinstance(n.value, ast.Call):
                return True
            if isinstance(n.value, ast.Name) and n.value.id in bound:
                return True
    return False


def _first_node(call: ast.expr) -> str | None:
    if not isinstance(call, ast.Call):
        return None
    nodes = next((k.value for k in call.keywords if k.arg == "nodes"), call.args[0] if call.args else None)
    if isinstance(nodes, (ast.Tuple, ast.List)) and nodes.elts and isinstance(nodes.elts[0], ast.Name):
        return nodes.elts[0].id
    return None


def _manifest_entries(manifest: Path, base: Path) -> list[EntryPoint]:
    """``langgraph.json`` graphs: ``"name": "./path/to/file.py:attr"`` (paths shown relative to ``base``)."""
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    graphs = data.get("graphs") if isinstance(data, dict) else None
    out = []
    for _name, spec in (graphs or {}).items():
        if not isinstance(spec, str) or ":" not in spec:
            continue
        where, _, attr = spec.rpartition(":")
        path = (manifest.parent / where).resolve()
        if not path.is_file():
            continue
        try:
            tree = ast.parse(path.read_bytes())
        except (OSError, SyntaxError, ValueError):
            continue
        module, root = module_and_root(path, tree)
        line = next((n.lineno for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign, ast.FunctionDef))
                     and attr in ([t.id for t in n.targets if isinstance(t, ast.Name)] if isinstance(n, ast.Assign)
                                  else [getattr(getattr(n, "target", None), "id", getattr(n, "name", None))])), 1)
        out.append(EntryPoint(f"{module}:{attr}", "langgraph", "deployed graph", display_path(path, base), line, root))
    return out
