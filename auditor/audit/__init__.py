"""``resume-audit audit``: static findings confirmed or refuted by sweeping the programs they live in.

- ``entrypoints``  the sweepable programs of a project, found by reading it (each framework's own
                   discovery in ``frameworks/<name>/entrypoints.py``)
- ``modules``      the one parse of each file every step reads (the scan's ``ModuleFacts``)
- ``syntax``       the few questions the audit asks of a module's syntax
- ``plan``         effects, stubs, input and answers for each, and the ``[tool.resume-audit.audit]`` tables
- ``confirm``      each static finding judged by the sweeps: confirmed / not reproduced / not exercised
- ``run``          the orchestration (``run_audit``) and the report
"""

from resume_audit.audit.run import AuditReport, AuditRequest, run_audit

__all__ = ["AuditReport", "AuditRequest", "run_audit"]
