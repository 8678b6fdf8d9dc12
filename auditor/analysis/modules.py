"""Which file is which module, parsed on demand: the project's module index.

An ``import`` names a module; the scan knows files. Real projects are run from a sub-folder,
use ``src/`` layouts and namespace packages, and carry several files with one dotted name, so a
name resolves to the files whose path ends in it, nearest the importer first. Modules are parsed
lazily -- only when an analysis reaches into them -- and every one loaded, and every
project-wide word search ("which files mention X"), is charged to the ledger
(:class:`~resume_audit.analysis.memo.Ledger`) as a dependency of the file under analysis.
"""

from __future__ import annotations

import importlib.machinery
import os
import site
import sys
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable, Sequence, TypeVar

from resume_audit.analysis.importreach import ImportReach
from resume_audit.analysis.memo import Ledger

# named here for the analysis; defined apart so a warm scan names its files without importing libcst
from resume_audit.discovery.modulenames import SourceFile
from resume_audit.facts.model import ModuleFacts
from resume_audit.reading.prefilter import import_words

#: ``word -> paths (as str) of the files whose text contains it``: the engine's index over every
#: file's bytes (it may also have a ``many(words)`` that searches several words in one pass)
MentionSearch = Callable[[str], list[str]]


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


class FileLayout:
    """What the set of the project's files alone decides -- files by dotted name, by last name, by
    folder, the project's top-level names -- built once per set of files: a language server's
    update builds a fresh project over the same files after every keystroke, and rebuilding
    these for 5,000 files cost more than analysing the edited one."""

    #: the layouts of the last few file lists, by identity (the list is kept, so its id stays its own)
    _recent: "dict[int, tuple[object, FileLayout]]" = {}

    def __init__(self, files: Iterable[SourceFile]) -> None:
        self.files: dict[str, list[SourceFile]] = {}
        for f in files:
            self.files.setdefault(f.module_name, []).append(f)
        self.by_path: dict[Path, SourceFile] | None = None
        self.by_str: dict[str, Path] | None = None
        #: last dotted component -> files (for resolving a name the way the code is really run)
        self.by_tail: dict[str, list[SourceFile]] | None = None
        self.suffix_memo: dict[str, list[SourceFile]] = {}
        #: every directory name and module stem of the project: an import whose first
        #: component is one of these is the project's own and should resolve
        self.local_tops: set[str] | None = None
        self.dir_tails: set[tuple[str, ...]] | None = None
        self.by_folder: dict[str, list[SourceFile]] | None = None

    @classmethod
    def shared(cls, files: Iterable[SourceFile]) -> "FileLayout":
        """The layout of ``files``: the same one for the same list object (a scan's workspace keeps
        one list for its whole life; a changed set of files is a new list), else a new one."""
        if not isinstance(files, (list, tuple)):
            return cls(files)
        found = cls._recent.get(id(files))
        if found is not None and found[0] is files:
            return found[1]
        layout = cls(files)
        if len(cls._recent) >= 4:
            cls._recent.pop(next(iter(cls._recent)))
        cls._recent[id(files)] = (files, layout)
        return layout


