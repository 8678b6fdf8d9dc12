"""How Python imports a project's files: the folder each is imported from, and its dotted name.

``audit`` names every program by the module the program itself is imported as (``invoicer.app:compiled``)
and sweeps it with that module's import root first on ``sys.path``. A wrong root is a sweep that fails
with ``ModuleNotFoundError`` in the user's own imports, so the root is found as Python would find it, in
this order:

1. **what the project declares**: ``pyproject.toml`` (setuptools ``package-dir`` / ``packages.find``,
   Poetry ``packages``, Hatch wheel ``packages``, PDM ``package-dir``, uv's ``module-root``),
   ``setup.cfg`` (``package_dir``, ``packages.find``), ``setup.py`` (``package_dir=``,
   ``find_packages("src")``, read from the scan's parse, never run);
2. **what is installed**: a top-level package the environment imports from inside the project (an editable
   install) is imported from there; the finders are asked where, nothing is imported;
3. **the layout**: the folder above the outermost ``__init__.py`` package. A folder named like its package
   (``git clone`` gives ``invoicer/invoicer/app.py``) is the ordinary case: the clone's folder is the root,
   because from there ``import invoicer`` finds the package. Only a folder *without* ``__init__.py`` that
   the file imports itself through (``from email_approval.tools import ...`` inside
   ``email_approval/graph.py``), and that is not importable from below, is climbed: a namespace package.

Files whose names are not identifiers (``hil-func.py``) are named by their file and swept from their folder.
"""

from __future__ import annotations

import importlib.machinery
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Collection, Iterator

import libcst as cst

from resume_audit.audit.modules import Modules
from resume_audit.audit.syntax import callee
from resume_audit.discovery.modulenames import module_name_for
from resume_audit.facts.syntax import argument, dict_items, keyword, string_value

if TYPE_CHECKING:
    from resume_audit.facts.collect import ModuleFacts

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10
    import tomli as tomllib

#: the manifests a project declares its packages in
MANIFESTS = ("pyproject.toml", "setup.cfg", "setup.py")


@dataclass(frozen=True)
class Declared:
    """One import root a manifest declares: ``folder`` goes on ``sys.path``; ``packages``: the top-level
    packages it holds (empty: every file below it)."""

    folder: Path
    packages: frozenset[str] = frozenset()
    #: where it was read ("pyproject.toml [tool.setuptools.package-dir]")
    source: str = ""

    def holds(self, path: Path) -> bool:
        if self.folder not in path.parents:
            return False
        top = path.relative_to(self.folder).parts[0]
        return not self.packages or top.removesuffix(".py") in self.packages


@dataclass(frozen=True)
class Placement:
    """How one file is imported: its dotted module (or its file name, for a file target) and the root."""

    module: str
    root: Path
    #: "declared", "installed", "layout" or "file"
    how: str


