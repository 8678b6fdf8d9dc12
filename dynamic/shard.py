"""What one slice of a sharded sweep (``crash-sweep --shard K/N``) hands to ``merge``.

Every shard runs the uninterrupted run (each needs the reference and the kill
points) and then the jobs the deterministic deal gives it. Its JSON output
carries a ``shard`` section -- a :class:`ShardPart`: the full slot order, its
cells with their hits and typed witnesses, what the validity judge and the
locator need, its notes -- from which
:func:`resume_audit.dynamic.parent.sharding.merge` rebuilds the report an
unsharded sweep gives. Written and read through :mod:`resume_audit.codec`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from resume_audit.codec import DecodeError, decode_fields, encode_fields
from resume_audit.dynamic.adapters.base import InvalidState, PlaneDescription, SourceLocation
from resume_audit.dynamic.cells import Cell
from resume_audit.dynamic.probes import validity  # importing the probes registers every witness type
from resume_audit.dynamic.protocol import SweepProtocol
from resume_audit.dynamic.request import Shard
from resume_audit.findings import Notification

SHARD_FORMAT = "resume-audit/sweep-shard/v3"


class MergeError(ValueError):
    """The shard files do not make one sweep (the CLI's exit code 2)."""


@dataclass(frozen=True)
class DryFacts:
    """What the merge needs of the uninterrupted run: its invalid state and schema, and where nodes are."""

    invalid: list[InvalidState]
    schema: str | None
    nodes: dict[str, SourceLocation]
    target_location: SourceLocation | None


@dataclass(frozen=True)
class SweepHeader:
    """What every shard of one sweep must agree on, and the merged report states."""

    target: str
    framework: str
    backend: str
    versions: dict[str, str]
    protocol: SweepProtocol
    plane: PlaneDescription
    complete: bool
    kill_points: int


@dataclass
class ShardPart:
    """What one shard contributes to the merged report."""

    shard: Shard
    header: SweepHeader
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
        return {"format": SHARD_FORMAT, **encode_fields(self)}

    @classmethod
    def from_data(cls, data: Any) -> "ShardPart":
        if not isinstance(data, dict) or data.get("format") != SHARD_FORMAT:
            raise MergeError(
                "not a crash-sweep shard of this version (write shards with "
                "`crash-sweep --shard K/N --format json` using the same resume-audit)"
            )
        try:
            part: ShardPart = decode_fields(cls, {k: v for k, v in data.items() if k != "format"})
        except (KeyError, TypeError, ValueError, DecodeError) as exc:
            if isinstance(exc, MergeError):
                raise
            raise MergeError(f"a shard file is damaged: {type(exc).__name__}: {exc}") from None
        return part
