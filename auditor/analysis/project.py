"""The scanned project as a whole: one object the engine builds and the rules ask.

The work is done by parts with one job each, composed here:

* :mod:`~resume_audit.analysis.memo` -- memoised answers and the dependencies they rest on
  (what the per-file cache must know);
* :mod:`~resume_audit.analysis.modules` -- which file is which module, parsed lazily, and which
  files mention a word;
* :mod:`~resume_audit.analysis.summary_values` -- per-module summaries, charged as values;
* :mod:`~resume_audit.analysis.symbols` -- qualified names to the project's functions and
  classes, and the types they give (:mod:`~resume_audit.analysis.resolve` per module);
* :mod:`~resume_audit.analysis.callgraph` -- callees and reachability through helpers;
* :mod:`~resume_audit.analysis.valueflow` -- arguments passed in and callers of a function.

:class:`Project` only wires them together -- with the knowledge of calls that run other code
than their name says (LangChain tools, GraphQL helpers), which lives with the effect model and
the frameworks -- and forwards each question to the part that answers it. It stops at the
project boundary: anything not parsed in this scan is opaque, and nothing is ever imported.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Hashable, Iterable, Sequence, TypeVar

import libcst as cst

from resume_audit.analysis.callgraph import CalleeHooks, CallGraph
from resume_audit.analysis.effect_reads import decided_by_caller_read
from resume_audit.analysis.flow.engine import flow_of
from resume_audit.analysis.memo import COMPUTING, Ledger
from resume_audit.analysis.modules import MentionSearch, ModuleIndex
from resume_audit.analysis.queries import MAX_HELPER_DEPTH, ProjectQueries, Reached
from resume_audit.analysis.resolve import Resolver
from resume_audit.analysis.summary_values import ProjectSummaries
from resume_audit.analysis.symbols import Symbols
from resume_audit.analysis.valueflow import Argument, ValueFlow
from resume_audit.discovery.modulenames import SourceFile
from resume_audit.facts.model import CallInfo, ClassInfo, FunctionInfo, ModuleFacts
from resume_audit.facts.summaries import SummarySource
from resume_audit.frameworks.langchain_tools import dispatch_targets, tool_callees
from resume_audit.handlers.catalog import HandlerShape

__all__ = ["MAX_HELPER_DEPTH", "Argument", "Project", "Reached"]

T = TypeVar("T")


def _objects(
    call: cst.Call, scope: FunctionInfo | None, module: ModuleFacts, project: ProjectQueries
) -> list[FunctionInfo]:
    """What a call naming no project function runs all the same: a LangChain tool object's ``invoke``,
    else whatever the value-flow engine says its callee may hold (a method of an object a factory built
    or a registry holds, a function handed in as a parameter)."""
    found = tool_callees(call, scope, module, project)
    if found:
        return found
    info = module.call_info(call)
    if info is None:
        return []
    resolver = project.resolver(module)
    return [fn for fn in flow_of(project).callees(info) if not decided_by_caller_read(call, fn, resolver, scope)]


#: the calls whose callee runs other code than its name says, as far as this project knows
_HOOKS = CalleeHooks(skips=decided_by_caller_read, dispatches=dispatch_targets, objects=_objects)


class Project:
    """All files of one scan, indexed for cross-module resolution.

    Modules are parsed lazily: a scan parses the files that can hold a hazard (see the
    pre-filter in :mod:`resume_audit.reading.prefilter`) and, on demand, the project modules
    their analysis reaches (a helper in ``tools/payments.py``). Every module an analysis
    touches is recorded in ``touched`` so the per-file cache can tell when a dependency changed.
    """

    def __init__(
        self,
        modules: Iterable[ModuleFacts] = (),
        *,
        files: Iterable[SourceFile] = (),
        loader: Callable[[SourceFile], ModuleFacts | None] | None = None,
        mentions: MentionSearch | None = None,
        summaries: SummarySource[Project] | None = None,
        text_of: Callable[[Path], bytes | None] | None = None,
        handler_shapes: Sequence[HandlerShape] = (),
    ) -> None:
        #: the project's own handler registrations (``handlers = [...]`` in [tool.resume-audit]),
        #: matched beside the built-in handler catalog (:mod:`resume_audit.handlers.web`)
        self.handler_shapes: tuple[HandlerShape, ...] = tuple(handler_shapes)
        self.ledger = Ledger()
        self.index = ModuleIndex(self.ledger, modules, files=files, loader=loader, mentions=mentions, text_of=text_of)
        self.summaries: ProjectSummaries[Project] = ProjectSummaries(self.ledger, self.index, summaries, self)
        self.symbols = Symbols(self.index, self)
        self.calls = CallGraph(self.ledger, self.index, self.summaries, self.symbols, self, _HOOKS)
        self.values = ValueFlow(self.ledger, self.calls)

    # -- what the file under analysis depended on (memo) --------------------
    @property
    def touched(self) -> set[Path]:
        """Resolved paths of the modules an analysis looked into (cache dependencies)."""
        return self.ledger.touched

    @property
    def mention_words(self) -> set[str]:
        """Words whose project-wide mentions an analysis relied on (cache dependencies)."""
        return self.ledger.mention_words

    @property
    def summary_deps(self) -> dict[str, str]:
        """Summary key -> digest of the value an analysis relied on (cache dependencies)."""
        return self.ledger.summary_deps

    def begin_file(self) -> None:
        self.ledger.begin_file()

    def cached(self, namespace: str, key: Hashable, compute: Callable[[], T], *, in_progress: Any = COMPUTING) -> T:
        return self.ledger.cached(namespace, key, compute, in_progress=in_progress)

    def forget(self, namespace: str, key: Hashable) -> None:
        self.ledger.forget(namespace, key)

    # -- per-module summaries -----------------------------------------------
    def summaries_over(self, kind: str, words: Sequence[str], select: str = "") -> list[tuple[SourceFile, Any]]:
        return self.summaries.over(kind, words, select)

    def summary_digest(self, key: str) -> str | None:
        return self.summaries.digest(key)

    def known_digest(self, key: str) -> tuple[str | None] | None:
        return self.summaries.known_digest(key)

    def summary_value(self, kind: str, entry: SourceFile) -> Any:
        return self.summaries.value(kind, entry)

    # -- modules ----------------------------------------------------------
    def load(self, entry: SourceFile) -> ModuleFacts | None:
        return self.index.load(entry)

    def give_up(self, entry: SourceFile) -> None:
        self.index.give_up(entry)

    def is_loaded(self, path: Path) -> bool:
        return self.index.is_loaded(path)

    @property
    def _loaded(self) -> dict[Path, ModuleFacts | None]:
        """The parsed modules by path (read by the engine's tests; prefer :meth:`is_loaded`)."""
        return self.index.loaded

    def entries_named(self, name: str) -> list[SourceFile]:
        return self.index.entries_named(name)

    def directories(self) -> set[Path]:
        return self.index.directories()

    def entries_imported(self, name: str, importer: Path | None) -> list[SourceFile]:
        return self.index.entries_imported(name, importer)

    def knows_module(self, name: str) -> bool:
        return self.index.knows_module(name)

    def is_directory_package(self, name: str) -> bool:
        return self.index.is_directory_package(name)

    def is_local_name(self, top: str) -> bool:
        return self.index.is_local_name(top)

    def unresolved_imports(self, module: ModuleFacts) -> list[str]:
        return self.index.unresolved_imports(module)

    def modules_named(self, name: str) -> list[ModuleFacts]:
        return self.index.modules_named(name)

    def module_names(self) -> list[str]:
        return self.index.module_names()

    @property
    def modules(self) -> list[ModuleFacts]:
        """Every module of the project -- parses them all: prefer :meth:`files_mentioning`."""
        return self.index.all_modules()

    @property
    def by_name(self) -> _LazyModules:
        """``project.by_name.get("pkg.mod", ())`` -- parses only the modules asked for."""
        return _LazyModules(self.index)

    def modules_mentioning(self, words: Iterable[str]) -> list[ModuleFacts]:
        return self.index.modules_mentioning(words)

    def modules_calling(self, words: Iterable[str], name: str) -> list[ModuleFacts]:
        return self.calls.modules_calling(words, name)

    def modules_calling_into(self, home: ModuleFacts, words: Iterable[str], name: str) -> list[ModuleFacts]:
        return self.calls.modules_calling_into(home, words, name)

    def modules_using(self, packages: Iterable[str]) -> list[ModuleFacts]:
        return self.index.modules_using(packages)

    def module_for_display(self, display: str) -> ModuleFacts | None:
        return self.index.module_for_display(display)

    def files_mentioning(self, word: str) -> list[SourceFile]:
        return self.index.files_mentioning(word)

    def files_mentioning_among(self, word: str, paths: Iterable[Path]) -> list[SourceFile]:
        return self.index.files_mentioning_among(word, paths)

    # -- symbols ----------------------------------------------------------
    def resolver(self, module: ModuleFacts) -> Resolver:
        return self.symbols.resolver(module)

    def lookup(
        self, qualified: str, *, near: ModuleFacts | None = None, depth: int = 0
    ) -> FunctionInfo | ClassInfo | None:
        return self.symbols.lookup(qualified, near=near, depth=depth)

    def function(self, qualified: str, near: ModuleFacts | None = None) -> FunctionInfo | None:
        return self.symbols.function(qualified, near)

    def return_type_of(self, qualified: str, near: ModuleFacts | None = None) -> str | None:
        return self.symbols.return_type_of(qualified, near)

    def attribute_type(self, qualified: str, depth: int, near: ModuleFacts | None = None) -> str | None:
        return self.symbols.attribute_type(qualified, depth, near)

    # -- calls ------------------------------------------------------------
    def callees(self, call: CallInfo, module: ModuleFacts) -> list[FunctionInfo]:
        return self.calls.callees(call, module)

    def reach(
        self,
        key: str,
        classify: Callable[[CallInfo, ModuleFacts], T | None],
        call: CallInfo,
        module: ModuleFacts,
        budget: int = MAX_HELPER_DEPTH,
    ) -> Reached[T] | None:
        return self.calls.reach(key, classify, call, module, budget)

    def function_reaches(
        self,
        key: str,
        classify: Callable[[CallInfo, ModuleFacts], T | None],
        fn: FunctionInfo,
        budget: int = MAX_HELPER_DEPTH,
    ) -> Reached[T] | None:
        return self.calls.function_reaches(key, classify, fn, budget)

    # -- values -----------------------------------------------------------
    def arguments_for(self, fn: FunctionInfo, param: str) -> list[Argument]:
        return self.values.arguments_for(fn, param)

    def callers(self, fn: FunctionInfo) -> list[tuple[CallInfo, ModuleFacts]]:
        return self.values.callers(fn)


class _LazyModules:
    """A read-only ``{module name: [ModuleFacts]}`` view that parses on access."""

    def __init__(self, index: ModuleIndex) -> None:
        self._index = index

    def get(self, name: str, default: Sequence[ModuleFacts] = ()) -> Sequence[ModuleFacts]:
        return self._index.modules_named(name) or default

    def __getitem__(self, name: str) -> list[ModuleFacts]:
        found = self._index.modules_named(name)
        if not found:
            raise KeyError(name)
        return found

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._index.knows_module(name)
