"""resume-audit: finds where an agent codebase's checkpoint / interrupt / resume plane breaks its promises."""

from __future__ import annotations

__version__ = "0.1.0"
