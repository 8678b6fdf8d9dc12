"""The scanned project as a whole: which module is which, and who calls whom.

Effects hide in helpers: ``from .tools.payments import charge`` inside a node
means the node charges a card. The project index maps dotted module names to
the parsed modules of the scan, resolves a qualified name to the function or
class it denotes (following re-exports), and answers reachability questions
("does this call reach an effect sink? by which path?") over the call graph,
memoised per question. It stops at the project boundary: anything not parsed
in this scan is opaque, and nothing is ever imported. Modules are parsed
lazily, only when a scanned file's analysis reaches into them.
"""

from __future__ import annotations

import importlib.machinery
import os
import site
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import AbstractSet, Any, Callable, Generic, Hashable, Iterable, Sequence, TypeVar

import libcst as cst

from resume_audit.facts.collect import CallInfo, ClassInfo, FunctionInfo, ModuleFacts
from resume_audit.analysis.resolve import Resolver
# named here for the analysis; defined apart so a warm scan names its files without importing libcst
from resume_audit.discovery.modulenames import SourceFile
from resume_audit.reading.prefilter import import_words
from resume_audit.facts.summaries import (
    SUMMARY_KINDS, PartsIndex, SummaryKind, SummarySource, register, split_summary_key, summary_key, parts_digest,
)

T = TypeVar("T")
#: ``Project.cached``'s "no placeholder" marker
_COMPUTING: Any = object()


@dataclass(frozen=True)
class _Memoised:
    """A memoised answer with the modules, word searches and summary values it depended on."""

    value: Any
    paths: frozenset[Path]
    words: frozenset[str]
    #: (summary key, digest of the value seen) -- see :meth:`Project.summaries_over`
    summaries: frozenset[tuple[str, str]] = frozenset()


@dataclass
class _Frame:
    """What one running computation has depended on so far."""

    paths: set[Path]
    words: set[str]
    summaries: dict[str, str]

#: How many levels of project helpers an effect (or interrupt) is traced through:
#: node -> helper -> helper -> helper -> sink.
MAX_HELPER_DEPTH = 4


#: annotations that say nothing about the instance returned
_NOT_TYPES = frozenset({"builtins.None", "typing.Any", "builtins.object", "builtins.dict", "builtins.list", "builtins.str",
                        "builtins.int", "builtins.bool", "builtins.float", "builtins.bytes", "builtins.tuple"})

#: runners that call a function they are handed: method or function name -> (position of the
#: function among the positional arguments, its keyword)
CALLBACK_RUNNERS: dict[str, tuple[int | None, str]] = {
    "run_in_executor": (1, "func"),
    "submit": (0, "fn"),
    "to_thread": (0, "func"),
    "add_task": (0, "func"),
    "call_soon": (0, "callback"),
    "call_soon_threadsafe": (0, "callback"),
    "call_later": (1, "callback"),
    "run_sync": (0, "func"),
    "start_soon": (0, "func"),
    "Thread": (None, "target"),
    "Process": (None, "target"),
    "Timer": (1, "function"),
    "add_job": (0, "func"),
    "apply_async": (0, "func"),
}


@lru_cache(maxsize=None)
def is_installed_top_level(top: str) -> bool:
    """Whether ``top`` is a standard-library module or one installed in site-packages.

    Only the finders are asked (nothing is imported), and only over site-packages
    and the standard library, never the current directory: the scanned project
    itself must not count as installed.
    """
    if top in sys.stdlib_module_names or top in sys.builtin_module_names:
        return True
    dirs = [d for d in (*site.getsitepackages(), site.getusersitepackages()) if d and os.path.isdir(d)]
    try:
        return importlib.machinery.PathFinder.find_spec(top, dirs) is not None
    except (ImportError, ValueError, OSError):
        return False


@dataclass(frozen=True)
class Reached(Generic[T]):
    """``calls[0]`` is in the function asked about; ``calls[-1]`` is the call classified as ``hit``."""

    calls: tuple[CallInfo, ...]
    modules: tuple[ModuleFacts, ...]
    hit: T

    @property
    def via_helper(self) -> bool:
        return len(self.calls) > 1


def _call_words(name: str) -> list[str]:
    """Text a module must hold to call ``name`` or hand it to a runner: the byte search that
    keeps a question about a common name (``run``) from parsing every file that says "run"."""
    return [f"{name}(", f"{name},", f"{name})", f"={name}"]


def _called_name(call: cst.Call) -> str | None:
    func = call.func
    return func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None


