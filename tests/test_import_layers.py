"""The static analysis core imports without cycles: the project model, the facts, the effect model,
the frameworks' static knowledge, the handler catalog, the fixes and the rules (issue 38).

Counted as an edge: every import a module makes, at its top or inside a function (a lazy import
still ties the two modules together). Within these packages, imports under ``if TYPE_CHECKING``
count too: the lower layers program against :mod:`resume_audit.analysis.queries`, never against the
project class they are part of. Across the whole package (other stages' modules included) a
type-only import is left out, as the redesign's brief counts cycles.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: source folder -> the package it installs as (pyproject.toml [tool.setuptools.package-dir])
FOLDERS = {"auditor": "resume_audit", "rules": "resume_audit.rules", "dynamic": "resume_audit.dynamic"}
CORE = ("resume_audit.analysis", "resume_audit.facts", "resume_audit.handlers", "resume_audit.fixes", "resume_audit.rules",
        "resume_audit.frameworks.classes", "resume_audit.frameworks.langchain_tools", "resume_audit.frameworks.pydantic",
        "resume_audit.frameworks.langgraph.units", "resume_audit.frameworks.langgraph.resume_plane")


def _in_core(module: str) -> bool:
    return module.startswith(CORE) or (module.startswith("resume_audit.frameworks.") and module.endswith(".names"))


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for folder, package in FOLDERS.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if folder == "auditor" and parts[0] in ("rules", "dynamic"):
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([package, *parts])] = path
    return out


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The ids of the import nodes under ``if TYPE_CHECKING:``."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return out


def _graph(*, type_checking: bool) -> dict[str, set[str]]:
    modules = _modules()
    edges: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = set() if type_checking else _type_checking_only(tree)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join([*up, *([node.module] if node.module else [])])
                targets.add(base)
                targets.update(f"{base}.{a.name}" for a in node.names)
        resolved = set()
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                resolved.add(target)
        edges[name] = resolved
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
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
                    out.append(sorted(component))
    return out


def test_the_core_has_no_import_cycle_not_even_one_only_the_type_checker_sees() -> None:
    edges = _graph(type_checking=True)
    core = {name: {t for t in targets if _in_core(t)} for name, targets in edges.items() if _in_core(name)}
    assert len(core) > 60
    assert _cycles(core) == []


def test_no_core_module_is_part_of_an_import_cycle_of_the_package() -> None:
    cycles = _cycles(_graph(type_checking=False))
    assert [c for c in cycles if any(_in_core(m) for m in c)] == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
