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
    prefilter, matches, group_of = inventory.prefilter, inventory.matches, inventory.group_of
    read_rules = len(inventory.read_rule_ids)
    paths: list[Path] = []
    for entry in inventory.files:
        match = matches.get(entry.path)
        if match is None or not prefilter.is_candidate(match, in_scan):
            continue
        group = group_of[entry.path]
        if len(group.rule_ids) < read_rules and not prefilter.is_candidate_for(group.rule_types, match, in_scan):
            continue  # worth parsing for another package's rules, not for its own
        size = inventory.sizes[entry.path]
        if size > max_file_bytes:
            inventory.notifications.append(
                Notification(
                    NotificationKind.SKIPPED,
                    f"{size / 1048576:.1f} MB is over the {max_file_bytes / 1048576:.1f} MB limit "
                    f"(generated code?); file skipped (raise it with --max-file-size)",
                    entry.display,
                )
            )
            continue
        paths.append(entry.path)
    return Candidates(paths, in_scan)
