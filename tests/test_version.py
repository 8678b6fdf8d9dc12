"""The version the tool reports is the version it is installed as (it is read without an import cycle:
tests/test_import_graph.py)."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

from conftest import REPO

import resume_audit
from resume_audit.version import __version__


def test_the_version_is_written_once_and_is_the_installed_version() -> None:
    """pyproject.toml takes the version from auditor/version.py (no second copy to forget)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - the tests run on 3.11+, the package supports 3.10
        import tomli as tomllib
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in pyproject["project"] and "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "resume_audit.version.__version__"}
    assert __version__ == importlib.metadata.version("resume-audit")
    assert resume_audit.__version__ == __version__


def test_the_command_line_prints_the_version() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "resume_audit", "--version"], capture_output=True, text=True, check=True
    )
    assert proc.stdout.strip() == f"resume-audit {__version__}"
