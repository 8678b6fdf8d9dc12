"""What an analysis may ask of the project and of a module's resolver: the interfaces, no code.

The project (:class:`resume_audit.analysis.project.Project`) is built from the resolver, the
call graph and the framework knowledge that plugs into it (LangChain tools dispatched by name,
say); those in turn ask the project questions. They program against these protocols, not
against the class, so the modules the project is built from never import it: the import graph
has no cycle, not even one only the type checker sees. Rules and the engine, which sit above
the project, use the class itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Generic, Hashable, Iterable, Protocol, Sequence, TypeVar

if TYPE_CHECKING:
    import libcst as cst

    from resume_audit.discovery.modulenames import SourceFile
    from resume_audit.facts.model import Binding, CallInfo, ClassInfo, FunctionInfo, ModuleFacts, Order

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

#: How many levels of project helpers an effect (or interrupt) is traced through:
#: node -> helper -> helper -> helper -> sink.
MAX_HELPER_DEPTH = 4


@dataclass(frozen=True)
class Reached(Generic[T_co]):
    """``calls[0]`` is in the function asked about; ``calls[-1]`` is the call classified as ``hit``."""

    calls: tuple[CallInfo, ...]
    modules: tuple[ModuleFacts, ...]
    hit: T_co

    @property
    def via_helper(self) -> bool:
        return len(self.calls) > 1


class NameResolver(Protocol):
    """What one module's expressions name (:class:`resume_audit.analysis.resolve.Resolver`)."""

    @property
    def facts(self) -> ModuleFacts: ...

    @property
    def project(self) -> ProjectQueries | None: ...

    def names(
        self, expr: cst.BaseExpression, scope: FunctionInfo | None = None, *, at: Order | None = None, depth: int = 0
    ) -> set[str]: ...

    def call_names(self, call: cst.Call, scope: FunctionInfo | None = None) -> set[str]: ...

    def binding_value(
        self, name: str, scope: FunctionInfo | None, at: Order | None
    ) -> tuple[Binding, FunctionInfo | None] | None: ...


class ModulesByName(Protocol):
    """``project.by_name.get("pkg.mod", ())``: the modules a dotted name denotes, parsed on access."""

    def get(self, name: str, default: Sequence[ModuleFacts] = ()) -> Sequence[ModuleFacts]: ...


class ProjectQueries(Protocol):
    """The questions the resolver, the effect model and the framework knowledge ask the project."""

    def cached(self, namespace: str, key: Hashable, compute: Callable[[], T], *, in_progress: Any = ...) -> T: ...

    def resolver(self, module: ModuleFacts) -> NameResolver: ...

    def lookup(
        self, qualified: str, *, near: ModuleFacts | None = None, depth: int = 0
    ) -> FunctionInfo | ClassInfo | None: ...

    def function(self, qualified: str, near: ModuleFacts | None = None) -> FunctionInfo | None: ...

    def return_type_of(self, qualified: str, near: ModuleFacts | None = None) -> str | None: ...

    def attribute_type(self, qualified: str, depth: int, near: ModuleFacts | None = None) -> str | None: ...

    @property
    def by_name(self) -> ModulesByName: ...

    def entries_named(self, name: str) -> list[SourceFile]: ...

    def entries_imported(self, name: str, importer: Path | None) -> list[SourceFile]: ...

    def directories(self) -> set[Path]: ...

    def forget(self, namespace: str, key: Hashable) -> None: ...

    def load(self, entry: SourceFile) -> ModuleFacts | None: ...

    def knows_module(self, name: str) -> bool: ...

    def modules_mentioning(self, words: Iterable[str]) -> list[ModuleFacts]: ...

    def modules_calling(self, words: Iterable[str], name: str) -> list[ModuleFacts]: ...

    def modules_calling_into(self, home: ModuleFacts, words: Iterable[str], name: str) -> list[ModuleFacts]: ...

    def files_mentioning(self, word: str) -> list[SourceFile]: ...

    def files_mentioning_among(self, word: str, paths: Iterable[Path]) -> list[SourceFile]: ...

    def reach(
        self,
        key: str,
        classify: Callable[[CallInfo, ModuleFacts], T | None],
        call: CallInfo,
        module: ModuleFacts,
        budget: int = MAX_HELPER_DEPTH,
    ) -> Reached[T] | None: ...
