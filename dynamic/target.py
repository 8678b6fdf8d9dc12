"""Parsing and loading a sweep target: ``path/to/file.py:attr`` or ``package.module:attr``.

A file target is imported as a module named after its file, with its folder
first on ``sys.path`` -- so ``--effect graph:charge`` names a function in
``graph.py`` and the graph sees the very same module object, and sibling
imports (``from tools import charge_card``) work as they do when the user
runs the file. A file inside a package (folders with ``__init__.py``) is
imported under its dotted name (``myagent.graph``) with the folder above the
top package on ``sys.path``, so its relative imports work; effects are then
named by dotted module (``myagent.tools.notify:email_customer``). Loading runs only inside sweep children: the parent never
imports user code.
"""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass
from typing import Any


class TargetError(ValueError):
    """The target does not load, is not a graph, or needs arguments the sweep cannot give.

    The CLI turns this into a clear message and exit code 2.
    """


@dataclass(frozen=True)
class TargetSpec:
    """A parsed target. ``file`` is absolute for file targets, ``None`` for module targets."""

    text: str
    module: str
    attr: str
    file: str | None
    #: directory put first on ``sys.path`` in the child
    path_entry: str

    @classmethod
    def parse(cls, text: str, cwd: str | None = None) -> "TargetSpec":
        cwd = cwd or os.getcwd()
        raw = text.strip()
        where, sep, attr = raw.rpartition(":")
        if not sep or not where or not attr:
            raise TargetError(f"target {text!r}: expected path/to/file.py:attr or package.module:attr")
        if not attr.replace(".", "").replace("_", "").isalnum():
            raise TargetError(f"target {text!r}: {attr!r} is not an attribute name")
        if where.endswith(".py") or os.sep in where or "/" in where:
            path = os.path.abspath(os.path.join(cwd, where))
            if not os.path.isfile(path):
                raise TargetError(f"target {text!r}: no such file {where!r}")
            module = os.path.splitext(os.path.basename(path))[0]
            if not module.isidentifier():
                # "hil-func.py": not importable by name; loaded from its file under that name
                return cls(raw, module, attr, path, os.path.dirname(path))
            # a file inside a package is imported under its package (its relative imports work);
            # the folder above the top package goes on sys.path
            parts, folder = [module], os.path.dirname(path)
            while os.path.isfile(os.path.join(folder, "__init__.py")) and os.path.basename(folder).isidentifier():
                parts.insert(0, os.path.basename(folder))
                folder = os.path.dirname(folder)
            if module == "__init__":
                parts.pop()
            return cls(raw, ".".join(parts), attr, path, folder)
        if not all(part.isidentifier() for part in where.split(".")):
            raise TargetError(f"target {text!r}: {where!r} is not a module name")
        return cls(raw, where, attr, None, cwd)


def _load_file(name: str, path: str) -> Any:
    """Import a file whose name is not a module name (``hil-func.py``), registered under that name so an
    ``--effect hil-func:charge`` finds the very same module."""
    import importlib.util

    found = importlib.util.spec_from_file_location(name, path)
    if found is None or found.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(found)
    sys.modules[name] = module
    try:
        found.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def import_target(spec: TargetSpec) -> tuple[Any, Any]:
    """Import the target's module (in the child) and return ``(module, attribute)``."""
    if spec.path_entry in sys.path:
        sys.path.remove(spec.path_entry)
    sys.path.insert(0, spec.path_entry)
    try:
        if spec.file is not None and not spec.module.replace(".", "_").isidentifier():
            module = _load_file(spec.module, spec.file)
        else:
            module = importlib.import_module(spec.module)
    except SystemExit as exc:
        raise TargetError(f"importing {spec.module!r} called sys.exit({exc.code!r})") from None
    except BaseException as exc:  # a broken user module must become a clear message
        raise TargetError(f"cannot import {spec.module!r}: {type(exc).__name__}: {exc}") from None
    if spec.file is not None:
        loaded = os.path.realpath(getattr(module, "__file__", "") or "")
        if loaded != os.path.realpath(spec.file):
            raise TargetError(
                f"target {spec.text!r}: module name {spec.module!r} resolves to {loaded or 'a built-in module'}, "
                f"not to {spec.file}; rename the file or use the package.module:attr form"
            )
    obj: Any = module
    for part in spec.attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise TargetError(f"target {spec.text!r}: {spec.module!r} has no attribute {spec.attr!r}") from None
    return module, obj
