"""Loading one module for the analysis: bytes -> text -> syntax tree -> :class:`ModuleFacts`.

Every failure (unreadable, undecodable, unparsable, nested too deep, an indexing bug) becomes a
notification that costs the one file, never the scan. LibCST and the facts are imported here on
first use, not when the engine is: a warm scan whose every result comes from the cache never
parses anything and does without them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from resume_audit.discovery.modulenames import SourceFile, module_name_for
from resume_audit.findings import Notification, NotificationKind
from resume_audit.reading.decoding import SourceText, decode_source
from resume_audit.reading.sourcebytes import read_regular

if TYPE_CHECKING:
    from resume_audit.facts.collect import ModuleFacts


def index_source(source: SourceText) -> ModuleFacts | Notification:
    """Parse and index decoded source."""
    from resume_audit.facts.collect import build_module_facts
    from resume_audit.facts.parse import parse_source

    tree = parse_source(source)
    if isinstance(tree, Notification):
        return tree
    name, is_package = module_name_for(source.path)
    try:
        return build_module_facts(source.path, source.display_path, name, is_package, source.text, tree)
    except RecursionError:
        return Notification(
            NotificationKind.PARSE_ERROR, "nesting too deep to analyse, file skipped", source.display_path
        )
    except Exception as exc:  # an indexing bug must cost one file, not the scan
        return Notification(
            NotificationKind.INTERNAL_ERROR,
            f"could not be indexed ({exc.__class__.__name__}: {str(exc)[:120]}); file skipped, please report",
            source.display_path,
        )


def index_bytes(raw: bytes, entry: SourceFile) -> ModuleFacts | Notification:
    """Decode, parse and index the bytes the scan read for ``entry``."""
    return index_raw(raw, entry.path, entry.display)


def index_raw(raw: bytes, path: Path, display: str) -> ModuleFacts | Notification:
    source = decode_source(raw, path, display)
    if isinstance(source, Notification):
        return source
    return index_source(source)


def load_module(path: Path, display: str) -> ModuleFacts | Notification:
    """Read (a regular file only: never a FIFO's endless wait), parse and index one file; every
    failure becomes a notification."""
    read = read_regular(path, display)
    if isinstance(read, Notification):
        return read
    return index_raw(read[0], path, display)


def preload_analysis() -> None:
    """Import the analysis and every rule (LibCST with them): what a worker's first file would
    import, ~0.3 s of every forked worker's start otherwise."""
    import importlib

    from resume_audit.rules import all_rules

    all_rules()
    for name in (
        "resume_audit.analysis.configs",
        "resume_audit.analysis.effects",
        "resume_audit.analysis.project",
        "resume_audit.facts.parse",
        "resume_audit.frameworks.langchain_tools",
        "libcst.native",
    ):  # (LibCST's parser: imported on its first parse)
        importlib.import_module(name)
