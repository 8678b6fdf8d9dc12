"""The package's version, in a module of its own: every part of the tool that names the version
(the reports, the cache keys, ``--version``) imports it from here, never from the package
``resume_audit`` itself, whose ``__init__`` re-exports the API lazily -- importing the package
from one of its own modules made an import cycle.

A constant rather than ``importlib.metadata.version("resume-audit")``: a warm scan is a few
tenths of a second, and importing ``importlib.metadata`` and searching the installed
distributions costs it a measurable share (measured on this project: 40-100 ms); the cache key
needs the version on that path. ``tests/test_version.py`` fails when this constant and the
installed distribution's version (``pyproject.toml``'s ``[project] version``) disagree.
"""

from __future__ import annotations

__version__ = "0.1.0"
