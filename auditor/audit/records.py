"""The ``audit`` section of an audit's JSON report, typed: what ``render`` writes and ``merge`` reads back.

``audit --format json`` adds to the scan's JSON report an ``audit`` section -- one record per entry point
found, the counts of each confirmation, the time taken, and with ``--shard K/N`` which slice it was --
and ``resume-audit merge`` joins the sections of the slices into the unsharded one. Both sides go through
:mod:`resume_audit.codec`, so a field one writes is a field the other reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from resume_audit.codec import omit_default
from resume_audit.dynamic.request import Shard


@dataclass(frozen=True)
class EntryRecord:
    """One entry point the audit found, and what sweeping it gave."""

    target: str
    framework: str
    kind: str
    path: str
    line: int
    swept: bool
    #: why it was not swept (empty when it was)
    why: str
    #: dealt to another shard, which judged its findings
    elsewhere: bool
    cells: int
    dynamic_findings: int
    #: the answers the sweep used at its interrupts
    answers: list[Any]
    seconds: float
    #: the sweep's input (None: not swept)
    input: Any
    #: the effects the sweep recorded
    effects: list[str]
    #: the ``crash-sweep`` command that reruns this entry point's failing cells, kept (empty: not swept)
    rerun: str = omit_default("")
    #: keyword arguments the factory was called with (the literal ones the project's own callers pass)
    factory_kwargs: dict[str, Any] = omit_default({})


@dataclass(frozen=True)
class AuditSection:
    """The ``audit`` section: every entry point, the confirmation counts, the time, and the slice."""

    entry_points: list[EntryRecord]
    #: confirmation value -> findings with it
    confirmations: dict[str, int]
    seconds: float
    #: ``--shard K/N``: the slice this report is
    shard: Shard | None = omit_default(None)
    #: a merged report: how many slices it joins
    merged_shards: int | None = omit_default(None)
