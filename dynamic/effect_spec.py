"""What an ``--effect`` names, and the stub marker: shared by the parent (which validates a sweep's options) and
the child (which wraps the named functions, :mod:`resume_audit.dynamic.child.effects`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from resume_audit.dynamic.values import to_jsonable

#: "no stub": the effect's real function runs (a marker that survives pickling into the children)
NO_STUB: Any = type("NoStub", (), {"__repr__": lambda self: "NO_STUB", "__reduce__": lambda self: "NO_STUB"})()


#: "a typed stub": the recorder returns a value of the type the code expects (the effect's return annotation,
#: the SDK's known return shape, else a value that allows attribute and item access) -- what ``audit`` uses
TYPED_STUB: Any = type(
    "TypedStub", (), {"__repr__": lambda self: "TYPED_STUB", "__reduce__": lambda self: "TYPED_STUB"}
)()


class EffectSpecError(ValueError):
    """An ``--effect`` that names nothing callable."""


@dataclass(frozen=True)
class EffectSpec:
    """``module:attr`` (``attr`` may be dotted: ``stripe:Charge.create``)."""

    module: str
    attr: str

    @classmethod
    def parse(cls, text: str) -> "EffectSpec":
        module, sep, attr = text.strip().partition(":")
        if not sep or not module or not attr:
            raise EffectSpecError(f"--effect {text!r}: expected MODULE:FUNCTION, e.g. myagent.tools:charge_card")
        if module.endswith(".py"):
            module = module[:-3].replace("/", ".").strip(".")
        return cls(module, attr)

    @property
    def display(self) -> str:
        return f"{self.module}.{self.attr}"


#: the ledger note that carries one value a typed stub made up (:meth:`MadeUp.to_note`)
MADE_UP_NOTE = "stub-value"


@dataclass(frozen=True)
class MadeUp:
    """One value a typed stub made up for an effect, and where its type came from: the child notes it in the
    ledger, the parent drops a finding whose witness rests on it (it says nothing about the program)."""

    effect: str
    value: Any
    how: str

    def to_note(self) -> str:
        return json.dumps({"effect": self.effect, "value": to_jsonable(self.value), "how": self.how}, sort_keys=True)

    @classmethod
    def from_note(cls, detail: str) -> "MadeUp | None":
        try:
            data = json.loads(detail)
            return cls(str(data["effect"]), data["value"], str(data["how"]))
        except (ValueError, KeyError, TypeError):
            return None