def _may_call(call: cst.Call, name: str) -> bool:
    """Syntactically, can ``call`` invoke a function called ``name``: by that name, or as a
    runner (``add_task``, ``submit``...) handed something spelled ``name``?"""
    called = _called_name(call)
    if called == name:
        return True
    if called not in CALLBACK_RUNNERS:
        return False
    for arg in call.args:
        value = arg.value
        if isinstance(value, cst.Call):  # functools.partial(fn, ...)
            value = value.args[0].value if value.args else value
        if (isinstance(value, cst.Name) and value.value == name) or (isinstance(value, cst.Attribute) and value.attr.value == name):
            return True
    return False


def _called_names(project: "Project", module: ModuleFacts) -> list[str]:
    """Every name ``module`` calls, or hands to a runner (:func:`_may_call` is true for a name
    exactly when it is listed)."""
    names: set[str] = set()
    for info in module.all_calls:
        called = _called_name(info.node)
        if called is None:
            continue
        names.add(called)
        if called not in CALLBACK_RUNNERS:
            continue
        for arg in info.node.args:
            value = arg.value
            if isinstance(value, cst.Call):
                value = value.args[0].value if value.args else value
            if isinstance(value, cst.Name):
                names.add(value.value)
            elif isinstance(value, cst.Attribute):
                names.add(value.attr.value)
    return sorted(names)


#: which names a module calls: who may call ``change_answer`` without parsing every module that says so
CALLED_NAMES = register(SummaryKind("called-names", _called_names, []))


@dataclass(frozen=True)
class Argument:
    """A value a caller passes to a parameter (or the parameter's default, ``call`` None)."""

    value: cst.BaseExpression
    #: the scope ``value`` is evaluated in (None: module level)
    scope: FunctionInfo | None
    module: ModuleFacts
    call: CallInfo | None


