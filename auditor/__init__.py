"""resume-audit: finds where an agent codebase's checkpoint / interrupt / resume plane breaks its promises.

The public Python API (the command line is a thin layer over it)::

    from auditor import scan, crash_sweep

    findings = scan(["src/myagent"])                      # static stage: list[Finding]
    report = crash_sweep(                                   # dynamic stage: SweepReport
        "myagent/graph.py:build_graph",
        effects=["myagent.tools:charge_card"],
        input={"order_id": 7},
        resume=["approve"],
    )
    report.assert_exactly_once()                            # AssertionError with the witness
    report.assert_conformant("FD", "CO")

Names are loaded on first use, so ``import auditor`` (and the CLI's start-up)
pays for nothing it does not touch; the dynamic stage in particular is only
imported when ``crash_sweep`` or ``SweepReport`` is.

- :func:`scan`, :func:`run_scan`, :class:`ScanRequest`, :class:`ScanOutcome` -- the static stage
  (:mod:`auditor.api`);
- :func:`crash_sweep`, :class:`SweepReport`, :class:`Cell`, :data:`NO_STUB`,
  :data:`CELL_KINDS`, :class:`TargetError`, :class:`SweepUsageError` -- the dynamic stage
  (:mod:`auditor.dynamic`);
- :class:`ResumeContractError` (an ``AssertionError``), :class:`SweepIncomplete` -- what the
  report's assertion helpers raise;
- :class:`Finding`, :class:`Severity`, :class:`Span`, :class:`Related`, :class:`FlowStep`,
  :class:`Notification`, :class:`ScanResult`, :data:`PROPERTIES` -- the findings model both
  stages share (:mod:`auditor.findings`);
- :class:`Config`, :class:`ConfigError`, :class:`PathNotFound`, :class:`BaselineError` --
  configuration and the errors the CLI reports with exit code 2.

The pytest plugin (:mod:`auditor.pytest_plugin`) is registered through the
``pytest11`` entry point: installing resume-audit gives a test suite the
``resume_audit`` fixture, the ``resume_contract`` marker and ``--resume-audit-scan``.
"""

from __future__ import annotations

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING, Any as _Any

__version__ = "0.1.0"

#: public name -> module it lives in (imported on first attribute access)
_EXPORTS: dict[str, str] = {
    # static stage
    "scan": "auditor.api",
    "run_scan": "auditor.api",
    "ScanRequest": "auditor.api",
    "ScanOutcome": "auditor.api",
    # dynamic stage
    "crash_sweep": "auditor.dynamic.sweep",
    "NO_STUB": "auditor.dynamic.sweep",
    "CELL_KINDS": "auditor.dynamic.sweep",
    "BACKENDS": "auditor.dynamic.sweep",
    "SweepUsageError": "auditor.dynamic.sweep",
    "TargetError": "auditor.dynamic.target",
    "SweepReport": "auditor.dynamic.report",
    "Cell": "auditor.dynamic.cells",
    "ResumeContractError": "auditor.dynamic.assertions",
    "SweepIncomplete": "auditor.dynamic.assertions",
    # findings model
    "Finding": "auditor.findings",
    "Severity": "auditor.findings",
    "Span": "auditor.findings",
    "Related": "auditor.findings",
    "FlowStep": "auditor.findings",
    "Notification": "auditor.findings",
    "NotificationKind": "auditor.findings",
    "ScanResult": "auditor.findings",
    "PROPERTIES": "auditor.findings",
    # configuration and errors
    "Config": "auditor.config",
    "ConfigError": "auditor.config",
    "PathNotFound": "auditor.discovery",
    "BaselineError": "auditor.baseline",
}

__all__ = ["__version__", *_EXPORTS]

if _TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs; nothing is imported at run time
    from auditor.api import ScanOutcome, ScanRequest, run_scan, scan
    from auditor.baseline import BaselineError
    from auditor.config import Config, ConfigError
    from auditor.discovery import PathNotFound
    from auditor.dynamic.assertions import ResumeContractError, SweepIncomplete
    from auditor.dynamic.cells import Cell
    from auditor.dynamic.report import SweepReport
    from auditor.dynamic.sweep import BACKENDS, CELL_KINDS, NO_STUB, SweepUsageError, crash_sweep
    from auditor.dynamic.target import TargetError
    from auditor.findings import (
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


def __getattr__(name: str) -> _Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'auditor' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
