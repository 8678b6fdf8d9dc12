"""The command that reruns what the audit swept, one entry point's failing cells alone.

An audit takes minutes; the user who wants to look at one finding needs its sweep again, small and
kept: the ``crash-sweep`` the audit ran for that entry point -- the same target, effects, input, answers,
stubs and factory arguments, from the same folder -- restricted with ``--cells`` to the probes that found
something, with ``--keep-artifacts`` so the cells' databases and ledgers stay on disk (their folder is
printed at the end of the sweep). Each finding's own witness is its ``witness`` in ``--format json``.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from resume_audit.dynamic.cells import Verdict

if TYPE_CHECKING:
    from resume_audit.audit.confirm import SweptEntry


def failing_cells(swept: SweptEntry) -> list[str]:
    """The ``--cells`` kinds of the entry point's cells that found something, in sweep order."""
    report = swept.report
    if report is None:
        return []
    return list(dict.fromkeys(str(c.kind) for c in report.cells if c.hits or c.verdict is Verdict.FAIL))


def effect_option(display: str, root: Path) -> str:
    """``--effect``'s ``module:function`` for an effect as the report shows it (``module.function``): the
    longest prefix that is a module of the project under ``root``, else a library's top-level module
    (``requests.Session.post`` -> ``requests:Session.post``)."""
    parts = display.split(".")
    for n in range(len(parts) - 1, 0, -1):
        folder = root.joinpath(*parts[:n])
        if folder.with_suffix(".py").is_file() or (folder / "__init__.py").is_file():
            return f"{'.'.join(parts[:n])}:{'.'.join(parts[n:])}"
    return f"{parts[0]}:{'.'.join(parts[1:])}" if len(parts) > 1 else display


def _json(value: Any) -> str:
    return shlex.quote(json.dumps(value, sort_keys=True))


def rerun_command(swept: SweptEntry) -> str:
    """``cd <root> && resume-audit crash-sweep <target> ... --cells <kinds> --keep-artifacts`` (empty when
    the entry point was not swept)."""
    report = swept.report
    if report is None:
        return ""
    protocol = report.protocol
    parts = ["resume-audit", "crash-sweep", shlex.quote(swept.entry.target)]
    if swept.entry.framework:
        parts += ["--framework", swept.entry.framework]
    parts += [f"--effect {shlex.quote(effect_option(e, Path(swept.entry.root)))}" for e in protocol.effects]
    if protocol.stub is not None or protocol.effects:
        parts.append(f"--stub {_json(protocol.stub)}")
    parts += [f"--stub {shlex.quote(f'{name}={json.dumps(value)}')}" for name, value in sorted(protocol.stubs.items())]
    if protocol.input is not None:
        parts.append(f"--input {_json(protocol.input)}")
    parts += [f"--resume {_json(answer)}" for answer in protocol.resume]
    if protocol.config:
        parts.append(f"--config {_json(protocol.config)}")
    if protocol.stub_llm is not None:
        parts.append("--stub-llm plain")
    if swept.entry.factory_kwargs:
        parts.append(f"--factory-kwargs {_json(dict(swept.entry.factory_kwargs))}")
    cells = failing_cells(swept)
    if cells:
        parts.append(f"--cells {','.join(cells)}")
    parts.append("--keep-artifacts")
    return f"cd {shlex.quote(swept.entry.root)} && " + " ".join(parts)
