"""Which module a file is, from its path alone: the dotted name Python would import it under.

Kept apart from :mod:`resume_audit.analysis.project` (which re-exports both names) because every
scan -- a warm one that parses nothing included -- names every file it finds, and that must not
cost an import of the parser and the analysis.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=None)
def _is_package_dir(directory: Path) -> bool:
    return (directory / "__init__.py").exists()


def module_name_for(path: Path, *, resolved: bool = False) -> tuple[str, bool]:
    """Dotted module name of ``path`` as Python would import it from the first
    ancestor directory that is not a package, and whether it is a package.
    ``resolved``: the path is already absolute with symlinks resolved."""
    if not resolved:
        path = path.resolve()
    is_package = path.name == "__init__.py"
    parts = _package_parts(os.path.dirname(path))  # by string: a Path per file and its hash cost more
    return ".".join(parts if is_package else (*parts, path.stem)), is_package


@lru_cache(maxsize=None)
def _package_parts(folder: str) -> tuple[str, ...]:
    """The package names from the outermost package down to ``folder`` (empty when it is not
    a package): worked out once per folder, as every file in it asks."""
    directory = Path(folder)
    names: list[str] = []
    while _is_package_dir(directory) and directory.parent != directory:
        names.append(directory.name)
        directory = directory.parent
    return tuple(reversed(names))


@dataclass(frozen=True)
class SourceFile:
    """A file of the project, known by path and module name before (or without) being parsed."""

    path: Path
    display: str
    module_name: str
    is_package: bool