@dataclass
class ImportRoots:
    """The import roots of the project under ``base``, read once and asked per file."""

    base: Path
    modules: Modules = field(default_factory=Modules)
    _declared: dict[Path, list[Declared]] = field(default_factory=dict)

    def place(self, path: Path, imported: Collection[str] = ()) -> Placement:
        """Where ``path`` is imported from (``imported``: the top-level names the file imports absolutely,
        for namespace packages)."""
        path = path.resolve()
        for declared in self._declarations_over(path):
            if declared.holds(path):
                parts = _module_parts(path.relative_to(declared.folder))
                if parts is not None:
                    return Placement(".".join(parts), declared.folder, "declared")
        module, root = _layout(path, imported)
        if module.endswith(".py"):
            return Placement(module, root, "file")
        top = module.split(".")[0]
        installed = installed_root(top)
        if installed is not None and installed != root and self._inside(installed) and installed in path.parents:
            parts = _module_parts(path.relative_to(installed))
            if parts is not None:
                return Placement(".".join(parts), installed, "installed")
        return Placement(module, root, "layout")

    def _inside(self, folder: Path) -> bool:
        return folder == self.base or self.base in folder.parents

    def _declarations_over(self, path: Path) -> Iterator[Declared]:
        """The declarations of every manifest folder from the file's up to the base (nearest first)."""
        for folder in path.parents:
            if folder not in self._declared:
                self._declared[folder] = self._read(folder)
            yield from self._declared[folder]
            if folder == self.base or not self._inside(folder):
                break

    def _read(self, folder: Path) -> list[Declared]:
        found: list[Declared] = []
        if (folder / "pyproject.toml").is_file():
            found += _from_pyproject(folder)
        if (folder / "setup.cfg").is_file():
            found += _from_setup_cfg(folder)
        if (folder / "setup.py").is_file():
            facts = self.modules.facts(folder / "setup.py")
            found += _from_setup_py(folder, facts) if facts is not None else []
        # the narrowest first: a declared src/ wins over the project folder a `packages = [...]` names
        return sorted({d.folder: d for d in reversed(found)}.values(), key=lambda d: -len(d.folder.parts))