class Project:
    """All files of one scan, indexed for cross-module resolution.

    Modules are parsed lazily: a scan parses the files that can hold a hazard
    (see the pre-filter in :mod:`resume_audit.engine.scan`) and, on demand, the project
    modules their analysis reaches (a helper in ``tools/payments.py``). Every
    module an analysis touches is recorded in ``touched`` so the per-file
    cache can tell when a dependency changed.
    """

    def __init__(
        self,
        modules: Iterable[ModuleFacts] = (),
        *,
        files: Iterable[SourceFile] = (),
        loader: Callable[[SourceFile], ModuleFacts | None] | None = None,
        mentions: Callable[[str], list[str]] | None = None,
        summaries: "SummarySource | None" = None,
    ) -> None:
        self._files: dict[str, list[SourceFile]] = {}
        self._loaded: dict[Path, ModuleFacts | None] = {}
        for f in files:
            self._files.setdefault(f.module_name, []).append(f)
        for m in modules:
            entry = SourceFile(m.path.resolve(), m.display_path, m.module_name, m.is_package)
            self._files.setdefault(m.module_name, []).append(entry)
            self._loaded[entry.path] = m
        self._loader = loader
        self._mentions: dict[str, list[Path]] = {}
        self._by_path: dict[Path, SourceFile] | None = None
        #: ``word -> paths (as str) of the files whose text contains it`` (the engine's index over
        #: every file's bytes); without it only the modules given already parsed are searched
        self._find_mentions = mentions
        self._by_str: dict[str, Path] | None = None
        #: resolved paths of the modules an analysis looked into (cache dependencies)
        self.touched: set[Path] = set()
        #: words whose project-wide mentions an analysis relied on (cache dependencies)
        self.mention_words: set[str] = set()
        self._resolvers: dict[int, Resolver] = {}
        #: last dotted component -> files (for resolving a name the way the code is really run)
        self._by_tail: dict[str, list[SourceFile]] | None = None
        self._suffix_memo: dict[str, list[SourceFile]] = {}
        #: every directory name and module stem of the project: an import whose first
        #: component is one of these is the project's own and should resolve
        self._local_tops: set[str] | None = None
        self._dir_tails: set[tuple[str, ...]] | None = None
        self._by_folder: dict[str, list[SourceFile]] | None = None
        self._memos: dict[str, dict[Hashable, _Memoised]] = {}
        #: the dependencies of the memoised computations now running, innermost last
        self._frames: list[_Frame] = []
        #: summary key -> digest of the value an analysis relied on (cache dependencies that stay
        #: valid while the value does, whatever happened to the bytes behind it)
        self.summary_deps: dict[str, str] = {}
        #: per-module summaries: computed here, or read back from a previous scan's store
        self._summaries = summaries if summaries is not None else SummarySource()
        self._summary_values: dict[tuple[str, Path], Any] = {}
        self._digests: dict[str, str | None] = {}
        #: (kind, words) -> the modules' summaries indexed by select, and the modules by path
        self._parts_indexes: dict[tuple[str, tuple[str, ...]], tuple[PartsIndex, dict[Path, SourceFile]]] = {}
        #: summaries being computed right now (their memo holds a placeholder meanwhile)
        self._summaries_computing = 0

    # -- memoised answers and what they depended on ------------------------
    def begin_file(self) -> None:
        """Start recording one file's dependencies afresh (the engine calls it per analysed file)."""
        self.touched = set()
        self.mention_words = set()
        self.summary_deps = {}
        self._frames = []

    def cached(self, namespace: str, key: Hashable, compute: Callable[[], T], *, in_progress: Any = _COMPUTING) -> T:
        """``compute()``, once per project (one scan) and key -- with what it depended on.

        Analyses that answer the same question for many files keep the answer here (never in
        module globals). The modules the computation loaded and the project-wide word searches
        it relied on are recorded with the answer and charged again to every later file that
        reuses it: the per-file cache must know that ``a2.py``'s finding rests on ``h2.py``
        even when ``a1.py``'s analysis did the work (a stale finding otherwise survives an
        edit of ``h2.py``). ``in_progress`` is what a recursive question about the same key
        sees while the answer is computed (a cycle contributes nothing new).
        """
        memo = self._memos.setdefault(namespace, {})
        found = memo.get(key)
        if found is not None:
            if found.paths or found.words or found.summaries:
                self._charge(found.paths, found.words, dict(found.summaries))
            return found.value
        if in_progress is not _COMPUTING:
            memo[key] = _Memoised(in_progress, frozenset(), frozenset())
        frame = _Frame(set(), set(), {})
        self._frames.append(frame)
        try:
            value = compute()
        except BaseException:
            memo.pop(key, None)  # a time limit mid-way must not leave the placeholder as the answer
            raise
        finally:
            # frames nest (a computation ends before the one that started it), so the innermost
            # is this one; found by identity -- two frames with equal contents are different frames
            while self._frames and self._frames.pop() is not frame:
                pass
        memo[key] = _Memoised(value, frozenset(frame.paths), frozenset(frame.words), frozenset(frame.summaries.items()))
        if frame.paths or frame.words or frame.summaries:
            self._charge(frame.paths, frame.words, frame.summaries)
        return value

    def forget(self, namespace: str, key: Hashable) -> None:
        """Drop a memoised answer: one computed while a question it depends on was still being
        answered (a cycle) is incomplete, and must be asked again rather than reused."""
        self._memos.get(namespace, {}).pop(key, None)

    def _charge(self, paths: AbstractSet[Path], words: AbstractSet[str], summaries: dict[str, str] | None = None) -> None:
        """Record dependencies for the file under analysis and the computation now running."""
        self.touched.update(paths)
        self.mention_words.update(words)
        if summaries:
            self.summary_deps.update(summaries)
        if self._frames:
            top = self._frames[-1]
            top.paths.update(paths)
            top.words.update(words)
            if summaries:
                top.summaries.update(summaries)

    # -- per-module summaries (early cut-off) -------------------------------
    def summaries_over(self, kind: str, words: Sequence[str], select: str = "") -> list[tuple[SourceFile, Any]]:
        """The part ``select`` of the ``kind`` summary of every file whose text holds one of
        ``words`` (by path) -- e.g. what every langgraph module makes checkpointed -- charged as
        one *value* (see :mod:`resume_audit.facts.summaries`): the analysis depends on what the
        summaries say, not on the bytes they were computed from, so an edit of a module that
        leaves its summary unchanged invalidates no cached result that only asked this. One
        dependency for the whole question, not one per module: a result's cache entry stays small
        however many modules answer."""
        parts = self._parts_over(kind, words, select)
        self._charge(frozenset(), frozenset(), {summary_key(kind, words, select): parts_digest((e.path, part) for e, part in parts)})
        return parts

    def _parts_over(self, kind: str, words: Sequence[str], select: str) -> list[tuple[SourceFile, Any]]:
        """The non-empty parts ``select`` of the ``kind`` summaries of the files mentioning
        ``words``, in path order. The modules' values are gathered once per scan and question
        (every file asks the same one with its own select), unless a summary of the kind is being
        computed meanwhile: its placeholder must not be kept as its value."""
        key = (kind, tuple(words))
        built = self._parts_indexes.get(key)
        if built is not None:
            index, entries = built
            self._charge(frozenset(), frozenset(words))  # as files_mentioning charges a first asker
        else:
            entries = {}
            self._search_together(words)
            for word in words:
                for entry in self.files_mentioning(word):
                    entries.setdefault(entry.path, entry)
            index = PartsIndex(kind, [(p, self.summary_value(kind, e)) for p, e in entries.items()])
            if not self._summaries_computing:  # (the values it just computed are final by now)
                self._parts_indexes[key] = (index, entries)
        return [(entries[p], part) for p, part in index.parts(select)]

    def summary_digest(self, key: str) -> str | None:
        """The current digest of the summaries' value ``key`` names (None: an unknown kind)."""
        if key in self._digests:
            return self._digests[key]
        kind, words, select = split_summary_key(key)
        digest: str | None = None
        if kind in SUMMARY_KINDS:
            digest = parts_digest((e.path, part) for e, part in self._parts_over(kind, words, select))
        self._digests[key] = digest  # summaries are fixed for the scan: every cached result asks the same
        return digest

    def known_digest(self, key: str) -> tuple[str | None] | None:
        """``(digest,)`` when :meth:`summary_digest` already answered ``key`` this scan, else None."""
        return (self._digests[key],) if key in self._digests else None

    def summary_value(self, kind: str, entry: SourceFile) -> Any:
        """Module ``entry``'s whole summary of ``kind``: from this scan's memo, else from the
        store (valid while every module and word search it rested on is unchanged), else
        computed -- in a frame of its own, so the modules the computation parsed are charged to
        the summary, never to the file whose analysis asked."""
        memo_key = (kind, entry.path)
        if memo_key in self._summary_values:
            return self._summary_values[memo_key]
        stored = self._summaries.lookup(kind, entry.path, self)
        if stored is not None:
            self._summary_values[memo_key] = stored
            return stored
        self._summary_values[memo_key] = SUMMARY_KINDS[kind].empty  # a cycle sees nothing new
        saved = (self.touched, self.mention_words, self.summary_deps, self._frames)
        self.touched, self.mention_words, self.summary_deps, self._frames = set(), set(), {}, []
        self._summaries_computing += 1
        try:
            module = self.load(entry)
            value = SUMMARY_KINDS[kind].compute(self, module) if module is not None else SUMMARY_KINDS[kind].empty
            deps = _Frame(set(self.touched), set(self.mention_words), dict(self.summary_deps))
        except BaseException:
            self._summary_values.pop(memo_key, None)
            raise
        finally:
            self._summaries_computing -= 1
            self.touched, self.mention_words, self.summary_deps, self._frames = saved
        self._summary_values[memo_key] = value
        self._summaries.record(kind, entry.path, value, deps.paths, deps.words, deps.summaries, self)
        return value

    # -- modules ----------------------------------------------------------
    def load(self, entry: SourceFile) -> ModuleFacts | None:
        """The parsed module of ``entry`` (parsed on first use; None if it cannot be)."""
        self._charge({entry.path}, frozenset())
        if entry.path not in self._loaded:
            self._loaded[entry.path] = self._loader(entry) if self._loader is not None else None
        return self._loaded[entry.path]

    def give_up(self, entry: SourceFile) -> None:
        """Treat ``entry`` as unloadable for the rest of the scan (its analysis ran out of time)."""
        self._loaded.setdefault(entry.path, None)

    def entries_named(self, name: str) -> list[SourceFile]:
        """Files that ``import name`` may denote, as the code is really run.

        The name computed from ``__init__.py`` files is tried first. Real projects
        are also run from a sub-folder (``cd backend && uvicorn app.main:app``), use
        ``src/`` layouts and PEP 420 namespace packages, push folders onto
        ``sys.path``, or carry a stray ``__init__.py`` one level too high; for those,
        every file whose path ends in the dotted name (``.../app/main.py`` or
        ``.../app/main/__init__.py``) matches, and :func:`_closest` prefers the one
        nearest the importer.
        """
        exact = self._files.get(name)
        if exact:
            return exact
        if not name or name.startswith("."):
            return []
        memo = self._suffix_memo.get(name)
        if memo is not None:
            return memo
        if self._by_tail is None:
            self._by_tail = {}
            for entries in self._files.values():  # (in this order: _closest prefers the first of equals)
                for e in entries:
                    path = os.fspath(e.path)
                    tail = os.path.basename(os.path.dirname(path)) if e.is_package else _stem(os.path.basename(path))
                    self._by_tail.setdefault(tail, []).append(e)
        parts = name.split(".")
        found = []
        for e in self._by_tail.get(parts[-1], ()):
            dirs = e.path.parent.parts if not e.is_package else e.path.parent.parent.parts
            if len(parts) == 1 or tuple(dirs[-(len(parts) - 1):]) == tuple(parts[:-1]):
                found.append(e)
        self._suffix_memo[name] = found
        return found

    def _folders(self) -> dict[str, list[SourceFile]]:
        """The project's files by the folder they sit in: the project-wide indexes are built per
        folder (a 20,000-file tree has 1,300), from strings -- a ``Path`` property costs
        microseconds, and they were worked out per file, 0.3 s of every scan at that size."""
        if self._by_folder is None:
            by_folder: dict[str, list[SourceFile]] = {}
            for entries in self._files.values():
                for e in entries:
                    by_folder.setdefault(os.path.dirname(os.fspath(e.path)), []).append(e)
            self._by_folder = by_folder
        return self._by_folder

    def directories(self) -> set[Path]:
        """Every folder holding a file of the project (for manifests that sit beside the code)."""
        return {Path(folder) for folder in self._folders()}

    def knows_module(self, name: str) -> bool:
        return bool(self.entries_named(name))

    def is_directory_package(self, name: str) -> bool:
        """A folder of the project whose path ends in ``name``: a PEP 420 namespace
        package (no ``__init__.py``) that ``from name import mod`` can import from."""
        if self._dir_tails is None:
            tails: set[tuple[str, ...]] = set()
            for folder in self._folders():
                parts = Path(folder).parts
                tails.update(tuple(parts[-k:]) for k in range(1, min(len(parts), 6)))
            self._dir_tails = tails
        return tuple(name.split(".")) in self._dir_tails

    def is_local_name(self, top: str) -> bool:
        """Is ``top`` a folder or module name of this project (so ``import top...`` is ours)?
        A name the standard library or an installed distribution provides is not: a
        ``langgraph/`` folder of examples does not make ``import langgraph`` local."""
        if is_installed_top_level(top):
            return False
        if self._local_tops is None:
            tops: set[str] = set()
            for folder, entries in self._folders().items():
                tops.update(Path(folder).parts[-3:])
                tops.update(_stem(os.path.basename(os.fspath(e.path))) for e in entries)
            self._local_tops = tops
        return top in self._local_tops

    def unresolved_imports(self, module: ModuleFacts) -> list[str]:
        """Imports of ``module`` that name the project's own modules but match no file of it:
        cross-module tracing is blind there, and the user must be told."""
        out = []
        for name in sorted(module.imported_modules):
            if name.startswith(".") or not self.is_local_name(name.split(".")[0]):
                continue
            parts = name.split(".")
            if self.is_directory_package(name) or any(self.entries_named(".".join(parts[:i])) for i in range(len(parts), 0, -1)):
                continue
            out.append(name)
        # ``from x import y`` records both x and x.y: report the module once
        return [n for n in out if not any(n.startswith(o + ".") for o in out)]

    def modules_named(self, name: str) -> list[ModuleFacts]:
        out = []
        for entry in self.entries_named(name):
            m = self.load(entry)
            if m is not None:
                out.append(m)
        return out

    def module_names(self) -> list[str]:
        return sorted(self._files)

    @property
    def modules(self) -> list[ModuleFacts]:
        """Every module of the project -- parses them all: prefer :meth:`files_mentioning`."""
        return [m for name in self.module_names() for m in self.modules_named(name)]

    @property
    def by_name(self) -> "_LazyModules":
        """``project.by_name.get("pkg.mod", ())`` -- parses only the modules asked for."""
        return _LazyModules(self)

    def modules_mentioning(self, words: Iterable[str]) -> list[ModuleFacts]:
        """Parsed modules whose text contains any of ``words`` (a byte search first, so a
        whole-project question such as "which modules import langgraph" parses only those)."""
        seen: dict[Path, SourceFile] = {}
        words = list(words)
        self._search_together(words)
        for word in words:
            for entry in self.files_mentioning(word):
                seen.setdefault(entry.path, entry)
        out = []
        for path in sorted(seen):
            m = self.load(seen[path])
            if m is not None:
                out.append(m)
        return out

    def modules_calling(self, words: Iterable[str], name: str) -> list[ModuleFacts]:
        """Parsed modules that may call a function named ``name`` (by that name, or handing it to
        a runner): those whose text holds one of ``words``, narrowed by their summary of called
        names. A module that only defines or mentions the name is neither parsed nor a
        dependency: its summary says it calls no such function, and stays so through edits
        that call nothing new of that name."""
        out = []
        for entry, calls in self.summaries_over(CALLED_NAMES.name, list(words), name):
            if not calls:
                continue
            m = self.load(entry)
            if m is not None:
                out.append(m)
        return out

    def modules_using(self, packages: Iterable[str]) -> list[ModuleFacts]:
        """Parsed modules that import one of ``packages`` (``import P`` / ``from P``)."""
        packages = tuple(packages)
        return [m for m in self.modules_mentioning(import_words(packages)) if m.uses_any(packages)]

    def module_for_display(self, display: str) -> ModuleFacts | None:
        for path, module in self._loaded.items():
            if module is not None and module.display_path == display:
                return module
        return None

    def _search_together(self, words: Sequence[str]) -> None:
        """Have the engine's index search ``words`` in one pass (a big tree's text is partly
        spilled to disk, and reading it back once per word would cost a read per word); each
        is then answered from its memo by :meth:`files_mentioning`, charged as usual."""
        many = getattr(self._find_mentions, "many", None)
        pending = [w for w in words if w not in self._mentions]
        if many is not None and len(pending) > 1:
            many(pending)

    def files_mentioning(self, word: str) -> list[SourceFile]:
        """Project files whose text contains ``word`` (a cheap test that avoids parsing
        every file: e.g. which files might serve HTTP requests)."""
        self._charge(frozenset(), {word})
        if self._by_path is None:
            self._by_path = {e.path: e for entries in self._files.values() for e in entries}
            self._by_str = {str(p): p for p in self._by_path}
        if word not in self._mentions:
            if self._find_mentions is not None:
                by_str = self._by_str or {}
                found = [by_str[k] for k in self._find_mentions(word) if k in by_str]
            else:
                found = [p for p, m in self._loaded.items() if m is not None and word in m.source]
            self._mentions[word] = sorted(found)
        return [self._by_path[p] for p in self._mentions[word]]

    def resolver(self, module: ModuleFacts) -> Resolver:
        r = self._resolvers.get(id(module))
        if r is None:
            r = self._resolvers[id(module)] = Resolver(module, self)
        return r

    # -- symbols ----------------------------------------------------------
    def lookup(self, qualified: str, *, near: ModuleFacts | None = None, depth: int = 0) -> FunctionInfo | ClassInfo | None:
        """The project function or class ``qualified`` names, following re-exports."""
        if depth > 5 or not qualified:
            return None
        parts = qualified.split(".")
        for i in range(len(parts) - 1, 0, -1):
            entries = self.entries_named(".".join(parts[:i]))
            if entries and near is not None and parts[0] in sys.stdlib_module_names:
                # a folder named like a standard-library module (a vendored copy) shadows it only
                # where it is on the path of the importing program: beside an ancestor of the importer
                entries = [e for e in entries if _importable_from(e, near.path)]
            if not entries:
                continue
            module = self.load(_closest(entries, near))  # only the file the import denotes is parsed
            if module is None:  # that one cannot be parsed: the nearest of the others that can
                loaded = [m for m in (self.load(e) for e in entries) if m is not None]
                if not loaded:
                    continue
                module = _closest(loaded, near)
            rest = parts[i:]
            found = module.find_function(".".join(rest)) or module.find_class(".".join(rest))
            if found is not None:
                return found
            if rest[0] in module.imports:
                return self.lookup(".".join([module.imports[rest[0]], *rest[1:]]), near=module, depth=depth + 1)
            # a method of a class: Class.method where the method is inherited is not followed
            return None
        return None

    def function(self, qualified: str, near: ModuleFacts | None = None) -> FunctionInfo | None:
        found = self.lookup(qualified, near=near)
        if isinstance(found, ClassInfo):
            return found.methods.get("__init__")
        return found

    def callees(self, call: CallInfo, module: ModuleFacts) -> list[FunctionInfo]:
        """Project functions ``call`` may invoke (empty when it leaves the project).

        A call of a tool-dispatching helper (``run_tool(name, args)`` looking the tool up by
        ``name``) stands for the tools it can dispatch to with this call's name."""
        from resume_audit.analysis.effects import graphql_read_call
        from resume_audit.frameworks.langchain_tools import dispatch_targets, tool_callees

        out: list[FunctionInfo] = []
        resolver = self.resolver(module)
        for name in resolver.call_names(call.node, call.function):
            fn = self.function(name, near=module)
            if fn is None or graphql_read_call(call.node, fn, resolver, call.function):
                continue
            targets = dispatch_targets(call.node, fn, call.function, module, self)
            for target in ([fn] if targets is None else targets):
                if target not in out:
                    out.append(target)
        for fn in self._callback_targets(call, module):
            if fn not in out:
                out.append(fn)
        if not out:
            # a LangChain tool object called (``tool.invoke(args)``, a registry lookup): the
            # call runs the tool's function -- framework knowledge, imported lazily (the
            # frameworks package builds on this module)
            out = list(self.cached("tool-callees", id(call.node), lambda: tool_callees(call.node, call.function, module, self)))
        if not out:
            # what the call's callee may hold, followed by the value-flow engine: a method of an
            # object built by a factory or held in a registry, a function handed in as a parameter
            from resume_audit.analysis.flow.engine import flow_of

            out = [fn for fn in flow_of(self).callees(call) if not graphql_read_call(call.node, fn, resolver, call.function)]
        return out

    def _callback_targets(self, call: CallInfo, module: ModuleFacts) -> list[FunctionInfo]:
        """Functions handed to a runner that calls them: ``loop.run_in_executor(None, send, ...)``,
        ``executor.submit(send, ...)``, ``asyncio.to_thread(send, ...)``,
        ``background_tasks.add_task(send, ...)``, ``threading.Thread(target=send)``: the call
        runs them (now or soon), so their effects are the call's."""
        spec = CALLBACK_RUNNERS.get(_called_name(call.node) or "")
        if spec is None:
            return []
        index, keyword_name = spec
        target = None
        for arg in call.node.args:
            if arg.keyword is not None and arg.keyword.value == keyword_name:
                target = arg.value
        if target is None and index is not None:
            positional = [a.value for a in call.node.args if a.keyword is None and not a.star]
            target = positional[index] if len(positional) > index else None
        if target is None:
            return []
        if isinstance(target, cst.Call):  # functools.partial(send, ...)
            names = self.resolver(module).call_names(target, call.function)
            if any(n.endswith("partial") for n in names) and target.args:
                target = target.args[0].value
        out = []
        for name in self.resolver(module).names(target, call.function):
            fn = self.function(name, near=module)
            if fn is not None:
                out.append(fn)
        return out

    def arguments_for(self, fn: FunctionInfo, param: str) -> list[Argument]:
        """What callers pass to ``fn``'s parameter ``param``: every call in the project that
        invokes ``fn`` directly (positionally or by keyword) or hands it to a runner with its
        arguments (``background_tasks.add_task(fn, a, b)``, ``executor.submit(fn, a)``), plus
        the parameter's default. A value crosses the function boundary this way, so a rule
        judging what a parameter holds (an id minted by the route that schedules the job) can
        look at where it comes from. Memoised per function and parameter."""
        return self.cached("arguments_for", (id(fn), param), lambda: self._arguments_for(fn, param), in_progress=[])

    def _arguments_for(self, fn: FunctionInfo, param: str) -> list[Argument]:
        names = fn.param_names()
        if param not in names:
            return []
        index = names.index(param) - (1 if fn.is_method and names and names[0] in ("self", "cls") else 0)
        out: list[Argument] = []
        p = fn.param(param)
        if p is not None and p.default is not None:
            out.append(Argument(p.default, fn.parent, fn.module, None))
        for module in self.modules_calling(_call_words(fn.name), fn.name):
            for call in module.all_calls:
                if not _may_call(call.node, fn.name):
                    continue
                value = self._argument_at(call, module, fn, param, index)
                if value is not None:
                    out.append(Argument(value, call.function, module, call))
        return out

    def callers(self, fn: FunctionInfo) -> list[tuple[CallInfo, ModuleFacts]]:
        """Calls anywhere in the project that invoke ``fn`` directly (not through a runner):
        where a value ``fn`` returns is used. Memoised."""
        return self.cached("callers", id(fn), lambda: [
            (call, module)
            for module in self.modules_calling([f"{fn.name}("], fn.name)
            for call in module.all_calls
            if _called_name(call.node) == fn.name and any(c is fn for c in self._direct_callees(call, module))
        ])

    def _argument_at(self, call: CallInfo, module: ModuleFacts, fn: FunctionInfo, param: str, index: int) -> cst.BaseExpression | None:
        """The value ``call`` gives ``fn``'s parameter (``index`` counts positionals after ``self``),
        when the call invokes ``fn`` directly or hands it to a runner with its arguments."""
        direct = any(c is fn for c in self._direct_callees(call, module))
        if not direct and fn not in self._callback_targets(call, module):
            return None
        for arg in call.node.args:
            if arg.keyword is not None and arg.keyword.value == param:
                return arg.value
        positional = [a.value for a in call.node.args if a.keyword is None and not a.star]
        if not direct:  # ``add_task(fn, a, b)``: fn's arguments follow it
            at, _ = CALLBACK_RUNNERS.get(_called_name(call.node) or "", (None, ""))
            if at is None:
                return None
            positional = positional[at + 1:]
        return positional[index] if 0 <= index < len(positional) else None

    def _direct_callees(self, call: CallInfo, module: ModuleFacts) -> list[FunctionInfo]:
        out = []
        for name in self.resolver(module).call_names(call.node, call.function):
            found = self.function(name, near=module)
            if found is not None:
                out.append(found)
        return out

    def return_type_of(self, qualified: str, near: ModuleFacts | None = None) -> str | None:
        """``make_client`` returning ``httpx.Client(...)`` has return type ``httpx.Client``.
        ``near``: the module asking (a vendored ``logging/`` is not the ``logging`` it imports
        unless it is on that module's path, as :meth:`lookup` decides)."""
        fn = self.lookup(qualified, near=near)
        if not isinstance(fn, FunctionInfo):
            return None
        annotation = fn.node.returns.annotation if fn.node.returns is not None else None
        if annotation is not None and not isinstance(annotation, cst.SimpleString):
            # a lazy getter ``def get_client() -> GitHubClient`` returns a module global set
            # elsewhere: the annotation says what it is
            names = self.resolver(fn.module).names(annotation, fn.parent)
            names = {n for n in names if n not in _NOT_TYPES}
            if names:
                return sorted(names)[0]
        for ret in fn.returns:
            if isinstance(ret.value, cst.Call):
                names = self.resolver(fn.module).call_names(ret.value, fn)
                if names:
                    return sorted(names)[0]
        return None

    def attribute_type(self, qualified: str, depth: int, near: ModuleFacts | None = None) -> str | None:
        """``pkg.mod.Service.client`` -> ``httpx.Client`` when a method sets ``self.client = httpx.Client()``
        (``near``: the module asking, as for :meth:`return_type_of`)."""
        if depth > 4:
            return None
        owner, _, attr = qualified.rpartition(".")
        cls = self.lookup(owner, near=near)
        if not isinstance(cls, ClassInfo):
            return None
        resolver = self.resolver(cls.module)
        for binding in cls.attributes.get(attr, []):
            fn = cls.module.enclosing_function(binding.value)
            names = resolver._names(binding.value, fn, None, depth + 1)
            if names:
                return sorted(names)[0]
        for binding in cls.body_bindings:
            if binding.name == attr and binding.kind == "assign":
                names = resolver._names(binding.value, None, None, depth + 1)
                if names:
                    return sorted(names)[0]
        return None

    # -- reachability -----------------------------------------------------
    def reach(
        self,
        key: str,
        classify: Callable[[CallInfo, ModuleFacts], T | None],
        call: CallInfo,
        module: ModuleFacts,
        budget: int = MAX_HELPER_DEPTH,
    ) -> Reached[T] | None:
        """The first path from ``call`` to a call ``classify`` accepts, through at most
        ``budget`` levels of project helpers.

        ``key`` names the question so answers are memoised per question across rules.
        The depth bound keeps a scan from parsing a whole monorepo through chains of
        helpers; effects hidden deeper than that are not followed (documented).
        """
        direct = classify(call, module)
        if direct is not None:
            return Reached((call,), (module,), direct)
        if budget <= 0:
            return None
        for callee in self.callees(call, module):
            inner = self.function_reaches(key, classify, callee, budget - 1)
            if inner is not None:
                return Reached((call, *inner.calls), (module, *inner.modules), inner.hit)
        return None

    def function_reaches(
        self, key: str, classify: Callable[[CallInfo, ModuleFacts], T | None], fn: FunctionInfo,
        budget: int = MAX_HELPER_DEPTH,
    ) -> Reached[T] | None:
        """The first call in ``fn``'s body that reaches a hit (memoised; recursion-safe)."""
        def first_reaching() -> Reached[T] | None:
            for call in fn.calls:
                found = self.reach(key, classify, call, fn.module, budget)
                if found is not None:
                    return found
            return None

        return self.cached(f"reaches:{key}", (id(fn), budget), first_reaching, in_progress=None)


