"""The dynamic stage: run a user's graph under crashes and probes, check the resume contract.

Public API: :func:`auditor.dynamic.sweep.crash_sweep` (also ``auditor.dynamic.crash_sweep``)
returning a :class:`auditor.dynamic.report.SweepReport`.

Modules, one job each:

- ``sweep``      orchestration: the reference run, then every cell on a thread pool
- ``cells``      what each cell decides and which rule a failure violates
- ``build``      cell verdicts -> :class:`auditor.findings.Finding` (spans, code flows, fingerprints)
- ``report``     ``SweepReport``: stable JSON, rich table, ``ScanResult`` for the shared reporters
- ``assertions`` ``SweepReport.assert_exactly_once`` / ``assert_conformant`` and their witness messages
- ``catalog``    RA701..RA708 metadata, read by the reporters like static rule classes
- ``runner``     fork-server children, timeouts, process-group cleanup
- ``child``      what runs inside a child: sandbox, load, one role, ``result.json``
- ``sandbox``    setsid, temp dir, audit hooks (network, writes, spawns)
- ``ledger``     the on-disk effect ledger (effects, node runs, served values)
- ``effects``    wrapping ``--effect`` functions (call-through or stub, idempotency keys)
- ``killpoints`` named events and the synchronous SIGKILL
- ``target``     parsing and importing ``file.py:attr`` / ``pkg.mod:attr``
- ``validity``   state-schema validation of persisted checkpoints
- ``values``     stable JSON rendering, derived fork answers
- ``progress``   a rich progress bar as a ``progress`` callback
- ``adapters``   the framework-neutral interface and the LangGraph adapter
"""

from __future__ import annotations

from typing import Any

__all__ = ["crash_sweep"]


def __getattr__(name: str) -> Any:  # lazy: sweep children import this package too
    if name == "crash_sweep":
        from .sweep import crash_sweep

        return crash_sweep
    raise AttributeError(name)
