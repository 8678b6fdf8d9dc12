"""Stage 2: which files are parsed and checked -- the candidates.

A file is a candidate when the pre-filter matched it for a rule its own configuration group runs
(a trigger bound to a framework counts only when some file of the scan imports that framework:
known once every file is read), and it is not over the size limit (reported and skipped).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from resume_audit.engine.inventory import Inventory
from resume_audit.findings import Notification, NotificationKind
from resume_audit.reading.prefilter import frameworks_in_scan


@dataclass(frozen=True)
class Candidates:
    """The files to analyse, in the order found, and the frameworks some file of the scan imports."""

    paths: list[Path]
    in_scan: frozenset[str]


def select_candidates(inventory: Inventory, max_file_bytes: int) -> Candidates:
    """The candidates of the inventory; a file over ``max_file_bytes`` is added to its notifications."""
    in_scan = frameworks_in_scan(inventory.matches.values())
    paths: list[Path] = []
    for entry in inventory.files:
        if not worth_parsing(inventory, entry.path, in_scan):
            continue
        too_big = oversized(inventory.sizes[entry.path], max_file_bytes, entry.display)
        if too_big is not None:
            inventory.notifications.append(too_big)
            continue
        paths.append(entry.path)
    return Candidates(paths, in_scan)


def worth_parsing(inventory: Inventory, path: Path, in_scan: frozenset[str]) -> bool:
    """Whether the pre-filter matched the file for a rule its own configuration group runs."""
    match = inventory.matches.get(path)
    if match is None or not inventory.prefilter.is_candidate(match, in_scan):
        return False
    group = inventory.group_of[path]
    if len(group.rule_ids) < len(inventory.read_rule_ids) and not inventory.prefilter.is_candidate_for(
        group.rule_types, match, in_scan
    ):
        return False  # worth parsing for another package's rules, not for its own
    return True


def oversized(size: int, max_file_bytes: int, display: str) -> Notification | None:
    """The notification of a candidate too big to parse, or None."""
    if size <= max_file_bytes:
        return None
    return Notification(
        NotificationKind.SKIPPED,
        f"{size / 1048576:.1f} MB is over the {max_file_bytes / 1048576:.1f} MB limit "
        f"(generated code?); file skipped (raise it with --max-file-size)",
        display,
    )
