"""What a sweep's children noted, as the report's notifications.

Every child writes notes to its cell's ledger (a refused operation, a spawned
process, a stubbed model); the parent adds what it saw of each child's end (a
timeout, processes left behind or escaped, an uncontrolled schedule). Both a
sweep and ``merge`` (which joins the shards' notes) render them here, so a
merged report says exactly what an unsharded one says.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from resume_audit.dynamic import lifetime
from resume_audit.dynamic.effect_spec import MADE_UP_NOTE, MadeUp
from resume_audit.dynamic.ledger import Ledger
from resume_audit.dynamic.parent.runner import ChildRun
from resume_audit.dynamic.values import short
from resume_audit.findings import Notification, NotificationKind

#: (kind, detail)
Note = tuple[str, str]


def collect_notes(runs: Iterable[ChildRun], cell_dirs: Iterable[str]) -> list[Note]:
    """Every distinct note of the cells' ledgers and of how their children ended, sorted."""
    notes: set[Note] = set()
    for d in cell_dirs:
        path = os.path.join(d, "ledger.sqlite")
        if os.path.exists(path):
            ledger = Ledger(path)
            try:
                for _phase, kind, detail in ledger.notes():
                    notes.add((kind, detail))
            finally:
                ledger.close()
    for run in runs:
        if run.leftovers:
            notes.add(
                (
                    "leftovers",
                    "processes the graph spawned were still running when its run ended; the sweep killed them",
                )
            )
        if run.escaped:
            notes.add(lifetime.ESCAPED_NOTE)
        if run.timed_out:
            notes.add(
                (
                    "timeout",
                    f"a {run.spec.role} process exceeded the {run.spec.phase!r} timeout and was killed with its process group",
                )
            )
        if run.result is not None and run.result.schedule_escaped:
            notes.add(
                (
                    "schedule",
                    "a node waited too long for pending checkpoint writes; that run's schedule was not controlled",
                )
            )
    return sorted(notes)


def notifications(notes: Iterable[Note]) -> list[Notification]:
    """The report's notification for each note."""
    out = []
    for kind, detail in notes:
        if kind == "spawn":
            out.append(
                Notification(
                    NotificationKind.INFO,
                    f"the graph spawned a child process ({detail}); the sweep killed "
                    "whatever of it was still running when the cell ended",
                )
            )
        elif kind.startswith("refused-"):
            out.append(Notification(NotificationKind.INFO, f"sandbox refused an operation of the graph: {detail}"))
        elif kind == "timeout":
            out.append(Notification(NotificationKind.TIMEOUT, detail))
        elif kind == "build-effect":
            out.append(Notification(NotificationKind.INFO, f"effect {detail}"))
        elif kind == MADE_UP_NOTE:
            made = MadeUp.from_note(detail)
            if made is not None:
                out.append(
                    Notification(
                        NotificationKind.INFO,
                        f"the stub of {made.effect} answered a made-up {short(made.value)} ({made.how})",
                    )
                )
        else:
            out.append(Notification(NotificationKind.INFO, detail))
    return out