class _LazyModules:
    """A read-only ``{module name: [ModuleFacts]}`` view that parses on access."""

    def __init__(self, project: Project) -> None:
        self._project = project

    def get(self, name: str, default=()):
        return self._project.modules_named(name) or default

    def __getitem__(self, name: str) -> list[ModuleFacts]:
        found = self._project.modules_named(name)
        if not found:
            raise KeyError(name)
        return found

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._project.knows_module(name)


def _stem(name: str) -> str:
    """``Path(name).stem`` for a file name, without making a Path."""
    dot = name.rfind(".")
    return name[:dot] if 0 < dot < len(name) - 1 else name


def _importable_from(entry: SourceFile, importer: Path) -> bool:
    """Is the folder ``entry``'s top-level package (or module) sits in an ancestor of ``importer``?"""
    depth = entry.module_name.count(".") + (1 if entry.is_package else 0)
    if depth >= len(entry.path.parents):
        return True
    root = entry.path.parents[depth]
    return importer.parent == root or root in importer.parent.parents


_Located = TypeVar("_Located", ModuleFacts, SourceFile)


def _closest(candidates: list[_Located], near: ModuleFacts | None) -> _Located:
    """Several files can share a dotted name (two scripts called graph.py): prefer the importer's folder."""
    if near is None or len(candidates) == 1:
        return candidates[0]
    near_dir = near.path.parent
    for c in candidates:
        if c.path.parent == near_dir:
            return c
    best = max(candidates, key=lambda c: len(_common_prefix(c.path.parts, near_dir.parts)))
    return best


def _common_prefix(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    out = []
    for x, y in zip(a, b):
        if x != y:
            break
        out.append(x)
    return tuple(out)
