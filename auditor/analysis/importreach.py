"""Which modules can name a module's functions at all: the import graph read from the text.

"What do callers pass to ``run``?" was answered by parsing every module that calls something
spelled ``run`` -- on a tree with the standard library beside the agent code, hundreds of modules
that cannot see the agent's ``run`` (issue 35). A call resolves to a project function only
through names: the caller's imports, and the imports of the modules those lead to (re-exports,
return types, attribute types), looked up by dotted suffix (:meth:`ModuleIndex.entries_named
<resume_audit.analysis.modules.ModuleIndex.entries_named>`, which is how ``sys.path`` edits and
sub-folder runs resolve). So a module that can resolve a name to module ``D`` either is ``D``,
or holds the last component of the name of some module that can (a file's stem, a package's
folder) among the words of its import statements, or sits inside the folder of a package that
can (``from . import x`` names the package by the importer's own place). :func:`reaching`
follows that relation backwards from ``D``: a superset of the modules whose calls can resolve
to ``D``'s functions, found with word searches and a regular expression over the import lines
of the files that mention a name -- no parse. Star imports name nothing the resolver follows.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Callable

from resume_audit.analysis.memo import Ledger
from resume_audit.discovery.modulenames import SourceFile

#: a line holding ``import`` (with ``from x`` before it, or a name list after it), up to a
#: closing bracket when the names are bracketed over several lines
_IMPORT_LINE = re.compile(rb"^[^\n]*\bimport\b[^\n(]*(?:\([^)]*\)?)?[^\n]*", re.MULTILINE)
_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")


def import_words(raw: bytes) -> frozenset[str]:
    """Every identifier on the lines of ``raw`` that hold the keyword ``import`` (a bracketed name
    list's continuation lines and backslash continuations included): a superset of the names the
    module's import statements spell, docstrings and comments that say "import" adding a few."""
    joined = raw.replace(b"\\\r\n", b" ").replace(b"\\\n", b" ")
    words: set[str] = set()
    for line in _IMPORT_LINE.finditer(joined):
        words.update(w.decode("ascii") for w in _WORD.findall(line.group()))
    return frozenset(words)


def tail_name(entry: SourceFile) -> str:
    """The name an import spells last to denote ``entry``: its stem, or its package's folder."""
    path = os.fspath(entry.path)
    base = os.path.basename(path)
    if entry.is_package or base == "__init__.py":
        return os.path.basename(os.path.dirname(path))
    dot = base.rfind(".")
    return base[:dot] if dot > 0 else base


class ImportReach:
    """The modules that can resolve a name to a given module (memoised per module for one scan).

    ``mentions``: the project's word search (charged to the ledger as usual); ``text_of``: a
    file's bytes; ``files``: every file of the scan. The import lines read are charged as the
    content of their files (a changed import changes the answer)."""

    def __init__(
        self,
        ledger: Ledger,
        files: Callable[[], list[SourceFile]],
        mentions: Callable[[str], list[SourceFile]],
        text_of: Callable[[Path], bytes | None],
    ) -> None:
        self._ledger = ledger
        self._files = files
        self._mentions = mentions
        self._text_of = text_of
        self._words: dict[Path, frozenset[str]] = {}
        self._reaching: dict[Path, tuple[frozenset[Path], frozenset[Path], frozenset[str]]] = {}

    def _import_words(self, path: Path) -> frozenset[str]:
        found = self._words.get(path)
        if found is None:
            raw = self._text_of(path)
            found = self._words[path] = import_words(raw) if raw is not None else frozenset()
        return found

    def reaching(self, target: SourceFile) -> frozenset[Path]:
        """The resolved paths of the modules that can resolve a name to ``target`` (it included)."""
        kept = self._reaching.get(target.path)
        if kept is None:
            kept = self._reaching[target.path] = self._compute(target)
        reached, read, words = kept
        self._ledger.charge(read, frozenset(words))
        return reached

    def _compute(self, target: SourceFile) -> tuple[frozenset[Path], frozenset[Path], frozenset[str]]:
        reached: dict[Path, SourceFile] = {target.path: target}
        read: set[Path] = set()
        words: set[str] = set()
        pending = [target]
        while pending:
            module = pending.pop()
            tail = tail_name(module)
            words.add(tail)
            for entry in self._mentions(tail):
                if entry.path in reached:
                    continue
                read.add(entry.path)
                if tail in self._import_words(entry.path):
                    reached[entry.path] = entry
                    pending.append(entry)
            if module.is_package or os.path.basename(os.fspath(module.path)) == "__init__.py":
                folder = os.fspath(module.path.parent) + os.sep
                for entry in self._files():
                    if entry.path not in reached and os.fspath(entry.path).startswith(folder):
                        reached[entry.path] = entry
                        pending.append(entry)
        return frozenset(reached), frozenset(read), frozenset(words)
