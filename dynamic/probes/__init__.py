"""The sweep's probes, one module per question of the resume contract.

Each module declares the cell kinds it answers, the dynamic rules it can raise
and the metadata of those it owns, its conformance columns, how it lays out its
cells (``plan``), how it judges them (``judge``), its typed witnesses and the
text of its findings (:mod:`.base` says what each declaration is):

- :mod:`.interrupt_path`  RA701 without a crash: answering a park re-runs the parked unit
- :mod:`.recovery`        crash / parked cells: RA701 duplicates, RA702 re-runs and divergence, RA708 lost state
- :mod:`.write_order`     RA707: recovery depends on the durable order of writes
- :mod:`.fork`            RA703: a second answer at the same park is served the first
- :mod:`.stray`           RA704: a resume after completion is not inert
- :mod:`.concurrent`      RA705: k processes resuming one park fire its effects k times
- :mod:`.validity`        RA706: a persisted checkpoint fails the state schema

The registry below is in the report's stable cell order; every table of the
dynamic stage that names kinds, rules or columns -- the ``--cells`` names, the
rule catalog, the pytest assertions' rule-to-cell map and headlines, the
conformance columns -- is read from it (:func:`registry`) when it is needed, so
a probe registered later (:func:`registered`) is in all of them.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

from resume_audit.dynamic.cells import CellKind
from resume_audit.dynamic.probes import concurrent, fork, interrupt_path, recovery, stray, validity, write_order
from resume_audit.dynamic.probes.base import CellOutcome, Column, DynamicRule, Outcomes, Planning, Probe, Slot

__all__ = [
    "CellOutcome",
    "Column",
    "DynamicRule",
    "Outcomes",
    "Planning",
    "Probe",
    "Slot",
    "cell_kinds",
    "registered",
    "registry",
]

_REGISTRY: list[Probe] = [interrupt_path, recovery, write_order, fork, stray, concurrent, validity]


def registry() -> tuple[Probe, ...]:
    """Every probe, in the report's stable cell order."""
    return tuple(_REGISTRY)


def cell_kinds() -> tuple[CellKind, ...]:
    """The ``--cells`` names: every probe's kinds, in the report's order."""
    return tuple(kind for probe in _REGISTRY for kind in probe.kinds)


@contextlib.contextmanager
def registered(probe: Probe) -> Iterator[Probe]:
    """Add ``probe`` after the others while the block runs (a test's own probe, an extension's)."""
    problems = consistency([*_REGISTRY, probe])
    if problems:
        raise ValueError(f"cannot register {getattr(probe, '__name__', probe)!r}: {'; '.join(problems)}")
    _REGISTRY.append(probe)
    try:
        yield probe
    finally:
        _REGISTRY.remove(probe)


def consistency(probes: list[Probe]) -> list[str]:
    """What is wrong with a set of probes: a kind or a rule declared twice, a rule raised that nobody declares."""
    problems: list[str] = []
    kinds = [str(kind) for probe in probes for kind in probe.kinds]
    problems += [f"cell kind {k!r} is answered by two probes" for k in sorted({k for k in kinds if kinds.count(k) > 1})]
    owned = [rule.id for probe in probes for rule in probe.catalog]
    problems += [f"rule {r} is declared by two probes" for r in sorted({r for r in owned if owned.count(r) > 1})]
    raised = {rule for probe in probes for rule in probe.rules}
    problems += [f"rule {r} is raised but declared by no probe" for r in sorted(raised - set(owned))]
    return problems
