"""No import cycle anywhere in the tool, lazy or not (issue 38).

The graph is read from the source with ``ast``: every ``import`` and ``from ... import`` of a
module of the tool counts, at module level or inside a function (a lazy import only postpones
the cycle it makes), except those under ``if TYPE_CHECKING:`` (never executed), and
``importlib.import_module("resume_audit....")`` with a literal name counts too. A module is
named as it installs (``auditor/`` is ``resume_audit``, ``rules/`` and ``dynamic/`` its
sub-packages); importing ``a.b.c`` is an edge to ``a.b.c`` (to the deepest module of the tool
the name reaches), not to its parent packages.

Every package of the tool is checked (``CHECKED``).
"""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO

#: where each installed package's source lives
SOURCES = {
    "resume_audit": REPO / "auditor",
    "resume_audit.rules": REPO / "rules",
    "resume_audit.dynamic": REPO / "dynamic",
}

#: a cycle with a module of one of these fails the test
CHECKED = ("resume_audit",)


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for package, folder in SOURCES.items():
        for path in folder.rglob("*.py"):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if package == "resume_audit" and parts and parts[0] in ("rules", "dynamic"):
                continue  # (not in the tree; mapped from the folders above)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join([package, *parts])] = path
    return out


def _type_checking_only(tree: ast.AST) -> set[int]:
    """The ids of every node under an ``if TYPE_CHECKING:`` block."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else ""
            if name in ("TYPE_CHECKING", "_TYPE_CHECKING"):
                for child in node.body:
                    skipped.update(id(n) for n in ast.walk(child))
    return skipped


def _imported_names(module: str, path: Path, tree: ast.AST, type_checking: bool = False) -> list[str]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    skipped = set() if type_checking else _type_checking_only(tree)
    names: list[str] = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*parent, *([base] if base else [])])
            # ``from a.b import c``: an edge to the module a.b.c when c is one, else to a.b (resolved below)
            names.extend(f"{base}.{alias.name}" for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names.append(node.args[0].value)
    return names


def import_graph(type_checking: bool = False) -> dict[str, set[str]]:
    """module -> the modules of the tool it imports (with ``type_checking``, also those only the type
    checker sees)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        edges: set[str] = set()
        for name in _imported_names(module, path, ast.parse(path.read_text(encoding="utf-8")), type_checking):
            while name and name not in modules:  # ``from a.b import name``: the module a.b
                name = name.rpartition(".")[0]
            if name and name != module and name.startswith("resume_audit"):
                edges.add(name)
        graph[module] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph[succ]))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_the_graph_sees_lazy_imports_and_skips_type_checking_ones() -> None:
    graph = import_graph()
    # a function-local import (the per-file analysis imports the project model when an analyser is built)
    assert "resume_audit.analysis.project" in graph["resume_audit.engine.analyzer"]
    # an import under TYPE_CHECKING only (the file table's type, in the reading package)
    assert "resume_audit.cache.filetable" not in graph["resume_audit.reading.sourcebytes"]


def test_a_cycle_is_found() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_anywhere_in_the_tool() -> None:
    offending = [c for c in cycles(import_graph()) if any(m == p or m.startswith(p + ".") for m in c for p in CHECKED)]
    assert offending == [], "import cycles (lazy imports included):\n" + "\n".join(" <-> ".join(c) for c in offending)


#: the static analysis core: the project model, the facts, the effect model, the frameworks' static knowledge
CORE = (
    "resume_audit.analysis",
    "resume_audit.facts",
    "resume_audit.handlers",
    "resume_audit.fixes",
    "resume_audit.rules",
    "resume_audit.frameworks.classes",
    "resume_audit.frameworks.langchain_tools",
    "resume_audit.frameworks.pydantic",
    "resume_audit.frameworks.langgraph.units",
    "resume_audit.frameworks.langgraph.resume_plane",
)


def _in_core(module: str) -> bool:
    return module.startswith(CORE) or (module.startswith("resume_audit.frameworks.") and module.endswith(".names"))


def test_the_core_has_no_import_cycle_not_even_one_only_the_type_checker_sees() -> None:
    edges = import_graph(type_checking=True)
    core = {name: {t for t in targets if _in_core(t)} for name, targets in edges.items() if _in_core(name)}
    assert len(core) > 60
    assert cycles(core) == []


def test_the_sweep_child_never_imports_the_parent_side() -> None:
    graph = import_graph()
    reached: set[str] = set()
    todo = [m for m in graph if m.startswith("resume_audit.dynamic.child.")]
    while todo:
        for n in graph[todo.pop()]:
            if n not in reached:
                reached.add(n)
                todo.append(n)
    parent = sorted(m for m in reached if m.startswith("resume_audit.dynamic.parent."))
    assert parent == [], f"the child side reaches the parent side: {parent}"


def test_the_sweeps_shared_vocabulary_imports_neither_side() -> None:
    graph = import_graph()
    shared = (
        "cells",
        "spec",
        "ledger",
        "killpoints",
        "values",
        "child_result",
        "effect_spec",
        "llm_script",
        "target",
        "lifetime",
        "request",
        "protocol",
    )
    for name in shared:
        module = f"resume_audit.dynamic.{name}"
        sides = sorted(
            n for n in graph[module] if n.startswith(("resume_audit.dynamic.parent.", "resume_audit.dynamic.child."))
        )
        assert sides == [], f"{module} imports {sides}"


def test_no_module_imports_the_version_from_the_package_root() -> None:
    """``from resume_audit import __version__`` in a submodule imports the package's ``__init__``,
    which re-exports the API (a cycle through its lazy imports): the version has a module of its own."""
    offenders = [
        str(path.relative_to(REPO))
        for path in _modules().values()
        if "from resume_audit import __version__" in path.read_text(encoding="utf-8")
    ]
    assert offenders == []
