"""The package's version, written in this one place: ``pyproject.toml`` declares the version
dynamic and setuptools reads it from here (``[tool.setuptools.dynamic]``, statically, without
importing the package), so the installed distribution's metadata, ``--version``, the reports and
the cache keys all say the same thing.

Every part of the tool that names the version imports it from here, never from the package
``resume_audit`` itself, whose ``__init__`` re-exports the API lazily -- importing the package
from one of its own modules made an import cycle. A constant rather than
``importlib.metadata.version("resume-audit")``: the warm scan needs the version for its cache key,
and importing ``importlib.metadata`` and searching the installed distributions would cost it a
measurable share (benchmarks/README.md). ``tests/test_version.py`` checks that the installed
metadata is this constant.
"""

from __future__ import annotations

__version__ = "0.1.0"
