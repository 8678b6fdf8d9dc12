"""The findings model every stage of resume-audit speaks.

Static rules, the dynamic crash sweep and the conformance probes all emit the
same :class:`Finding`, so one set of reporters (SARIF, text, JSON, GitHub)
serves them all and a SARIF run can mix static and dynamic results.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Any

from resume_audit.codec import decode, encode, encode_fields


class Severity(str, enum.Enum):
    """How bad a finding is; the values are SARIF result levels."""

    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"

    @property
    def rank(self) -> int:
        """Higher is worse; used for ``--fail-on`` and sorting."""
        return {"error": 3, "warning": 2, "note": 1}[self.value]


#: The contract properties (see docs/contract.md); every rule names at least one.
PROPERTIES: dict[str, str] = {
    "EO": "effect exactly-once",
    "PC": "prefix continuation",
    "FD": "fork determinism",
    "FI": "fork intent",
    "CV": "checkpoint validity",
    "CO": "consume-once",
    "RD": "recovery determinism",
    "LV": "liveness",
}


@dataclass(frozen=True, order=True)
class Span:
    """A region of a file. Lines and columns are 1-based; ``end_col`` is exclusive.

    ``path`` is the path as reported to users: relative to the scan root and
    POSIX-style when the file is under the root, absolute otherwise.
    """

    path: str
    start_line: int
    start_col: int
    end_line: int
    end_col: int

    def contains_line(self, line: int) -> bool:
        return self.start_line <= line <= self.end_line

    @classmethod
    def within(cls, data: dict[str, Any]) -> "Span":
        """The span laid out flat in ``data`` (a finding's, a related location's, an edit's)."""
        return cls(data["path"], data["start_line"], data["start_col"], data["end_line"], data["end_col"])


@dataclass(frozen=True)
class Related:
    """The other half of a hazard: the ``interrupt()`` an effect precedes, the sink a helper reaches."""

    span: Span
    message: str

    def to_data(self) -> dict[str, Any]:
        return {**encode_fields(self.span), "message": self.message}

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> "Related":
        return cls(Span.within(data), data["message"])


@dataclass(frozen=True)
class FlowStep:
    """One step of a code flow (SARIF ``threadFlowLocation``): node -> helper -> sink,
    or kill point -> resume -> duplicate for dynamic findings."""

    span: Span
    message: str

    def to_data(self) -> dict[str, Any]:
        return {**encode_fields(self.span), "message": self.message}

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> "FlowStep":
        return cls(Span.within(data), data["message"])


class FixSafety(str, enum.Enum):
    """Whether a fix changes nothing but the hazard (applied by ``resume-audit fix``) or changes
    behaviour a user can see -- a new parameter, a new dependency, a new file on disk -- and needs
    ``--unsafe-fixes`` (ruff's split)."""

    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True)
class Edit:
    """Replace the text of ``span`` (1-based lines and columns, ``end_col`` exclusive, columns in
    characters as LibCST counts them) with ``replacement``. A zero-width span inserts."""

    span: Span
    replacement: str

    def to_data(self) -> dict[str, Any]:
        return {**encode_fields(self.span), "replacement": self.replacement}

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> "Edit":
        return cls(Span.within(data), data["replacement"])


@dataclass(frozen=True)
class Autofix:
    """A mechanical repair of one finding: edits that together remove the hazard."""

    description: str
    safety: FixSafety
    edits: tuple[Edit, ...]


class Confirmation(str, enum.Enum):
    """``audit``'s verdict on a finding, from sweeping the graph it lives in."""

    #: a dynamic finding on the same node or effect reproduced it (its witness is attached)
    CONFIRMED = "confirmed"
    #: the graph ran through this code under crashes and probes, and the contract held
    NOT_REPRODUCED = "not-reproduced"
    #: the sweep could not run this code (the note says why)
    NOT_EXERCISED = "not-exercised"
    #: found by the sweep, with no static finding at the place
    DYNAMIC_ONLY = "dynamic-only"


