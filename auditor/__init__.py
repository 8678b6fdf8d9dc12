"""resume-audit: finds where an agent codebase's checkpoint / interrupt / resume plane breaks its promises.

The public Python API (the command line is a thin layer over it)::

    from resume_audit import scan, crash_sweep

    findings = scan(["src/myagent"])                      # static stage: list[Finding]
    report = crash_sweep(                                   # dynamic stage: SweepReport
        "myagent/graph.py:build_graph",
        effects=["myagent.tools:charge_card"],
        input={"order_id": 7},
        resume=["approve"],
    )
    report.assert_exactly_once()                            # AssertionError with the witness
    report.assert_conformant("FD", "CO")

Names are loaded on first use, so ``import resume_audit`` (and the CLI's start-up)
pays for nothing it does not touch; the dynamic stage in particular is only
imported when ``crash_sweep`` or ``SweepReport`` is.

- :func:`scan`, :func:`run_scan`, :class:`ScanRequest`, :class:`ScanOutcome` -- the static stage
  (:mod:`resume_audit.api`);
- :func:`crash_sweep`, :class:`SweepReport`, :class:`Cell`, :data:`NO_STUB`,
  :data:`CELL_KINDS`, :class:`TargetError`, :class:`SweepUsageError` -- the dynamic stage
  (:mod:`resume_audit.dynamic`);
- :class:`ResumeContractError` (an ``AssertionError``), :class:`SweepIncomplete` -- what the
  report's assertion helpers raise;
- :class:`Finding`, :class:`Severity`, :class:`Span`, :class:`Related`, :class:`FlowStep`,
  :class:`Notification`, :class:`ScanResult`, :data:`PROPERTIES` -- the findings model both
  stages share (:mod:`resume_audit.findings`);
- :class:`Config`, :class:`ConfigError`, :class:`PathNotFound`, :class:`BaselineError` --
  configuration and the errors the CLI reports with exit code 2.

The pytest plugin (:mod:`resume_audit.integrations.pytest_plugin`) is registered through the
``pytest11`` entry point: installing resume-audit gives a test suite the
``resume_audit`` fixture, the ``resume_contract`` marker and ``--resume-audit-scan``.
"""

from __future__ import annotations

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

#: public name -> module it lives in (imported on first attribute access)
_EXPORTS: dict[str, str] = {
    "__version__": "resume_audit.version",
    # static stage
    "scan": "resume_audit.api",
    "run_scan": "resume_audit.api",
    "ScanRequest": "resume_audit.api",
    "ScanOutcome": "resume_audit.api",
    # dynamic stage
    "crash_sweep": "resume_audit.dynamic.parent.sweep",
    "NO_STUB": "resume_audit.dynamic.parent.sweep",
    "CELL_KINDS": "resume_audit.dynamic.parent.sweep",
    "BACKENDS": "resume_audit.dynamic.parent.sweep",
    "SweepUsageError": "resume_audit.dynamic.parent.sweep",
    "TargetError": "resume_audit.dynamic.target",
    "SweepReport": "resume_audit.dynamic.report",
    "Cell": "resume_audit.dynamic.cells",
    "ResumeContractError": "resume_audit.dynamic.assertions",
    "SweepIncomplete": "resume_audit.dynamic.assertions",
    # findings model
    "Finding": "resume_audit.findings",
    "Severity": "resume_audit.findings",
    "Span": "resume_audit.findings",
    "Related": "resume_audit.findings",
    "FlowStep": "resume_audit.findings",
    "Notification": "resume_audit.findings",
    "NotificationKind": "resume_audit.findings",
    "ScanResult": "resume_audit.findings",
    "PROPERTIES": "resume_audit.findings",
    # configuration and errors
    "Config": "resume_audit.config.settings",
    "ConfigError": "resume_audit.config.settings",
    "PathNotFound": "resume_audit.discovery.walk",
    "BaselineError": "resume_audit.postprocess.baseline",
}

__all__ = [*_EXPORTS]

if _TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs; nothing is imported at run time
    from resume_audit.api import ScanOutcome, ScanRequest, run_scan, scan
    from resume_audit.config.settings import Config, ConfigError
    from resume_audit.discovery.walk import PathNotFound
    from resume_audit.dynamic.assertions import ResumeContractError, SweepIncomplete
    from resume_audit.dynamic.cells import Cell
    from resume_audit.dynamic.parent.sweep import BACKENDS, CELL_KINDS, NO_STUB, SweepUsageError, crash_sweep
    from resume_audit.dynamic.report import SweepReport
    from resume_audit.dynamic.target import TargetError
    from resume_audit.findings import (
        PROPERTIES,
        Finding,
        FlowStep,
        Notification,
        NotificationKind,
        Related,
        ScanResult,
        Severity,
        Span,
    )
    from resume_audit.postprocess.baseline import BaselineError
    from resume_audit.version import __version__


def __getattr__(name: str) -> _Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'resume_audit' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
