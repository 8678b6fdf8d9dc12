"""The ``resume-audit`` command line (typer). A thin layer over :mod:`resume_audit.api`.

Exit codes, for every command: 0 -- nothing at or above ``--fail-on``;
1 -- findings at or above ``--fail-on`` (``scan --fail-on-unused-suppressions``:
or an unused suppression comment); 2 -- usage, configuration or internal error.

The application lives in :mod:`resume_audit.cli.app`; each group of commands in a module of its
own, registered on it when imported (here, in the order ``--help`` lists them).
"""

from __future__ import annotations

# the commands register in import order, which is the order --help lists them
# isort: off
from resume_audit.cli import static_commands as _static_commands  # noqa: F401  scan, fix
from resume_audit.cli import audit_command as _audit_command  # noqa: F401  audit
from resume_audit.cli import dynamic_commands as _dynamic_commands  # noqa: F401  crash-sweep, merge, conformance
from resume_audit.cli import catalog_commands as _catalog_commands  # noqa: F401  rules, effects, explain
from resume_audit.cli import github_commands as _github_commands  # noqa: F401  github-report, github-suggest
from resume_audit.cli import server_command as _server_command  # noqa: F401  server

# isort: on
from resume_audit.cli.app import app
from resume_audit.cli.main import main

__all__ = ["app", "main"]