class ModuleIndex:
    """The project's files by dotted name, folder and text; their parsed modules, loaded lazily."""

    def __init__(
        self,
        ledger: Ledger,
        modules: Iterable[ModuleFacts] = (),
        *,
        files: Iterable[SourceFile] = (),
        loader: Callable[[SourceFile], ModuleFacts | None] | None = None,
        mentions: MentionSearch | None = None,
        text_of: Callable[[Path], bytes | None] | None = None,
    ) -> None:
        self._ledger = ledger
        #: a file's bytes as the scan read them (the engine's), for word tests over a few files
        self._text_of = text_of
        #: (word, resolved path) -> does that file's text hold the word (files_mentioning_among)
        self._held: dict[tuple[str, Path], bool] = {}
        self._reach: ImportReach | None = None
        #: resolved path -> the parsed module (None: it cannot be parsed, or its analysis gave up)
        self.loaded: dict[Path, ModuleFacts | None] = {}
        parsed = []
        for m in modules:
            entry = SourceFile(m.path.resolve(), m.display_path, m.module_name, m.is_package)
            parsed.append(entry)
            self.loaded[entry.path] = m
        self._layout = FileLayout.shared(files) if not parsed else FileLayout([*files, *parsed])
        self._files = self._layout.files
        self._loader = loader
        #: without the engine's word index only the modules given already parsed are searched
        self._find_mentions = mentions
        self._mentions: dict[str, list[Path]] = {}

    # -- loading ----------------------------------------------------------
    def load(self, entry: SourceFile) -> ModuleFacts | None:
        """The parsed module of ``entry`` (parsed on first use; None if it cannot be)."""
        self._ledger.charge({entry.path}, frozenset())
        if entry.path not in self.loaded:
            self.loaded[entry.path] = self._loader(entry) if self._loader is not None else None
        return self.loaded[entry.path]

    def give_up(self, entry: SourceFile) -> None:
        """Treat ``entry`` as unloadable for the rest of the scan (its analysis ran out of time)."""
        self.loaded.setdefault(entry.path, None)

    def is_loaded(self, path: Path) -> bool:
        """Whether the module at (resolved) ``path`` has been parsed this scan."""
        return self.loaded.get(path) is not None

    # -- names ------------------------------------------------------------
    def entries_named(self, name: str) -> list[SourceFile]:
        """Files that ``import name`` may denote, as the code is really run.

        The name computed from ``__init__.py`` files is tried first. Real projects
        are also run from a sub-folder (``cd backend && uvicorn app.main:app``), use
        ``src/`` layouts and PEP 420 namespace packages, push folders onto
        ``sys.path``, or carry a stray ``__init__.py`` one level too high; for those,
        every file whose path ends in the dotted name (``.../app/main.py`` or
        ``.../app/main/__init__.py``) matches, and :func:`closest` prefers the one
        nearest the importer.
        """
        exact = self._files.get(name)
        if exact:
            return exact
        if not name or name.startswith("."):
            return []
        memo = self._layout.suffix_memo.get(name)
        if memo is not None:
            return memo
        if self._layout.by_tail is None:
            self._layout.by_tail = {}
            for entries in self._files.values():  # (in this order: closest prefers the first of equals)
                for e in entries:
                    path = os.fspath(e.path)
                    tail = os.path.basename(os.path.dirname(path)) if e.is_package else _stem(os.path.basename(path))
                    self._layout.by_tail.setdefault(tail, []).append(e)
        parts = name.split(".")
        found = []
        for e in self._layout.by_tail.get(parts[-1], ()):
            dirs = e.path.parent.parts if not e.is_package else e.path.parent.parent.parts
            if len(parts) == 1 or tuple(dirs[-(len(parts) - 1) :]) == tuple(parts[:-1]):
                found.append(e)
        self._layout.suffix_memo[name] = found
        return found

    def entries_imported(self, name: str, importer: Path | None) -> list[SourceFile]:
        """The file ``import name`` in the module at ``importer`` denotes, as Python would pick it: a
        folder named like a standard-library module (a vendored copy) only where it is on the
        importer's path, and of several files sharing the name the one :func:`closest` to the
        importer (two scripts called ``graph.py``; a thousand services each with its own). Empty when
        the project holds none."""
        entries = self.entries_on_path(name, importer)
        return [closest_to(entries, importer)] if len(entries) > 1 and importer is not None else entries

    def entries_on_path(self, name: str, importer: Path | None) -> list[SourceFile]:
        """:meth:`entries_named`, less the folders named like a standard-library module (a vendored
        copy) that are not on the importer's path: such a copy shadows the standard library only
        beside an ancestor of the importer."""
        entries = self.entries_named(name)
        if entries and importer is not None and name.split(".", 1)[0] in sys.stdlib_module_names:
            entries = [e for e in entries if importable_from(e, importer)]
        return entries

    def _folders(self) -> dict[str, list[SourceFile]]:
        """The project's files by the folder they sit in: the project-wide indexes are built per
        folder (a 20,000-file tree has 1,300), from strings -- a ``Path`` property costs
        microseconds, and they were worked out per file, 0.3 s of every scan at that size."""
        if self._layout.by_folder is None:
            by_folder: dict[str, list[SourceFile]] = {}
            for entries in self._files.values():
                for e in entries:
                    by_folder.setdefault(os.path.dirname(os.fspath(e.path)), []).append(e)
            self._layout.by_folder = by_folder
        return self._layout.by_folder

    def directories(self) -> set[Path]:
        """Every folder holding a file of the project (for manifests that sit beside the code)."""
        return {Path(folder) for folder in self._folders()}

    def knows_module(self, name: str) -> bool:
        return bool(self.entries_named(name))

    def is_directory_package(self, name: str) -> bool:
        """A folder of the project whose path ends in ``name``: a PEP 420 namespace
        package (no ``__init__.py``) that ``from name import mod`` can import from."""
        if self._layout.dir_tails is None:
            tails: set[tuple[str, ...]] = set()
            for folder in self._folders():
                parts = Path(folder).parts
                tails.update(tuple(parts[-k:]) for k in range(1, min(len(parts), 6)))
            self._layout.dir_tails = tails
        return tuple(name.split(".")) in self._layout.dir_tails

    def is_local_name(self, top: str) -> bool:
        """Is ``top`` a folder or module name of this project (so ``import top...`` is ours)?
        A name the standard library or an installed distribution provides is not: a
        ``langgraph/`` folder of examples does not make ``import langgraph`` local."""
        if is_installed_top_level(top):
            return False
        if self._layout.local_tops is None:
            tops: set[str] = set()
            for folder, entries in self._folders().items():
                tops.update(Path(folder).parts[-3:])
                tops.update(_stem(os.path.basename(os.fspath(e.path))) for e in entries)
            self._layout.local_tops = tops
        return top in self._layout.local_tops

    def unresolved_imports(self, module: ModuleFacts) -> list[str]:
        """Imports of ``module`` that name the project's own modules but match no file of it:
        cross-module tracing is blind there, and the user must be told."""
        out = []
        for name in sorted(module.imported_modules):
            if name.startswith(".") or not self.is_local_name(name.split(".")[0]):
                continue
            parts = name.split(".")
            if self.is_directory_package(name) or any(
                self.entries_named(".".join(parts[:i])) for i in range(len(parts), 0, -1)
            ):
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

    def all_modules(self) -> list[ModuleFacts]:
        """Every module of the project -- parses them all: prefer :meth:`files_mentioning`."""
        return [m for name in self.module_names() for m in self.modules_named(name)]

    def module_for_display(self, display: str) -> ModuleFacts | None:
        for module in self.loaded.values():
            if module is not None and module.display_path == display:
                return module
        return None

    # -- text -------------------------------------------------------------
    def modules_mentioning(self, words: Iterable[str]) -> list[ModuleFacts]:
        """Parsed modules whose text contains any of ``words`` (a byte search first, so a
        whole-project question such as "which modules import langgraph" parses only those)."""
        seen: dict[Path, SourceFile] = {}
        words = list(words)
        self.search_together(words)
        for word in words:
            for entry in self.files_mentioning(word):
                seen.setdefault(entry.path, entry)
        out = []
        for path in sorted(seen):
            m = self.load(seen[path])
            if m is not None:
                out.append(m)
        return out

    def modules_using(self, packages: Iterable[str]) -> list[ModuleFacts]:
        """Parsed modules that import one of ``packages`` (``import P`` / ``from P``)."""
        packages = tuple(packages)
        return [m for m in self.modules_mentioning(import_words(packages)) if m.uses_any(packages)]

    def search_together(self, words: Sequence[str]) -> None:
        """Have the engine's index search ``words`` in one pass (a big tree's text is partly
        spilled to disk, and reading it back once per word would cost a read per word); each
        is then answered from its memo by :meth:`files_mentioning`, charged as usual."""
        many = getattr(self._find_mentions, "many", None)
        pending = [w for w in words if w not in self._mentions]
        if many is not None and len(pending) > 1:
            many(pending)

    def files_mentioning_among(self, word: str, paths: Iterable[Path]) -> list[SourceFile]:
        """The files at ``paths`` (resolved) whose text contains ``word``, in path order: the
        answer :meth:`files_mentioning` filtered to ``paths`` gives. When the question is about a
        few files (a module's neighbourhood), their own bytes are tested and charged as
        dependencies instead of searching the whole tree's text for the word: a scan asks this for
        hundreds of words, and each whole-tree search reads every byte of the tree (issue 35)."""
        wanted = set(paths)
        if self._text_of is None or len(wanted) > MAX_FILES_SEARCHED_ONE_BY_ONE:
            return [e for e in self.files_mentioning(word) if e.path in wanted]
        by_path = self._entries_by_path()
        entries = sorted((by_path[p] for p in wanted if p in by_path), key=lambda e: e.path)
        self._ledger.charge({e.path for e in entries}, frozenset())
        needle = word.encode("utf-8", "surrogatepass")
        out = []
        held = self._held
        for entry in entries:
            answer = held.get((word, entry.path))
            if answer is None:
                raw = self._text_of(entry.path)
                answer = held[word, entry.path] = raw is not None and needle in raw
            if answer:
                out.append(entry)
        return out

    def reaching(self, module: ModuleFacts) -> frozenset[Path] | None:
        """The resolved paths of the modules that can resolve a name to ``module`` (it included), by
        the import graph read from their text (:mod:`~resume_audit.analysis.importreach`); None
        without the engine's bytes (every module may then be asked)."""
        entry = self._entries_by_path().get(module.path)
        if self._text_of is None or entry is None:
            return None
        if self._reach is None:
            every = [e for entries in self._files.values() for e in entries]
            self._reach = ImportReach(self._ledger, lambda: every, self.files_mentioning, self._text_of)
        return self._reach.reaching(entry)

    def _entries_by_path(self) -> dict[Path, SourceFile]:
        if self._layout.by_path is None:
            self._layout.by_path = {e.path: e for entries in self._files.values() for e in entries}
            self._layout.by_str = {str(p): p for p in self._layout.by_path}
        return self._layout.by_path

    def files_mentioning(self, word: str) -> list[SourceFile]:
        """Project files whose text contains ``word`` (a cheap test that avoids parsing
        every file: e.g. which files might serve HTTP requests)."""
        self._ledger.charge(frozenset(), {word})
        by_path = self._entries_by_path()
        if word not in self._mentions:
            if self._find_mentions is not None:
                by_str = self._layout.by_str or {}
                found = [by_str[k] for k in self._find_mentions(word) if k in by_str]
            else:
                found = [p for p, m in self.loaded.items() if m is not None and word in m.source]
            self._mentions[word] = sorted(found)
        return [by_path[p] for p in self._mentions[word]]


