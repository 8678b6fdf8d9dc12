"""The sweep's probes, one module per question of the resume contract.

Each module declares the cell kinds it answers (``kinds``), the dynamic rules
it can raise (``rules``), how it lays out its cells (``plan``), how it judges
them (``judge``), its typed witnesses and the text of its findings:

- :mod:`.interrupt_path`  RA701 without a crash: answering a park re-runs the parked unit
- :mod:`.recovery`        crash / parked cells: RA701 duplicates, RA702 re-runs and divergence, RA708 lost state
- :mod:`.write_order`     RA707: recovery depends on the durable order of writes
- :mod:`.fork`            RA703: a second answer at the same park is served the first
- :mod:`.stray`           RA704: a resume after completion is not inert
- :mod:`.concurrent`      RA705: k processes resuming one park fire its effects k times
- :mod:`.validity`        RA706: a persisted checkpoint fails the state schema

``PROBES`` is in the report's stable cell order. The package is named
``checks`` because :mod:`resume_audit.dynamic.conformance` holds the conformance suite's
probe programs.
"""

from __future__ import annotations

from resume_audit.dynamic.probes import concurrent
from resume_audit.dynamic.probes import fork
from resume_audit.dynamic.probes import interrupt_path
from resume_audit.dynamic.probes import recovery
from resume_audit.dynamic.probes import stray
from resume_audit.dynamic.probes import validity
from resume_audit.dynamic.probes import write_order
from resume_audit.dynamic.probes.base import CellOutcome, Outcomes, Planning, Probe, Slot

PROBES: tuple[Probe, ...] = (interrupt_path, recovery, write_order, fork, stray, concurrent, validity)

__all__ = ["PROBES", "CellOutcome", "Outcomes", "Planning", "Probe", "Slot"]
