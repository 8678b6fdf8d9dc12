"""MkDocs hooks: the package as it installs, for mkdocstrings to read.

``rules/`` and ``dynamic/`` install as ``resume_audit.rules`` and ``resume_audit.dynamic``
(pyproject.toml ``[tool.setuptools.package-dir]``), so no folder of the repository is the package
``resume_audit`` and griffe, which reads source without importing it, cannot find those two
sub-packages. As ``.ci/typecheck.sh`` does for mypy, the installed layout is assembled in a
temporary folder -- here from symbolic links, so nothing is copied -- and the Python handler is
pointed at it.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority

REPO = Path(__file__).resolve().parent
_layout: Path | None = None


@event_priority(100)  # before mkdocstrings' own on_config, which creates the handler
def on_config(config: Any) -> Any:
    global _layout
    _layout = Path(tempfile.mkdtemp(prefix="resume-audit-docs-"))
    package = _layout / "resume_audit"
    package.mkdir()
    for entry in (REPO / "auditor").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for sub in ("rules", "dynamic"):
        (package / sub).symlink_to(REPO / sub)
    handlers = config.plugins["mkdocstrings"].config["handlers"]
    handlers.setdefault("python", {})["paths"] = [str(_layout)]
    return config


def on_post_build(config: Any) -> None:
    if _layout is not None:
        shutil.rmtree(_layout, ignore_errors=True)
