"""``SweepProtocol``: what a sweep ran the program with, as its report states it.

The report's ``protocol`` section -- the input, the answers, the effects and
stubs, the cells asked for -- rendered as stable JSON (``audit`` shows each
entry point's input and effects from it, ``merge`` checks that every shard
swept the same one). Values are already JSON-able (:func:`~resume_audit.dynamic.values.to_jsonable`);
optional parts are left out of the JSON while unset, as they always were, and the fields are in the
order the JSON always had.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from resume_audit.codec import omit_default


@dataclass(frozen=True)
class SweepProtocol:
    """The protocol of one sweep: every value JSON-able, in the report's words."""

    #: the graph input (None while a synthesised input is not known yet)
    input: Any
    #: one answer per dynamic interrupt
    resume: list[Any]
    fork_resume: Any
    #: the recorded effects, ``module.function``
    effects: list[str]
    #: the value every effect returns instead of running (None: they run)
    stub: Any
    #: per-effect stub values, ``module:function`` -> value
    stubs: dict[str, Any] = omit_default({})
    #: calls stubbed but not recorded (``stub-reads``), ``module.function``
    stub_reads: list[str] = omit_default([])
    #: extra ``configurable`` keys
    config: dict[str, Any] = field(default_factory=dict)
    #: the cell kinds asked for, sorted
    cells: list[str] = field(default_factory=list)
    #: the input was built from the program's input schema (``input`` is the one the uninterrupted run used)
    input_synthesised: bool = omit_default(False)
    #: the ``--stub-llm`` script's data
    stub_llm: dict[str, Any] | None = omit_default(None)
    crash_modes: tuple[str, ...] = omit_default(("sigkill",))