#: above this many files a word is searched in the whole tree's text once (memoised) rather than
#: in each file's bytes: the answers are the same, the cheaper way is taken
MAX_FILES_SEARCHED_ONE_BY_ONE = 256


def _stem(name: str) -> str:
    """``Path(name).stem`` for a file name, without making a Path."""
    dot = name.rfind(".")
    return name[:dot] if 0 < dot < len(name) - 1 else name


def importable_from(entry: SourceFile, importer: Path) -> bool:
    """Is the folder ``entry``'s top-level package (or module) sits in an ancestor of ``importer``?"""
    depth = entry.module_name.count(".") + (1 if entry.is_package else 0)
    if depth >= len(entry.path.parents):
        return True
    root = entry.path.parents[depth]
    return importer.parent == root or root in importer.parent.parents


_Located = TypeVar("_Located", ModuleFacts, SourceFile)


def closest(candidates: list[_Located], near: ModuleFacts | None) -> _Located:
    """Several files can share a dotted name (two scripts called graph.py): prefer the importer's folder,
    else the one sharing the longest leading run of folders with it. On strings: every lookup of a
    name several files share asks this, and ``Path.parent``/``Path.parts`` per candidate were a tenth
    of an agent-dense scan (issue 35)."""
    if near is None or len(candidates) == 1:
        return candidates[0]
    return closest_to(candidates, near.path)


def closest_to(candidates: list[_Located], importer: Path) -> _Located:
    """:func:`closest` to the module at ``importer``."""
    if len(candidates) == 1:
        return candidates[0]
    near_dir = os.path.dirname(os.fspath(importer))
    for c in candidates:
        if os.path.dirname(os.fspath(c.path)) == near_dir:
            return c
    near_parts = near_dir.split(os.sep)
    return max(candidates, key=lambda c: _common_length(os.fspath(c.path).split(os.sep), near_parts))


def _common_length(a: list[str], b: list[str]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n
