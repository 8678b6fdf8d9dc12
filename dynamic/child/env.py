"""Environment every sweep child runs under, set before any framework is imported.

Imported first by the fork server (``runner.context``), so frameworks the
server preloads already see it, and applied again by each child. The sweep
never lets a framework phone home: CrewAI's anonymous telemetry and its
tracing are switched off by their documented opt-outs (checked in
``crewai_core/telemetry.py``: ``OTEL_SDK_DISABLED``,
``CREWAI_DISABLE_TELEMETRY``, ``CREWAI_DISABLE_TRACKING``; and
``crewai/events/listeners/tracing/utils.py``: ``CREWAI_TRACING_ENABLED``), so
a run neither depends on the network nor trips the sandbox's refusal of
non-loopback connections.

:func:`enter` then replaces the whole environment with the sweep's allow-list
(:mod:`resume_audit.dynamic.environment`) before the user's program is imported.
"""

from __future__ import annotations

import os

from resume_audit.dynamic.environment import ChildEnvironment

QUIET_ENV: dict[str, str] = {
    "OTEL_SDK_DISABLED": "true",
    "CREWAI_DISABLE_TELEMETRY": "true",
    "CREWAI_DISABLE_TRACKING": "true",
    "CREWAI_TRACING_ENABLED": "false",
    "CREWAI_TESTING": "true",
}


def apply() -> None:
    """Set the quiet environment in this process."""
    os.environ.update(QUIET_ENV)


apply()


def enter(environment: ChildEnvironment) -> None:
    """Make the allow-listed ``environment`` (plus the quiet settings) this process's whole environment.

    ``os.environ.clear()`` unsets every variable in the C environment too, so what the program or a
    process it starts reads is only this. The child's sandbox then adds the cell's HOME, TMPDIR and
    XDG folders, and :mod:`resume_audit.dynamic.lifetime` its cell tag.
    """
    os.environ.clear()
    os.environ.update(environment.as_dict())
    apply()


def _quiet_warnings() -> None:
    """lancedb (imported by CrewAI's memory) warns at every fork from the fork server; the sweep's
    children never open a LanceDB table before they are forked, which is the case it warns about."""
    import warnings

    warnings.filterwarnings("ignore", message="lancedb fork support is experimental")


_quiet_warnings()
