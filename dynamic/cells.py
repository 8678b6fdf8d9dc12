"""The sweep's vocabulary: cells, their verdicts, the hits they carry, the reference run, the gates.

A cell is one question with one answer -- "after this kill point, does the
resumed run match the uninterrupted one?", "is a second answer at the
interrupt checkpoint served?" -- decided only from the external ledger and the
children's reports, never from framework internals. Which cells a sweep plans
and how each is judged lives in one probe module per question
(:mod:`resume_audit.dynamic.probes`); this module holds what they share. Each
verdict names the dynamic rule(s) it violates; :mod:`resume_audit.dynamic.parent.build`
turns those into findings.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar

from resume_audit.codec import DecodeError, decode_fields, encode_fields
from resume_audit.dynamic.child_result import ChildResult, ParkRecord
from resume_audit.dynamic.killpoints import DURABLE_KINDS, Event
from resume_audit.dynamic.ledger import Ledger
from resume_audit.dynamic.values import derive_fork_value


class _Word(str, Enum):
    """A str enum that compares, hashes, formats and serialises as its value (3.10 has no StrEnum)."""

    __hash__ = str.__hash__

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class Verdict(_Word):
    PASS = "pass"
    FAIL = "fail"
    NOT_REACHED = "not reached"
    ERROR = "error"
    NOT_APPLICABLE = "n/a"


PASS, FAIL, NOT_REACHED, ERROR, NOT_APPLICABLE = (
    Verdict.PASS,
    Verdict.FAIL,
    Verdict.NOT_REACHED,
    Verdict.ERROR,
    Verdict.NOT_APPLICABLE,
)


class CellKind(str):
    """What a cell asks: a ``--cells`` name.

    There is no fixed list: each kind is declared once, by the probe module that answers it
    (:meth:`declare`), so adding a probe adds its kinds. ``CellKind("crash")`` looks a declared kind
    up and raises ``ValueError`` for one nobody declared (a shard of another version, a typo). A kind
    is its name as a ``str``: it compares, hashes, formats and serialises as the name.
    """

    _declared: ClassVar[dict[str, "CellKind"]] = {}
    #: whether the kind's cells exercise the program in children of their own -- when every one of them
    #: ended in an error, that part of the contract was not checked (the uninterrupted run's own cells,
    #: and cells judged from other cells' runs, are not)
    exercises: bool

    def __new__(cls, value: str) -> "CellKind":
        try:
            return cls._declared[value]
        except KeyError:
            raise ValueError(f"{value!r} is not a cell kind any probe declares") from None

    @classmethod
    def declare(cls, value: str, *, exercises: bool = True) -> "CellKind":
        """The kind ``value``, declared by the calling probe module (declaring it again returns the same kind)."""
        known = cls._declared.get(value)
        if known is not None:
            if known.exercises != exercises:
                raise ValueError(f"cell kind {value!r} is declared twice, differently")
            return known
        kind = str.__new__(cls, value)
        kind.exercises = exercises
        cls._declared[value] = kind
        return kind

    def __repr__(self) -> str:
        return f"CellKind({str.__repr__(self)})"


#: the uninterrupted run every other cell is compared with: every sweep's reference, not selectable
DRY_RUN = CellKind.declare("dry-run", exercises=False)


class Witness:
    """Base of every typed witness (a frozen dataclass per probe and per finding).

    Subclasses register by class name so a shard file can carry them and
    ``merge`` rebuild the same objects; ``lines()`` is the block a failing
    pytest assertion prints for a finding carrying it.
    """

    REGISTRY: ClassVar[dict[str, type["Witness"]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        Witness.REGISTRY[cls.__name__] = cls

    def to_json(self) -> dict[str, Any]:
        """Its fields, as a report and a finding's ``witness`` show them."""
        return encode_fields(self)

    def to_data(self) -> dict[str, Any]:
        """Tagged with its type, so a shard file can carry it and ``merge`` rebuild the same object."""
        return {"type": type(self).__name__, "data": encode_fields(self)}

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> "Witness":
        if not isinstance(data, dict) or "type" not in data:
            raise DecodeError(f"{data!r} is not a witness")
        kind = Witness.REGISTRY.get(data["type"])
        if kind is None:
            raise DecodeError(f"a witness of unknown type {data['type']!r} (written by another version?)")
        witness: Witness = decode_fields(kind, data["data"])
        return witness

    def lines(self) -> list[str]:
        """Rows for the pytest witness block; empty: the finding's sentence says it."""
        return []


@dataclass
class Hit:
    """One rule violated by one cell, with what the finding needs."""

    rule: str
    node: str | None  # where the finding is located
    subject: str  # what is duplicated/diverged (groups findings): an effect, a node, a field
    message: str
    #: code-flow steps kill point -> resume -> duplicate: (node, message) or (node, message, "file:line")
    flow: tuple[tuple[Any, ...], ...] = ()
    witness: Witness | None = None


