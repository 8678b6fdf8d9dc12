"""The dynamic stage: run a user's graph under crashes and probes, check the resume contract.

Public API: :func:`resume_audit.dynamic.parent.sweep.crash_sweep` (also ``resume_audit.dynamic.crash_sweep``)
returning a :class:`resume_audit.dynamic.report.SweepReport`.

Three parts, and the vocabulary they share:

- ``parent/``      the sweeping process: ``sweep`` (prepare the request, the reference run, plan every probe,
                   run the jobs, resolve), ``workbench`` (cell directories, stores, starting children),
                   ``runner`` (fork-server children, timeouts, process-group cleanup), ``build`` (cell
                   verdicts -> findings), ``notes`` (children's notes -> notifications), ``sharding``
                   (``merge``), ``filtering`` (the user's rule settings), ``progress``
- ``child/``       what runs inside a child, importing nothing of the parent: ``main`` (confine, load, play
                   a role, write ``result.json``), ``context`` (the protocol's driver), ``roles`` (the
                   uninterrupted run, the crash, the recovery), ``sandbox``/``landlock``, ``effects``,
                   ``llm_stub``, ``synthesis``, ``validity``, ``env``
- ``probes/``      one module per question (RA701..RA708): its cell kinds, rules, conformance columns, plan,
                   judge, typed witnesses, text -- and its own child role where it needs one; every table
                   that names kinds, rules or columns is derived from the registered probes
- ``conformance/`` ``resume-audit conformance``: the matrix (``columns`` read off the probes' cells) and the
                   bundled programs it sweeps
- ``adapters/``    the framework-neutral interface (``base``) and the registry of framework adapters
                   (each in ``resume_audit.frameworks.<name>.adapter``)

The shared vocabulary: ``cells`` (``Cell``, ``Verdict``, ``CellKind``, ``Hit``, ``Witness``, ``Reference``,
``Gate``), ``spec`` (what the parent tells a child), ``child_result`` (what a child reports), ``ledger``,
``killpoints``, ``values``, ``target``, ``effect_spec``, ``llm_script``, ``lifetime``, ``request``
(``SweepRequest``), ``protocol`` (``SweepProtocol``), ``report`` (``SweepReport``: stable JSON, rich table,
``ScanResult``), ``shard`` (what a shard hands ``merge``), ``assertions`` (``assert_exactly_once`` /
``assert_conformant``) and ``catalog`` (the dynamic rules' metadata, from the probes).
"""

from __future__ import annotations

from typing import Any

__all__ = ["crash_sweep"]


def __getattr__(name: str) -> Any:  # lazy: sweep children import this package too
    if name == "crash_sweep":
        from resume_audit.dynamic.parent.sweep import crash_sweep

        return crash_sweep
    raise AttributeError(name)
