"""pydantic-graph's row of the conformance matrix: the bundled approval graph on ``FileStatePersistence``.

pydantic-graph 2.x removed ``pydantic_graph.persistence``: there the row only says so.
"""

from __future__ import annotations

from importlib import metadata

from resume_audit.dynamic.conformance.suite import PROBES, Probe, Unswept
from resume_audit.frameworks.pydantic_graph import FRAMEWORK

_PROGRAM = f"{PROBES}.pydantic_graph_approval"


def probes(saver: str | None, dsn: str | None) -> list[Probe | Unswept]:
    """Its row, when pydantic-graph is installed (``saver``, ``dsn``: unused here)."""
    if not FRAMEWORK.installed():
        return []
    try:
        version = metadata.version(FRAMEWORK.distribution)
    except metadata.PackageNotFoundError:
        version = "?"
    major = version.split(".")[0]
    if major.isdigit() and int(major) >= 2:
        return [
            Unswept(
                Probe(FRAMEWORK.id, "FileStatePersistence", "-", f"{_PROGRAM}:build", ()),
                {FRAMEWORK.distribution: version},
                "no persistence module in 2.x",
                f"pydantic-graph {version} removed pydantic_graph.persistence: no documented resume path",
            )
        ]
    return [
        Probe(
            FRAMEWORK.id,
            "FileStatePersistence",
            "JSON file",
            f"{_PROGRAM}:build",
            (f"{_PROGRAM}:prepare_order", f"{_PROGRAM}:charge_card"),
            ("approve",),
        )
    ]