@dataclass
class Cell:
    kind: CellKind
    name: str
    verdict: Verdict
    detail: str = ""
    effects: dict[str, tuple[int, int]] = field(default_factory=dict)  # effect -> (expected, observed)
    nodes: dict[str, tuple[int, int]] = field(default_factory=dict)  # node -> (expected, observed) runs
    final_state_match: bool | None = None
    resumed: str | None = None
    hits: list[Hit] = field(default_factory=list)
    witness: Witness | None = None
    seconds: float = 0.0  # not part of the stable output

    @property
    def rules(self) -> tuple[str, ...]:
        return tuple(sorted({h.rule for h in self.hits}))

    def stable(self) -> dict[str, Any]:
        return {
            "kind": str(self.kind),
            "name": self.name,
            "verdict": str(self.verdict),
            "rules": list(self.rules),
            "detail": self.detail,
            "effects": {k: {"expected": e, "observed": o} for k, (e, o) in sorted(self.effects.items())},
            "node_runs": {k: {"expected": e, "observed": o} for k, (e, o) in sorted(self.nodes.items())},
            "final_state_match": self.final_state_match,
            "resumed": self.resumed,
            "witness": self.witness.to_json() if self.witness is not None else {},
        }


@dataclass(frozen=True)
class DryRunWitness(Witness):
    final_state: Any
    parks: list[ParkRecord]


@dataclass
class Reference:
    """The uninterrupted run every other cell is compared with."""

    effects: Counter[str]  # fired per effect over the whole protocol
    effects_by_leg: dict[int, Counter[str]]
    nodes: Counter[str]
    final_state: Any
    final_step: int | None
    parks: list[ParkRecord]
    events: list[Event]
    resume: tuple[Any, ...]
    #: the resume plane the program configures (``Session.describe().plane``) when it promises durable state
    declared_plane: str | None = None
    #: checkpoints the uninterrupted run left
    checkpoints: int = 0

    @classmethod
    def from_dry(cls, result: ChildResult, ledger: Ledger, resume: tuple[Any, ...]) -> "Reference":
        rows = [r for r in ledger.effects(phases=["run"]) if r.fired]
        by_leg: dict[int, Counter[str]] = {}
        for r in rows:
            by_leg.setdefault(r.leg if r.leg is not None else 0, Counter())[r.effect] += 1
        return cls(
            effects=Counter(r.effect for r in rows),
            effects_by_leg=by_leg,
            nodes=ledger.node_counts(phases=["run"]),
            final_state=result.final_state,
            final_step=result.final_step,
            parks=list(result.parks),
            events=list(result.events),
            resume=resume,
            declared_plane=result.describe.plane if result.describe.durable else None,
            checkpoints=result.checkpoints,
        )

    @property
    def writes_nothing(self) -> bool:
        """The program configures a durable plane, yet its uninterrupted run persisted nothing."""
        return (
            self.declared_plane is not None
            and self.checkpoints == 0
            and not any(e.kind in DURABLE_KINDS for e in self.events)
        )

    def durable_before(self, name: str) -> bool:
        """Whether the uninterrupted run had persisted a checkpoint before event ``name``."""
        for event in self.events:
            if event.name == name:
                return False
            if event.kind in DURABLE_KINDS:
                return True
        return False


@dataclass(frozen=True)
class GateRef:
    """Which pause point a probe cell ran at, in its witness (only when the protocol has several)."""

    index: int
    node: str | None
    kind: str


@dataclass(frozen=True)
class Gate:
    """One pause point of the protocol, as the uninterrupted run met it: the probes run at each.

    ``index`` counts every park in order (dynamic ``interrupt()`` and static
    breakpoints alike); ``value_index`` is the ``--resume`` value that answers
    it (a breakpoint takes none).
    """

    index: int
    node: str | None
    kind: str = "interrupt"  # "interrupt" | "before" | "after" (static breakpoints)
    value_index: int = 0
    fork_value: Any = None
    #: the protocol's only gate: cell names stay as short as they always were
    alone: bool = True

    @property
    def breakpoint(self) -> bool:
        return self.kind != "interrupt"

    def describe(self) -> str:
        if self.kind == "interrupt":
            return f"interrupt() in `{self.node}`"
        return f"static breakpoint interrupt_{self.kind} at `{self.node}`"

    @property
    def suffix(self) -> str:
        return "" if self.alone else f" at gate {self.index} ({self.describe()})"

    @property
    def ref(self) -> GateRef | None:
        """The witness's gate field: None (left out) when the protocol has one gate."""
        return None if self.alone else GateRef(self.index, self.node, self.kind)

    @classmethod
    def first(cls) -> "Gate":
        return cls(0, None)

    @classmethod
    def of_protocol(cls, parks: list[ParkRecord], resume: tuple[Any, ...], fork_resume: Any) -> list["Gate"]:
        seen: dict[int, ParkRecord] = {}
        for park in parks:
            seen.setdefault(park.index, park)
        gates = []
        for index, park in sorted(seen.items()):
            vi = park.value_index or 0
            fork = None
            if not park.breakpoint:
                fork = (
                    fork_resume
                    if fork_resume is not None
                    else (derive_fork_value(resume[vi]) if vi < len(resume) else None)
                )
            gates.append(cls(index, park.node, park.kind, vi, fork, alone=len(seen) == 1))
        return gates


def pairs(expected: Counter[str], observed: Counter[str]) -> dict[str, tuple[int, int]]:
    """Expected and observed counts of every key either side has."""
    return {k: (expected.get(k, 0), observed.get(k, 0)) for k in sorted(set(expected) | set(observed))}
