"""The abstract objects the value-flow engine tracks.

An expression of the scanned code denotes a set of these: the objects it may hold at run time,
each named by where it was made (a library call site, a literal) or by what it is (a project
function, class or module; an instance of a project class, all instances of one class being one
object). Identity is structural where two values are the same object (two references to one
function) and by node where the object was made at a place (two ``StateGraph(...)`` calls make
two builders), so values compare and hash cheaply and sets of them deduplicate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

import libcst as cst

from resume_audit.facts.model import ClassInfo, FunctionInfo, ModuleFacts

#: a literal's value
Literal = Union[str, int, float, bool, None, bytes]


@dataclass(frozen=True)
class External:
    """A name outside the project: a library function, class or module (``langgraph.graph.StateGraph``),
    or a builtin (``builtins.dict``)."""

    name: str


@dataclass(frozen=True)
class Made:
    """An object made by calling something outside the project: ``StateGraph(State)`` is a ``Made`` of
    type ``langgraph.graph.StateGraph``; ``builder.compile(...)`` one of type
    ``langgraph.graph.StateGraph.compile`` (the method's qualified name: what it returns is known by
    what made it). ``call`` is None for an object known only by its declared type (an annotated
    parameter ``client: httpx.Client``)."""

    type: str
    call: cst.Call | None = field(default=None, compare=False, repr=False)
    module: ModuleFacts | None = field(default=None, compare=False, repr=False)
    scope: FunctionInfo | None = field(default=None, compare=False, repr=False)
    #: identity of the call site (two calls make two objects); 0 for a declared type
    site: int = 0


@dataclass(frozen=True)
class Member:
    """``obj.name`` where ``obj`` is a :class:`Made` (or :class:`External`) and ``name`` is not a stored
    attribute: a bound library method (``graph.invoke``) -- calling it makes a :class:`Made` of type
    ``<obj's type>.<name>``."""

    owner: "Value"
    name: str


@dataclass(frozen=True)
class Function:
    """A function of the project (by identity: two references to it are one value)."""

    fn: FunctionInfo = field(compare=False, repr=False)
    key: int = 0

    @staticmethod
    def of(fn: FunctionInfo) -> "Function":
        return Function(fn, id(fn))


@dataclass(frozen=True)
class Bound:
    """A project method bound to an instance (``agent.run``): calling it calls ``fn`` with ``self``."""

    fn: FunctionInfo = field(compare=False, repr=False)
    owner: "Instance | None" = None
    key: int = 0

    @staticmethod
    def of(fn: FunctionInfo, owner: "Instance | None") -> "Bound":
        return Bound(fn, owner, id(fn))


@dataclass(frozen=True)
class Lambda:
    node: cst.Lambda = field(compare=False, repr=False)
    module: ModuleFacts = field(compare=False, repr=False)
    scope: FunctionInfo | None = field(compare=False, repr=False)
    key: int = 0


@dataclass(frozen=True)
class Class:
    """A class of the project, as a value (``AGENTS = {"a": Agent}``; ``Agent()`` makes an :class:`Instance`)."""

    cls: ClassInfo = field(compare=False, repr=False)
    key: int = 0

    @staticmethod
    def of(cls: ClassInfo) -> "Class":
        return Class(cls, id(cls))


@dataclass(frozen=True)
class Instance:
    """Every instance of a project class, as one object: what one ``self.client = ...`` stores,
    every ``self.client`` of that class may read."""

    cls: ClassInfo = field(compare=False, repr=False)
    key: int = 0

    @staticmethod
    def of(cls: ClassInfo) -> "Instance":
        return Instance(cls, id(cls))


@dataclass(frozen=True)
class Partial:
    """``functools.partial(target, ...)``: calling it calls ``target``."""

    target: "Value"
    call: cst.Call = field(compare=False, repr=False)
    site: int = 0


@dataclass(frozen=True)
class Constant:
    """A literal: ``"user-1"``, ``3``, ``None``, ``True``."""

    value: Literal


@dataclass(frozen=True)
class Container:
    """A dict, list, tuple or set made at one place (a literal, a ``dict(...)`` call, a comprehension):
    a registry (``AGENTS = {"support": support_graph}``), a run config, keyword arguments."""

    kind: str  # "dict" | "list" | "tuple" | "set"
    node: cst.CSTNode = field(compare=False, repr=False)
    module: ModuleFacts = field(compare=False, repr=False)
    scope: FunctionInfo | None = field(compare=False, repr=False)
    site: int = 0


@dataclass(frozen=True)
class Module:
    """A module of the project, imported as a value (``from . import tools``). ``importer``: the path of
    the module that imported it, which decides the file the name denotes (as Python would pick it)."""

    name: str
    importer: str = ""


Value = Union[External, Made, Member, Function, Bound, Lambda, Class, Instance, Partial, Constant, Container, Module]


def describe(value: Value) -> str:
    """A short human-readable name for messages and tests."""
    if isinstance(value, External):
        return value.name
    if isinstance(value, Made):
        return f"{value.type}(...)"
    if isinstance(value, Member):
        return f"{describe(value.owner)}.{value.name}"
    if isinstance(value, (Function, Bound)):
        return value.fn.full_name
    if isinstance(value, Lambda):
        return "<lambda>"
    if isinstance(value, Class):
        return value.cls.full_name
    if isinstance(value, Instance):
        return f"{value.cls.full_name}()"
    if isinstance(value, Partial):
        return f"partial({describe(value.target)})"
    if isinstance(value, Constant):
        return repr(value.value)
    if isinstance(value, Container):
        return f"<{value.kind}>"
    return value.name
