"""CrewAI's rows of the conformance matrix: the bundled counter flow under each checkpoint / ``@persist`` plane."""

from __future__ import annotations

from resume_audit.dynamic.conformance.suite import PROBES, Probe, Unswept
from resume_audit.frameworks.crewai import FRAMEWORK

_PROGRAM = f"{PROBES}.crewai_counter"

#: (the flow class, the plane it runs on, the crash modes swept)
_PLANES = (
    ("checkpoint_all", 'CheckpointConfig(on_events=["*"])', ("sigkill", "exception")),
    ("checkpoint_finished", 'CheckpointConfig(on_events=["method_execution_finished"])', ("sigkill",)),
    ("checkpoint_default", "checkpoint=True (default trigger)", ("sigkill",)),
    ("PersistClass", "@persist (class-level)", ("sigkill", "exception")),
    ("PersistMethod", "@persist (method-level)", ("sigkill",)),
)


def probes(saver: str | None, dsn: str | None) -> list[Probe | Unswept]:
    """One row per plane, when CrewAI is installed (``saver``, ``dsn``: LangGraph's, unused here)."""
    if not FRAMEWORK.installed():
        return []
    effects = (f"{_PROGRAM}:effect_s1", f"{_PROGRAM}:effect_s2")
    cells = ("crash", "stray", "validity")
    return [
        Probe(
            FRAMEWORK.id,
            plane,
            "SQLiteFlowPersistence" if "persist" in plane else "JsonProvider",
            f"{_PROGRAM}:{attr}",
            effects,
            crash_modes=modes,
            cells=cells,
        )
        for attr, plane, modes in _PLANES
    ]
