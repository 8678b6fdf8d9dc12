"""One registry of frameworks, every other table derived from it, and a framework = one folder + one line.

The made-up framework ``toyflow`` (tests/data/toyflow_framework/: its record, its entry-point discovery,
its adapter, its conformance row) is registered here at test time -- the one line of
``frameworks/registry.py`` a real framework adds -- and must then be known to the scan's pre-filter,
``audit``'s discovery, the dynamic stage's adapter registry and the conformance matrix, with nothing else
edited. docs/developing-frameworks.md walks through the same steps.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from resume_audit.frameworks import registry

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10
    import tomli as tomllib


def test_the_registry_lists_every_framework_once_in_order() -> None:
    assert registry.ids() == ("langgraph", "crewai", "llamaindex", "pydantic-graph")
    assert registry.canonical("llamaindex-workflows") == "llamaindex"  # the rules' older spelling
    assert registry.canonical("llama-index") is None
    with pytest.raises(registry.UnknownFramework):
        registry.get("nope")
    assert registry.by_import_name() == {
        "langgraph": "langgraph",
        "crewai": "crewai",
        "workflows": "llamaindex",
        "llama_index": "llamaindex",
        "pydantic_graph": "pydantic-graph",
    }
    assert registry.listing() == "langgraph, crewai, llamaindex or pydantic-graph"


def test_every_record_names_what_exists() -> None:
    from resume_audit.audit.entrypoints import Discovery, discovery
    from resume_audit.dynamic.adapters import adapter_for

    for fw in registry.frameworks():
        assert fw.adapter.startswith(f"resume_audit.frameworks.{fw.id.replace('-', '_')}.")
        assert adapter_for(fw.id).name == fw.id  # the adapter calls itself by the canonical id
        assert isinstance(discovery(fw.id), Discovery)
        assert fw.conformance is not None and callable(registry.load(fw.conformance))


def test_every_table_is_derived_from_the_registry() -> None:
    from resume_audit.dynamic.adapters import IMPORT_NAMES, REGISTRY
    from resume_audit.reading.prefilter import FRAMEWORK_PACKAGES

    assert list(REGISTRY) == list(registry.ids())
    assert dict(IMPORT_NAMES) == {fw.id: fw.import_names for fw in registry.frameworks()}
    assert dict(FRAMEWORK_PACKAGES) == {name: fw.import_names for fw in registry.frameworks() for name in fw.names}


def test_every_rule_names_registered_frameworks() -> None:
    from resume_audit.rules import all_rules

    for rule in all_rules():
        for name in rule.frameworks:
            assert registry.canonical(name) is not None, (rule.id, name)


def test_pyproject_installs_every_framework() -> None:
    """pyproject.toml is static: this keeps its extras and package list in step with the registry."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    extras = project["project"]["optional-dependencies"]
    packages = project["tool"]["setuptools"]["packages"]
    for fw in registry.frameworks():
        assert any(req.startswith(fw.distribution) for req in extras[fw.extra]), fw.id
        assert f"resume_audit.frameworks.{fw.id.replace('-', '_')}" in packages
    assert extras["dynamic"] == [f"resume-audit[{','.join(fw.extra for fw in registry.frameworks())}]"]


