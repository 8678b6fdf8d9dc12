"""LlamaIndex's rows of the conformance matrix: the bundled approval workflow, two-step and ``wait_for_event``."""

from __future__ import annotations

from resume_audit.dynamic.conformance.suite import PROBES, Probe, Unswept
from resume_audit.frameworks.llamaindex import FRAMEWORK

_PROGRAM = f"{PROBES}.llamaindex_approval"


def probes(saver: str | None, dsn: str | None) -> list[Probe | Unswept]:
    """Both human-in-the-loop shapes, when llama-index-workflows is installed (``saver``, ``dsn``: unused here)."""
    if not FRAMEWORK.installed():
        return []
    return [
        Probe(
            FRAMEWORK.id,
            plane,
            "Context.to_dict() JSON",
            f"{_PROGRAM}:{attr}",
            (f"{_PROGRAM}:prepare_order", f"{_PROGRAM}:charge_card"),
            ("approve",),
        )
        for attr, plane in (
            ("TwoStep", "InputRequiredEvent → HumanResponseEvent step"),
            ("WaitForEvent", "ctx.wait_for_event"),
        )
    ]
