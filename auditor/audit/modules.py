"""The audit's one parse of each file: the scan's :class:`~resume_audit.facts.collect.ModuleFacts`, shared.

Entry-point discovery, the effect plan and the search for effect sinks all read the same modules; each
is parsed once, with the scan's own parser (LibCST behind the compiler's screen), and never imported.
A file that cannot be read or parsed is None here: the scan reports it, the audit passes it by.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import libcst as cst

from resume_audit.discovery.modulenames import SourceFile, module_name_for

if TYPE_CHECKING:
    from resume_audit.facts.collect import ModuleFacts
    from resume_audit.facts.model import CallInfo

#: how a module is parsed: the scan's loader, or the audit's own (:func:`load_alone`)
Loader = Callable[[SourceFile], "ModuleFacts | None"]


def load_alone(entry: SourceFile) -> ModuleFacts | None:
    """Read, parse and index ``entry`` as the scan does (no project around it)."""
    from resume_audit.engine.scan import load_module
    from resume_audit.facts.collect import ModuleFacts

    loaded = load_module(entry.path, entry.display)
    return loaded if isinstance(loaded, ModuleFacts) else None


class Modules:
    """Parsed modules by resolved path, each loaded once through ``loader`` (the scan's
    ``Project.load`` when an analysis project exists, so its effect model reads the same trees)."""

    def __init__(self, loader: Loader = load_alone) -> None:
        self._loader = loader
        self._facts: dict[Path, ModuleFacts | None] = {}

    def facts(self, path: Path, display: str | None = None) -> ModuleFacts | None:
        """The module at ``path`` (None: unreadable or unparsable); ``display`` names it in its spans."""
        resolved = path.resolve()
        if resolved not in self._facts:
            name, is_package = module_name_for(resolved, resolved=True)
            self._facts[resolved] = self._loader(SourceFile(resolved, display or str(path), name, is_package))
        return self._facts[resolved]

    def method_calls(
        self, files: Iterable[tuple[Path, str]], methods: Collection[str]
    ) -> Iterator[tuple[str, ModuleFacts, CallInfo, str]]:
        """(display path, module, call, method name) for every ``x.<method>(...)`` call of one of ``methods``
        in ``files`` ((path, display) pairs): the questions the audit asks of calls by name (``add_node``,
        ``invoke`` at a ``checkpoint_id``) walk the modules once this way."""
        for path, display in files:
            facts = self.facts(path, display)
            if facts is None:
                continue
            for info in facts.all_calls:
                func = info.node.func
                if isinstance(func, cst.Attribute) and func.attr.value in methods:
                    yield display, facts, info, func.attr.value
