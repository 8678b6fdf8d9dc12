"""The dynamic stage's import graph: no cycles (lazy, function-local imports count too), and the child side
never imports the parent side.

The graph is read from the source with ``ast`` -- every ``import`` statement anywhere in a module, except
those under ``if TYPE_CHECKING:`` (they never run) -- with each edge pointing at the module the statement
names (``from a.b import c`` is an edge to ``a.b.c`` when that is a module, else to ``a.b``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: installed package -> source folder (pyproject.toml's package-dir)
ROOTS = {"resume_audit.rules": REPO / "rules", "resume_audit.dynamic": REPO / "dynamic", "resume_audit": REPO / "auditor"}

#: the modules this test holds to "no cycle through them": the dynamic stage, its codec and findings model, the
#: framework adapters, and the parts of ``audit`` that read sweeps
OWNED = ("resume_audit.dynamic", "resume_audit.codec", "resume_audit.serialize", "resume_audit.findings",
         "resume_audit.audit.merge", "resume_audit.audit.confirm", "resume_audit.audit.render")


def _is_owned(module: str) -> bool:
    return module.startswith(OWNED) or (module.startswith("resume_audit.frameworks.") and ".adapter" in module)


def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package, root in ROOTS.items():
        for path in root.rglob("*.py"):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            name = ".".join([package, *parts])
            found.setdefault(name, path)
    return found


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, here: str, is_package: bool) -> list[tuple[str, list[str]]]:
    """(module, names) of every import statement that can run."""
    out: list[tuple[str, list[str]]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking_only(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            out.extend((alias.name, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = here if is_package else here.rpartition(".")[0]
                for _ in range(node.level - 1):
                    package = package.rpartition(".")[0]
                base = f"{package}.{base}" if base else package
            out.append((base, [alias.name for alias in node.names]))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return out


def import_graph() -> dict[str, set[str]]:
    known = modules()
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for module, names in _imports(tree, name, path.name == "__init__.py"):
            targets = [f"{module}.{n}" for n in names if f"{module}.{n}" in known] or [module]
            graph[name].update(t for t in targets if t in known and t != name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def strongconnect(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strongconnect(v)
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


def test_no_import_cycle_runs_through_the_dynamic_stage(graph: dict[str, set[str]]) -> None:
    through = [c for c in cycles(graph) if any(_is_owned(m) for m in c)]
    assert through == [], "import cycles (lazy imports included):\n" + "\n".join(" <-> ".join(c) for c in through)


def test_the_child_side_never_imports_the_parent_side(graph: dict[str, set[str]]) -> None:
    child = [m for m in graph if m.startswith("resume_audit.dynamic.child.")]
    reached: set[str] = set()
    todo = list(child)
    while todo:
        m = todo.pop()
        for n in graph[m]:
            if n not in reached:
                reached.add(n)
                todo.append(n)
    parent = sorted(m for m in reached if m.startswith("resume_audit.dynamic.parent."))
    assert parent == [], f"the child side reaches the parent side: {parent}"


def test_the_shared_vocabulary_imports_neither_side(graph: dict[str, set[str]]) -> None:
    shared = ("cells", "spec", "ledger", "killpoints", "values", "child_result", "effect_spec", "llm_script", "target",
              "lifetime", "request", "protocol")
    for name in shared:
        module = f"resume_audit.dynamic.{name}"
        sides = sorted(n for n in graph[module] if n.startswith(("resume_audit.dynamic.parent.", "resume_audit.dynamic.child.")))
        assert sides == [], f"{module} imports {sides}"


def test_the_walker_sees_lazy_imports_and_skips_type_checking_ones() -> None:
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import a\n"
                     "def f():\n    import b\n    from .c import d\n")
    assert _imports(tree, "pkg.mod", False) == [("typing", ["TYPE_CHECKING"]), ("b", []), ("pkg.c", ["d"])]
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
