"""LangGraph's rows of the conformance matrix: the bundled order program on each checkpointer.

SqliteSaver sweeps every probe; InMemorySaver all but the write-order probe (it has no durable write
order); PostgresSaver when a DSN is given; a ``--saver module:factory`` checkpointer alone when named.
"""

from __future__ import annotations

from typing import Any

from resume_audit.dynamic.conformance.suite import PROBES, Probe, Unswept
from resume_audit.frameworks.langgraph import FRAMEWORK

_PROGRAM = f"{PROBES}.langgraph_order"


def probes(saver: str | None, dsn: str | None) -> list[Probe | Unswept]:
    """The rows to sweep here (``saver``: a custom checkpointer factory; ``dsn``: a Postgres to sweep too)."""
    order: dict[str, Any] = dict(
        target=f"{_PROGRAM}:build_graph",
        effects=(f"{_PROGRAM}:charge_card",),
        resume=("approve",),
        input={"order_id": 7, "amount": 30},
    )
    if saver is not None:
        return [Probe(FRAMEWORK.id, "checkpointer", f"--saver {saver}", backend="custom", saver=saver, **order)]
    if not FRAMEWORK.installed():
        return []
    rows: list[Probe | Unswept] = [
        Probe(FRAMEWORK.id, "checkpointer", "SqliteSaver", backend="sqlite", **order),
        Probe(
            FRAMEWORK.id,
            "checkpointer",
            "InMemorySaver",
            backend="memory",
            cells=("interrupt", "crash", "parked", "fork", "stray", "concurrent", "validity"),
            **order,
        ),
    ]
    if dsn:
        rows.append(
            Probe(
                FRAMEWORK.id,
                "checkpointer",
                "PostgresSaver",
                backend="postgres",
                dsn=dsn,
                cells=("interrupt", "crash", "parked", "fork", "stray", "concurrent"),
                **order,
            )
        )
    return rows