@dataclass(frozen=True)
class Finding:
    """One hazard at one location.

    ``message`` says what will happen at runtime; ``fix`` says what to change.
    ``fingerprint`` is filled in by the engine (see :mod:`resume_audit.postprocess.fingerprint`)
    and is stable under unrelated edits above the finding.
    """

    rule_id: str
    severity: Severity
    properties: tuple[str, ...]
    message: str
    fix: str
    span: Span
    related: tuple[Related, ...] = ()
    flows: tuple[tuple[FlowStep, ...], ...] = ()
    fingerprint: str = ""
    #: enclosing function/class qualified name, used for fingerprints and grouping
    scope: str = ""
    #: "static" or "dynamic"
    origin: str = "static"
    #: dynamic findings carry their minimal witness (kill point, counts, values), as written to JSON and SARIF
    witness: dict[str, Any] = field(default_factory=dict)
    #: the same witness as the typed object the dynamic stage judged with (``lines()`` renders it for
    #: a failing test); not serialised, so a finding read back from a file has none
    evidence: Any = field(default=None, compare=False, repr=False)
    #: ``audit`` only: what running the graph said of this finding, and why
    confirmation: Confirmation | None = None
    confirmation_note: str = ""
    #: the mechanical repair ``resume-audit fix`` applies, when the rule knows one
    autofix: Autofix | None = None

    def with_fingerprint(self, fingerprint: str) -> "Finding":
        return replace(self, fingerprint=fingerprint)

    # -- the one JSON shape of a finding: scan and sweep reports, the cache, audit shards ----------
    def to_data(self) -> dict[str, Any]:
        """The span laid out flat; ``evidence`` (a live object) is not written; ``confirmation`` and
        ``autofix`` only when set."""
        return {
            "rule_id": self.rule_id,
            "severity": self.severity.value,
            "properties": list(self.properties),
            **encode_fields(self.span),
            "message": self.message,
            "fix": self.fix,
            "scope": self.scope,
            "origin": self.origin,
            "fingerprint": self.fingerprint,
            "related": encode(self.related),
            "flows": encode(self.flows),
            "witness": self.witness,
            **(
                {"confirmation": self.confirmation.value, "confirmation_note": self.confirmation_note}
                if self.confirmation
                else {}
            ),
            **({"autofix": encode(self.autofix)} if self.autofix else {}),
        }

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> "Finding":
        return cls(
            rule_id=data["rule_id"],
            severity=Severity(data["severity"]),
            properties=tuple(data["properties"]),
            message=data["message"],
            fix=data["fix"],
            span=Span.within(data),
            related=tuple(Related.from_data(r) for r in data["related"]),
            flows=tuple(tuple(FlowStep.from_data(s) for s in flow) for flow in data["flows"]),
            fingerprint=data["fingerprint"],
            scope=data["scope"],
            origin=data["origin"],
            witness=data["witness"],
            confirmation=Confirmation(data["confirmation"]) if data.get("confirmation") else None,
            confirmation_note=data.get("confirmation_note", ""),
            autofix=decode(Autofix, data["autofix"]) if data.get("autofix") else None,
        )

    @property
    def sort_key(self) -> tuple[Any, ...]:
        return (self.span.path, self.span.start_line, self.span.start_col, self.rule_id, self.message)


class NotificationKind(str, enum.Enum):
    """Why a file or step could not be analysed; each kind is reported, never silently skipped."""

    PARSE_ERROR = "parse-error"
    DECODE_ERROR = "decode-error"
    UNREADABLE = "unreadable"
    TIMEOUT = "timeout"
    INTERNAL_ERROR = "internal-error"
    SKIPPED = "skipped"
    INFO = "info"
    #: project-local imports that matched no file: cross-module tracing was incomplete
    UNRESOLVED_IMPORTS = "unresolved-imports"
    #: a ``# resume-audit: ignore`` comment that suppresses nothing or names an unknown rule
    UNUSED_SUPPRESSION = "unused-suppression"


@dataclass(frozen=True)
class Notification:
    """A tool execution notification: something the user must know that is not a finding."""

    kind: NotificationKind
    message: str
    path: str | None = None
    line: int | None = None
    column: int | None = None
    level: Severity = Severity.WARNING


#: notification kinds that do not mean a file went unanalysed
NOT_UNANALYSED = (NotificationKind.UNRESOLVED_IMPORTS, NotificationKind.INFO, NotificationKind.UNUSED_SUPPRESSION)


@dataclass
class ScanResult:
    """Everything one run produced; reporters render it, the CLI derives its exit code from it."""

    findings: list[Finding]
    notifications: list[Notification]
    files_scanned: int
    root: str
    rules_run: tuple[str, ...] = ()
    #: findings hidden by a baseline, kept so summaries can say how many
    baselined: int = 0
    suppressed: int = 0
    #: findings left out by ``--diff`` because they are not on changed lines
    outside_diff: int = 0
    #: files that passed the pre-filter and were parsed and checked
    files_analysed: int = 0
    #: project-local imports (one per importing file and module) that matched no file
    unresolved_imports: int = 0
    #: what produced it and on what, e.g. ``scan/src,tests``: SARIF's automation category, so two
    #: jobs scanning different paths do not close each other's code-scanning alerts
    category: str = ""

    @property
    def unanalysed(self) -> list[Notification]:
        """Notifications about files that were not (fully) analysed -- not the scan-wide
        note on unresolved imports, which concerns tracing, not a file, nor information such as a
        baseline that matched nothing, nor an unused suppression comment."""
        return [n for n in self.notifications if n.kind not in NOT_UNANALYSED]

    @property
    def unused_suppressions(self) -> list[Notification]:
        """Suppression comments that suppress nothing or name an unknown rule."""
        return [n for n in self.notifications if n.kind is NotificationKind.UNUSED_SUPPRESSION]

    def worst(self) -> Severity | None:
        if not self.findings:
            return None
        return max((f.severity for f in self.findings), key=lambda s: s.rank)

    def count_at_or_above(self, threshold: Severity) -> int:
        return sum(1 for f in self.findings if f.severity.rank >= threshold.rank)
