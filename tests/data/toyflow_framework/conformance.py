"""ToyFlow's row of the conformance matrix: its program lives in this folder, like the rest of it."""

from __future__ import annotations

from resume_audit.dynamic.conformance.suite import Probe, Unswept


def probes(saver: str | None, dsn: str | None) -> list[Probe | Unswept]:
    return [Probe("toyflow", "in-memory", "-", "toyflow_framework.program:Orders", ("toyflow_framework.program:charge",))]
