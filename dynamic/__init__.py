"""The dynamic stage: run a user's graph under crashes and probes, check the resume contract.

Public API: :func:`resume_audit.dynamic.parent.sweep.crash_sweep` (also ``resume_audit.dynamic.crash_sweep``)
returning a :class:`resume_audit.dynamic.report.SweepReport`.

Modules, one job each:

- ``sweep``        the loop: prepare the request, the reference run, plan every probe, run the jobs, resolve
- ``checks``       one probe module per question (RA701..RA708): the cells it plans, its judge, typed witnesses, text
- ``cells``        the shared vocabulary: ``Cell``, ``Verdict``, ``CellKind``, ``Hit``, ``Witness``, ``Reference``, ``Gate``
- ``workbench``    cell directories, stores, starting children (crash-then-recover for the probes that need it)
- ``request``      ``SweepRequest``: the options the CLI, the Python API, the pytest plugin and conformance share
- ``child_result`` ``ChildResult``: what a child reports, typed (``typed_json`` reads and writes it)
- ``build``        cell verdicts -> :class:`resume_audit.findings.Finding` (spans, code flows, fingerprints)
- ``report``       ``SweepReport``: stable JSON, rich table, ``ScanResult`` for the shared reporters
- ``sharding``     ``--shard K/N`` slices and ``merge``
- ``assertions``   ``SweepReport.assert_exactly_once`` / ``assert_conformant`` and their witness messages
- ``catalog``      RA701..RA708 metadata, read by the reporters like static rule classes
- ``runner``       fork-server children, timeouts, process-group cleanup
- ``child``        what runs inside a child: sandbox, load, one role, ``result.json``
- ``sandbox``      setsid, temp dir, audit hooks (network, writes, spawns); ``landlock`` where the kernel has it
- ``lifetime``     no process outlives its cell (tags, subreaper, descendant kills, stale temp roots)
- ``ledger``       the on-disk effect ledger (effects, node runs, served values)
- ``effects``      wrapping ``--effect`` functions (call-through or stub, idempotency keys)
- ``llm_stub``     ``--stub-llm``: scripted chat-model replies, no network
- ``killpoints``   named events and the synchronous SIGKILL
- ``target``       parsing and importing ``file.py:attr`` / ``pkg.mod:attr``
- ``validity``     state-schema validation of persisted checkpoints
- ``values``       stable JSON rendering, derived fork answers
- ``progress``     a rich progress bar as a ``progress`` callback
- ``adapters``     the framework-neutral interface and one adapter per framework
- ``probes``       the conformance suite's probe programs (one small app per framework and plane)
"""

from __future__ import annotations

from typing import Any

__all__ = ["crash_sweep"]


def __getattr__(name: str) -> Any:  # lazy: sweep children import this package too
    if name == "crash_sweep":
        from resume_audit.dynamic.parent.sweep import crash_sweep

        return crash_sweep
    raise AttributeError(name)
