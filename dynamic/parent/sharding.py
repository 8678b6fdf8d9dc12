"""Sharded sweeps: ``crash-sweep --shard K/N`` runs one slice of the cells, ``merge`` joins the slices.

Every shard runs the uninterrupted run (each needs the reference and the kill
points) and then the jobs the deterministic deal gives it
(:func:`resume_audit.dynamic.parent.sweep._shard_slots`). Its JSON output carries a
``shard`` section -- the full slot order, its cells with their hits, what the
validity judge and the locator need, its notes -- from which :func:`merge`
rebuilds the report an unsharded sweep gives: same cells in the same order,
same findings, same notifications, so the JSON and SARIF written from it are
the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from resume_audit.findings import Notification, NotificationKind, Severity

from resume_audit.dynamic.adapters.base import InvalidState, SourceLocation
from resume_audit.dynamic.parent.build import Locator, build_findings
from resume_audit.dynamic.cells import Cell, CellKind, Hit, Verdict, Witness
from resume_audit.dynamic.probes import validity  # importing the probes registers every witness type
from resume_audit.dynamic.report import SweepReport
from resume_audit.dynamic.request import Shard
from resume_audit.codec import DecodeError, decode, encode

SHARD_FORMAT = "resume-audit/sweep-shard/v2"


class MergeError(ValueError):
    """The shard files do not make one sweep (the CLI's exit code 2)."""


def _witness_data(w: Witness | None) -> dict[str, Any] | None:
    return None if w is None else {"type": type(w).__name__, "data": w.to_json()}


def _witness_from(data: dict[str, Any] | None) -> Witness | None:
    if data is None:
        return None
    cls = Witness.REGISTRY.get(data["type"])
    if cls is None:
        raise MergeError(f"a shard carries a witness of unknown type {data['type']!r} (written by another version?)")
    witness: Witness = decode(cls, data["data"])
    return witness


def cell_to_data(cell: Cell) -> dict[str, Any]:
    return {
        "kind": str(cell.kind), "name": cell.name, "verdict": str(cell.verdict), "detail": cell.detail,
        "effects": encode(cell.effects), "nodes": encode(cell.nodes), "final_state_match": cell.final_state_match,
        "resumed": cell.resumed, "witness": _witness_data(cell.witness),
        "hits": [{"rule": h.rule, "node": h.node, "subject": h.subject, "message": h.message, "flow": encode(h.flow),
                  "witness": _witness_data(h.witness)} for h in cell.hits],
    }


def cell_from_data(data: dict[str, Any]) -> Cell:
    hits = [Hit(h["rule"], h["node"], h["subject"], h["message"], tuple(tuple(step) for step in h["flow"]),
                _witness_from(h["witness"])) for h in data["hits"]]
    return Cell(
        kind=CellKind(data["kind"]), name=data["name"], verdict=Verdict(data["verdict"]), detail=data["detail"],
        effects=decode(dict[str, tuple[int, int]], data["effects"]), nodes=decode(dict[str, tuple[int, int]], data["nodes"]),
        final_state_match=data["final_state_match"], resumed=data["resumed"], hits=hits,
        witness=_witness_from(data["witness"]),
    )


def _notification_data(n: Notification) -> dict[str, str]:
    return {"kind": n.kind.value, "message": n.message, "level": n.level.value}


def _notification_from(d: dict[str, str]) -> Notification:
    return Notification(NotificationKind(d["kind"]), d["message"], level=Severity(d["level"]))


@dataclass(frozen=True)
class DryFacts:
    """What the merge needs of the uninterrupted run: its invalid state and schema, and where nodes are."""

    invalid: list[InvalidState]
    schema: str | None
    nodes: dict[str, SourceLocation]
    target_location: SourceLocation | None


@dataclass
class ShardPart:
    """What one shard contributes to the merged report."""

    shard: Shard
    #: every slot of the full sweep, in the stable order (labels); a shard fills some of them
    order: list[str]
    cells: list[tuple[str, Cell]]
    #: (job label, invalid state) of this shard's runs that persisted invalid state
    validity_sources: list[validity.Source]
    #: the uninterrupted run's facts the merge needs (validity, locating findings)
    dry: DryFacts
    #: (kind, detail) notes from this shard's children
    notes: list[tuple[str, str]]
    #: notifications that are not child notes (e.g. "did not persist through the sweep's store")
    notifications: list[Notification] = field(default_factory=list)
    #: the directory the shard swept from (findings' paths are relative to it)
    cwd: str = "."

    def to_data(self) -> dict[str, Any]:
        return {
            "format": SHARD_FORMAT,
            "shard": str(self.shard),
            "order": list(self.order),
            "cells": [[label, cell_to_data(c)] for label, c in self.cells],
            "validity_sources": encode(self.validity_sources),
            "dry": encode(self.dry),
            "notes": [list(n) for n in self.notes],
            "notifications": [_notification_data(n) for n in self.notifications],
            "cwd": self.cwd,
        }

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> "ShardPart":
        if not isinstance(data, dict) or data.get("format") != SHARD_FORMAT:
            raise MergeError("not a crash-sweep shard of this version (write shards with "
                             "`crash-sweep --shard K/N --format json` using the same resume-audit)")
        try:
            return cls(
                shard=Shard.parse(data["shard"]),
                order=list(data["order"]),
                cells=[(label, cell_from_data(c)) for label, c in data["cells"]],
                validity_sources=decode(list[tuple[str, list[InvalidState]]], data["validity_sources"]),
                dry=decode(DryFacts, data["dry"]),
                notes=[(kind, detail) for kind, detail in data["notes"]],
                notifications=[_notification_from(n) for n in data["notifications"]],
                cwd=str(data.get("cwd") or "."),
            )
        except (KeyError, TypeError, ValueError, DecodeError) as exc:
            if isinstance(exc, MergeError):
                raise
            raise MergeError(f"a shard file is damaged: {type(exc).__name__}: {exc}") from None


def merge(documents: list[dict[str, Any]]) -> SweepReport:
    """The unsharded report from the JSON outputs of shards 1..N of one sweep (any order)."""
    from resume_audit.dynamic.parent.sweep import _notifications  # the same rendering of child notes as an unsharded sweep

    if not documents:
        raise MergeError("no shard files given")
    parts = []
    for doc in documents:
        if "shard" not in doc or "sweep" not in doc:
            raise MergeError("not a crash-sweep shard (write shards with `crash-sweep --shard K/N --format json`)")
        parts.append((ShardPart.from_data(doc["shard"]), doc["sweep"]))
    parts.sort(key=lambda p: p[0].shard.index)
    first, header = parts[0]
    count = first.shard.count
    if sorted(p.shard.index for p, _h in parts) != list(range(1, count + 1)) or any(p.shard.count != count for p, _h in parts):
        have = ", ".join(str(p.shard) for p, _h in parts)
        raise MergeError(f"expected shards 1/{count} .. {count}/{count} exactly once each; got {have}")
    for part, other in parts[1:]:
        for key in ("target", "framework", "backend", "protocol", "versions", "kill_points"):
            if other.get(key) != header.get(key):
                raise MergeError(f"shard {part.shard} swept a different {key} than shard {first.shard}: "
                                 f"{other.get(key)!r} vs {header.get(key)!r}")
        if part.order != first.order:
            raise MergeError(f"shard {part.shard} planned different cells than shard {first.shard} (a changed graph?)")
    by_slot: dict[str, Cell] = {}
    for part, _h in parts:
        for label, cell in part.cells:
            by_slot.setdefault(label, cell)
    sources: list[validity.Source] = [("uninterrupted run", list(first.dry.invalid))]
    sources += sorted((src for part, _h in parts for src in part.validity_sources), key=lambda s: s[0])
    if "validity" in by_slot:
        by_slot["validity"] = validity.judge(sources, True, first.dry.schema)
    missing = [label for label in first.order if label not in by_slot]
    if missing:
        raise MergeError(f"no shard swept {len(missing)} planned cell(s), e.g. {missing[0]!r}")
    cells = [by_slot[label] for label in first.order]
    report = SweepReport(
        target=header["target"], backend=header["backend"], framework=header["framework"],
        versions=dict(header.get("versions") or {}), protocol=header["protocol"], cells=cells, findings=[],
        complete=header["complete"], kill_points=header["kill_points"], cwd=first.cwd,
        plane=dict(header.get("plane") or {}),
    )
    locator = Locator(first.dry.nodes, first.dry.target_location, report.cwd)
    report.findings = build_findings(cells, locator, report.target)
    report.nodes = dict(first.dry.nodes)
    notes = sorted({note for part, _h in parts for note in part.notes})
    report.notifications = _notifications(notes) + first.notifications
    return report