def test_a_framework_record_is_light() -> None:
    """The scan's warm path reads the registry (through the pre-filter): no framework, no LibCST."""
    code = (
        "import sys\nfrom resume_audit.frameworks import registry\nregistry.frameworks()\n"
        "import resume_audit.reading.prefilter\n"
        "heavy = {'libcst', 'langgraph', 'crewai', 'workflows', 'llama_index', 'pydantic_graph'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.fixture
def toyflow(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.syspath_prepend(str(DATA))
    with registry.registered("toyflow_framework") as fw:
        yield fw
    assert "toyflow" not in registry.ids()


def test_a_new_framework_is_one_folder_and_one_registry_line(toyflow, tmp_path: Path) -> None:
    from resume_audit.audit.entrypoints import discover
    from resume_audit.dynamic.adapters import REGISTRY, adapter_for, detect, sniff
    from resume_audit.dynamic.conformance.suite import probes
    from resume_audit.reading.prefilter import FRAMEWORK_PACKAGES, Prefilter, Trigger

    assert toyflow.id == "toyflow" and registry.ids()[-1] == "toyflow"

    # the scan's pre-filter: a rule that declares the framework sees the files that import it
    class ToyRule:
        id = "RA999"
        frameworks = ("toyflow",)
        triggers: tuple[str | Trigger, ...] = ()

    assert FRAMEWORK_PACKAGES["toyflow"] == ("toyflow",)
    prefilter = Prefilter([ToyRule()])
    assert prefilter.match(b"from toyflow import Pipeline\n").frameworks == {"toyflow"}
    assert prefilter.match(b"import os\n").empty

    # audit's discovery: its programs, named and placed like any framework's
    (tmp_path / "orders.py").write_text(
        textwrap.dedent("""\
        from toyflow import Pipeline

        class Orders(Pipeline):
            pass

        class Helper:
            pass
    """)
    )
    found = discover([(tmp_path / "orders.py", "orders.py")], tmp_path)
    assert [(e.target, e.framework, e.kind, e.line, e.root) for e in found] == [
        ("orders:Orders", "toyflow", "pipeline", 3, str(tmp_path))
    ]

    # the dynamic stage: its adapter, its imports in a target's source, its objects
    assert "toyflow" in REGISTRY
    assert adapter_for("toyflow").name == "toyflow"
    assert sniff("import os\nfrom toyflow import Pipeline\n") == ["toyflow"]

    class Pipeline:
        pass

    class Orders(Pipeline):
        pass

    adapter, obj = detect(Orders, hint="toyflow")
    assert adapter is adapter_for("toyflow") and obj is Orders

    # the conformance matrix: its row, after the others
    rows, _notes = probes()
    assert rows[-1].framework == "toyflow"


# -- no import cycle through what this slice owns -----------------------------------------------------
#: the modules the registry and its derived tables live in (lazy imports count, TYPE_CHECKING ones do not)
OWNED = (
    "resume_audit.frameworks.registry",
    "resume_audit.audit.",
    "resume_audit.dynamic.adapters",
    "resume_audit.reading.prefilter",
    "resume_audit.dynamic.conformance.suite",
)
OWNED_IN_FOLDERS = ("__init__", "entrypoints", "conformance")


def _module_files() -> dict[str, Path]:
    out = {}
    for top, package in (
        ("auditor", "resume_audit"),
        ("rules", "resume_audit.rules"),
        ("dynamic", "resume_audit.dynamic"),
    ):
        for path in (REPO / top).rglob("*.py"):
            parts = list(path.relative_to(REPO / top).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join([package, *parts])] = path
    return out


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def _imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    tree = ast.parse(path.read_bytes())
    skip = _type_checking_lines(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", 0) in skip:
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*parts, *([base] if base else [])])
            out.update(f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names)
    return {m for m in out if m in known and m != name}


def _strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[set[str]] = []
    sys.setrecursionlimit(max(10000, sys.getrecursionlimit()))

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on.discard(w)
                component.add(w)
                if w == v:
                    break
            out.append(component)

    for v in graph:
        if v not in index:
            visit(v)
    return out


def _owned(module: str) -> bool:
    if module.startswith("resume_audit.frameworks.") and module.count(".") >= 2:
        return module.rsplit(".", 1)[-1] in OWNED_IN_FOLDERS or module.count(".") == 2
    return any(module == o or module.startswith(o) for o in OWNED)


def test_no_import_cycle_runs_through_the_registry_or_its_tables() -> None:
    known = _module_files()
    graph = {name: _imports(name, path, known) for name, path in known.items()}
    cycles = [sorted(c) for c in _strongly_connected(graph) if len(c) > 1 and any(_owned(m) for m in c)]
    assert cycles == []
