"""The frameworks resume-audit knows, in one list: every other table that names frameworks is derived from it.

Each framework lives in a folder of its own (``frameworks/<name>/``) whose ``__init__.py`` defines one
:class:`Framework` record: its canonical id, its import names, its pip distribution and extra, and where
(by ``"module:attr"`` string, imported on use) its dynamic adapter, its ``audit`` entry-point discovery and
its conformance rows live. :data:`PACKAGES` lists those folders, one line each, in the order every derived
table keeps: the dynamic adapters' registry and import names (:mod:`resume_audit.dynamic.adapters`), the
pre-filter's import words (:mod:`resume_audit.reading.prefilter`), ``audit``'s framework detection
(:mod:`resume_audit.audit.entrypoints`) and the conformance matrix's rows
(:mod:`resume_audit.dynamic.conformance.suite`).

This module is light on purpose -- the scan's warm path reads it: importing it (or a framework's
``__init__``) imports neither a framework nor LibCST, and nothing here imports an adapter, a discovery or
a conformance module until asked.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
from dataclasses import dataclass
from typing import Callable, Iterator, Mapping, TypeVar

#: the framework folders, one line each, in the order every derived table lists them
PACKAGES: tuple[str, ...] = (
    "resume_audit.frameworks.langgraph",
    "resume_audit.frameworks.crewai",
    "resume_audit.frameworks.llamaindex",
    "resume_audit.frameworks.pydantic_graph",
)


@dataclass(frozen=True)
class Framework:
    """Everything the tables outside a framework's folder need to know about it."""

    #: the one spelling used everywhere: ``--framework``, reports, the adapters' registry, rules
    id: str
    #: as prose names it ("LlamaIndex Workflows")
    display_name: str
    #: top-level import names that say a module uses it; the first is the one whose presence says it is installed
    import_names: tuple[str, ...]
    #: the pip distribution (its version is reported; install hints name it)
    distribution: str
    #: the ``resume-audit[<extra>]`` that installs it
    extra: str
    #: ``"module:Class"`` of its dynamic-stage adapter (a :class:`resume_audit.dynamic.adapters.base.Adapter`)
    adapter: str
    #: ``"module:function"``: ``audit``'s discovery of its programs in one module
    #: (see :class:`resume_audit.audit.entrypoints.Discovery`)
    entrypoints: str
    #: ``"module:function"``: its rows of the conformance matrix (see :mod:`resume_audit.dynamic.conformance.suite`)
    conformance: str | None = None
    #: ``conformance --saver module:factory`` names one of its checkpointers (only its rows are swept then)
    takes_saver: bool = False
    #: other spellings still accepted where frameworks are named (a rule's ``frameworks``)
    aliases: tuple[str, ...] = ()

    def installed(self) -> bool:
        """Whether its package can be imported here (found, not imported)."""
        try:
            return importlib.util.find_spec(self.import_names[0]) is not None
        except (ImportError, ValueError):
            return False

    @property
    def names(self) -> tuple[str, ...]:
        """The canonical id and every alias."""
        return (self.id, *self.aliases)


class UnknownFramework(ValueError):
    """A name that is neither a registered framework's id nor one of its aliases."""


_extra: list[str] = []  # packages registered at run time (a test's made-up framework)
_loaded: tuple[Framework, ...] | None = None


def frameworks() -> tuple[Framework, ...]:
    """Every registered framework, in :data:`PACKAGES` order (then those registered at run time)."""
    global _loaded
    if _loaded is None:
        found = []
        for package in (*PACKAGES, *_extra):
            record = getattr(importlib.import_module(package), "FRAMEWORK", None)
            if not isinstance(record, Framework):
                raise TypeError(f"{package} defines no FRAMEWORK = Framework(...) record")
            found.append(record)
        ids = [name for fw in found for name in fw.names]
        if len(ids) != len(set(ids)):
            raise ValueError(f"two frameworks claim one name: {sorted(n for n in ids if ids.count(n) > 1)}")
        _loaded = tuple(found)
    return _loaded


def ids() -> tuple[str, ...]:
    """The canonical ids, in registry order."""
    return tuple(fw.id for fw in frameworks())


def get(name: str) -> Framework:
    """The framework ``name`` (its id or an alias) denotes."""
    for fw in frameworks():
        if name in fw.names:
            return fw
    raise UnknownFramework(f"unknown framework {name!r} (known: {', '.join(ids())})")


def canonical(name: str) -> str | None:
    """The canonical id of ``name`` (an id or an alias), or None for a name no framework has."""
    return next((fw.id for fw in frameworks() if name in fw.names), None)


def by_import_name() -> dict[str, str]:
    """Top-level import name -> framework id (``workflows`` -> ``llamaindex``)."""
    return {name: fw.id for fw in frameworks() for name in fw.import_names}


def load(path: str) -> object:
    """The object a ``"module:attr"`` path names, imported now."""
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


def listing(conjunction: str = "or") -> str:
    """The ids as prose: ``langgraph, crewai, llamaindex or pydantic-graph`` (for help and messages)."""
    names = ids()
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {conjunction} {names[-1]}"


V = TypeVar("V")


class Table(Mapping[str, V]):
    """A read-only table derived from the registry, keyed by framework id (and, with ``aliases``, by each
    alias too), in registry order. It is read afresh on every use, so a framework registered later is in it."""

    def __init__(self, value: Callable[[Framework], V], *, aliases: bool = False) -> None:
        self._value = value
        self._aliases = aliases

    def _items(self) -> dict[str, V]:
        return {name: self._value(fw) for fw in frameworks() for name in (fw.names if self._aliases else (fw.id,))}

    def __getitem__(self, key: str) -> V:
        return self._items()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items())

    def __len__(self) -> int:
        return len(self._items())

    def __repr__(self) -> str:
        return f"Table({self._items()!r})"


@contextlib.contextmanager
def registered(package: str) -> Iterator[Framework]:
    """Register the framework folder ``package`` (an importable package defining ``FRAMEWORK``) for the
    duration of the block: how a test proves a new framework needs nothing but its folder and this one line."""
    global _loaded
    _extra.append(package)
    _loaded = None
    try:
        yield frameworks()[-1]
    finally:
        _extra.remove(package)
        _loaded = None
