"""``merge``: the slices of a sharded sweep (``crash-sweep --shard K/N``) joined into one report.

Each shard's JSON output carries its :class:`~resume_audit.dynamic.shard.ShardPart`; :func:`merge` rebuilds
from them the report an unsharded sweep gives: same cells in the same order, same findings, same
notifications, so the JSON and SARIF written from it are the same bytes.
"""

from __future__ import annotations

from typing import Any

from resume_audit.codec import encode
from resume_audit.dynamic.cells import Cell
from resume_audit.dynamic.parent.build import Locator, build_findings
from resume_audit.dynamic.parent.notes import notifications
from resume_audit.dynamic.parent.stub_artefacts import drop_stub_artefacts
from resume_audit.dynamic.probes import validity
from resume_audit.dynamic.report import SweepReport
from resume_audit.dynamic.shard import MergeError, ShardPart

__all__ = ["MergeError", "merge"]


def merge(documents: list[dict[str, Any]]) -> SweepReport:
    """The unsharded report from the JSON outputs of shards 1..N of one sweep (any order)."""
    if not documents:
        raise MergeError("no shard files given")
    parts = []
    for doc in documents:
        if "shard" not in doc:
            raise MergeError("not a crash-sweep shard (write shards with `crash-sweep --shard K/N --format json`)")
        parts.append(ShardPart.from_data(doc["shard"]))
    parts.sort(key=lambda p: p.shard.index)
    first, header = parts[0], parts[0].header
    count = first.shard.count
    if sorted(p.shard.index for p in parts) != list(range(1, count + 1)) or any(p.shard.count != count for p in parts):
        have = ", ".join(str(p.shard) for p in parts)
        raise MergeError(f"expected shards 1/{count} .. {count}/{count} exactly once each; got {have}")
    for part in parts[1:]:
        for key in ("target", "framework", "backend", "protocol", "versions", "kill_points"):
            mine, theirs = getattr(part.header, key), getattr(header, key)
            if mine != theirs:
                raise MergeError(
                    f"shard {part.shard} swept a different {key} than shard {first.shard}: "
                    f"{encode(mine)!r} vs {encode(theirs)!r}"
                )
        if part.order != first.order:
            raise MergeError(f"shard {part.shard} planned different cells than shard {first.shard} (a changed graph?)")
    by_slot: dict[str, Cell] = {}
    for part in parts:
        for label, cell in part.cells:
            by_slot.setdefault(label, cell)
    sources: list[validity.Source] = [("uninterrupted run", list(first.dry.invalid))]
    sources += sorted((src for part in parts for src in part.validity_sources), key=lambda s: s[0])
    if "validity" in by_slot:
        by_slot["validity"] = validity.judge(sources, True, first.dry.schema)
    missing = [label for label in first.order if label not in by_slot]
    if missing:
        raise MergeError(f"no shard swept {len(missing)} planned cell(s), e.g. {missing[0]!r}")
    cells = [by_slot[label] for label in first.order]
    notes = sorted({note for part in parts for note in part.notes})
    notes = sorted({*notes, *drop_stub_artefacts(cells, notes)})
    report = SweepReport(
        target=header.target,
        backend=header.backend,
        framework=header.framework,
        versions=dict(header.versions),
        protocol=header.protocol,
        cells=cells,
        findings=[],
        complete=header.complete,
        kill_points=header.kill_points,
        cwd=first.cwd,
        plane=header.plane,
    )
    locator = Locator(first.dry.nodes, first.dry.target_location, report.cwd)
    report.findings = build_findings(cells, locator, report.target)
    report.nodes = dict(first.dry.nodes)
    report.notifications = notifications(notes) + first.notifications
    return report