def _module_parts(relative: Path) -> list[str] | None:
    parts = list(relative.with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return parts if parts and all(p.isidentifier() for p in parts) else None


def _layout(path: Path, imported: Collection[str]) -> tuple[str, Path]:
    """The module and root by the folders alone (see the module doc, point 3)."""
    module, is_package = module_name_for(path, resolved=True)
    parts = module.split(".")
    folder = path.parent
    for _ in parts[0 if is_package else 1 :]:  # a package's __init__.py is in the package's own folder
        folder = folder.parent
    while (
        folder.name in imported
        and folder.name.isidentifier()
        and folder.parent != folder
        and not _importable_from(folder, folder.name)
    ):
        parts.insert(0, folder.name)
        folder = folder.parent
    if not all(p.isidentifier() for p in parts):
        return path.name, path.parent  # a file target: "hil-func.py:graph", swept from its folder
    return ".".join(parts), folder


def _importable_from(folder: Path, name: str) -> bool:
    """Does ``import name`` resolve with ``folder`` on ``sys.path`` (a package or a module of that name)?"""
    return (folder / name / "__init__.py").is_file() or (folder / f"{name}.py").is_file()


@lru_cache(maxsize=None)
def installed_root(top: str) -> Path | None:
    """The folder the environment imports the top-level package ``top`` from, asking the finders (an
    editable install's among them) without importing anything; None when it is not importable, or is
    importable only from the current directory (which is the project's layout, not an install)."""
    if not top.isidentifier() or top in sys.builtin_module_names:
        return None
    here = {"", str(Path.cwd())}
    for finder in sys.meta_path:
        find_spec = getattr(finder, "find_spec", None)
        if find_spec is None or finder in (importlib.machinery.BuiltinImporter, importlib.machinery.FrozenImporter):
            continue
        try:
            if finder is importlib.machinery.PathFinder:
                spec = importlib.machinery.PathFinder.find_spec(top, [p for p in sys.path if p not in here])
            else:
                spec = find_spec(top, None)
        except Exception:  # a third-party finder that cannot answer is no answer
            continue
        if spec is None:
            continue
        locations = list(spec.submodule_search_locations or [])
        where = Path(locations[0]) if locations else Path(spec.origin) if spec.origin else None
        return where.resolve().parent if where is not None else None
    return None


# -- what the manifests declare ------------------------------------------------------------------------


def _table(data: Any, *keys: str) -> Any:
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _package_dir(folder: Path, mapping: Any, packages: Collection[str], source: str) -> list[Declared]:
    """setuptools' ``package-dir``: ``{"" = "src"}`` roots every package at src/; ``{"pkg" = "lib/pkg"}``
    is importable from lib/ when the folder has the package's name."""
    out = []
    for name, where in mapping.items() if isinstance(mapping, dict) else ():
        if not isinstance(where, str):
            continue
        target = (folder / where).resolve()
        if name == "":
            out.append(Declared(target, frozenset(p.split(".")[0] for p in packages), source))
        elif "." not in name and target.name == name:
            out.append(Declared(target.parent, frozenset({name}), source))
    return out


def _from_pyproject(folder: Path) -> list[Declared]:
    try:
        data = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    out: list[Declared] = []
    src = "pyproject.toml"
    setuptools = _table(data, "tool", "setuptools")
    packages = _strings(_table(setuptools, "packages"))
    out += _package_dir(folder, _table(setuptools, "package-dir"), packages, f"{src} [tool.setuptools.package-dir]")
    for where in _strings(_table(setuptools, "packages", "find", "where")):
        out.append(Declared((folder / where).resolve(), frozenset(), f"{src} [tool.setuptools.packages.find]"))
    if packages and not out:
        out.append(Declared(folder, frozenset(p.split(".")[0] for p in packages), f"{src} [tool.setuptools] packages"))
    for entry in _table(data, "tool", "poetry", "packages") or []:
        if isinstance(entry, dict) and isinstance(entry.get("include"), str):
            include = entry["include"].split("/")[0].removesuffix(".py")
            base = (folder / entry["from"]).resolve() if isinstance(entry.get("from"), str) else folder
            out.append(Declared(base, frozenset({include}), f"{src} [tool.poetry] packages"))
    for package in _strings(_table(data, "tool", "hatch", "build", "targets", "wheel", "packages")):
        path = (folder / package).resolve()
        out.append(Declared(path.parent, frozenset({path.name}), f"{src} [tool.hatch.build.targets.wheel] packages"))
    pdm = _table(data, "tool", "pdm", "build", "package-dir")
    if isinstance(pdm, str):
        out.append(Declared((folder / pdm).resolve(), frozenset(), f"{src} [tool.pdm.build] package-dir"))
    uv_root = _table(data, "tool", "uv", "build-backend", "module-root")
    if isinstance(uv_root, str) or _table(data, "build-system", "build-backend") == "uv_build":
        root = uv_root if isinstance(uv_root, str) else "src"
        out.append(Declared((folder / root).resolve(), frozenset(), f"{src} [tool.uv.build-backend] module-root"))
    return out


def _from_setup_cfg(folder: Path) -> list[Declared]:
    import configparser

    parser = configparser.ConfigParser()
    try:
        parser.read(folder / "setup.cfg", encoding="utf-8")
    except (OSError, configparser.Error):
        return []
    out: list[Declared] = []
    mapping = {}
    for line in parser.get("options", "package_dir", fallback="").splitlines():
        name, sep, where = line.partition("=")
        if sep:
            mapping[name.strip()] = where.strip()
    out += _package_dir(folder, mapping, (), "setup.cfg [options] package_dir")
    where = parser.get("options.packages.find", "where", fallback="").strip()
    if where:
        out.append(Declared((folder / where).resolve(), frozenset(), "setup.cfg [options.packages.find]"))
    return out


def _from_setup_py(folder: Path, facts: ModuleFacts) -> list[Declared]:
    """``setup(package_dir={"": "src"}, packages=find_packages("src"))``, read off the scan's parse."""
    out: list[Declared] = []
    for info in facts.all_calls:
        call = info.node
        name = callee(call)
        if name == "setup":
            mapping = keyword(call, "package_dir")
            if mapping is not None and isinstance(mapping.value, cst.Dict):
                pairs = {k: string_value(v) for k, v in dict_items(mapping.value) if k is not None}
                out += _package_dir(folder, pairs, (), "setup.py package_dir=")
        elif name in ("find_packages", "find_namespace_packages"):
            where = string_value(argument(call, 0, "where"))
            if where and where != ".":
                out.append(Declared((folder / where).resolve(), frozenset(), f"setup.py {name}({where!r})"))
    return out
