"""Whether a report written to stdout may carry terminal escapes: rich's decision, not ours.

Users set ``NO_COLOR``, ``FORCE_COLOR``, ``TERM=dumb`` (and ``TTY_COMPATIBLE``,
``COLUMNS``) expecting every rich-based tool to honour them the same way. A
hand-written check drifts from rich's rules -- ``"NO_COLOR" in os.environ``
treated an *empty* ``NO_COLOR`` as set, which the no-color.org convention and
rich do not -- so the decision is read off a :class:`rich.console.Console`
bound to stdout, and reports rendered into a string use the colour system and
``no_color`` it chose.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Styling:
    """How the text report may style itself (what rich chose for the real stdout)."""

    #: rich's colour system ("standard", "256", "truecolor", "windows"); None: no escapes at all
    color_system: str | None = None
    #: ``NO_COLOR`` is set: text styles (bold, underline) but no colours, as rich does it
    no_color: bool = False
    #: the terminal's width, when stdout is one
    width: int | None = None

    @property
    def escapes(self) -> bool:
        """Whether the output may contain any escape sequence."""
        return self.color_system is not None


#: no escapes: reports written to files, and every machine-readable format
PLAIN = Styling()


def stdout_styling() -> Styling:
    """What rich would do on this process's stdout, under the current environment."""
    from rich.console import Console  # only the text report asks: the other formats never import rich

    console = Console(file=sys.stdout)
    width = console.width if _is_tty() else None
    if not console.is_terminal or console.color_system is None:
        return Styling(width=width)
    return Styling(color_system=console.color_system, no_color=console.no_color, width=width)


def _is_tty() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):  # replaced or closed stdout
        return False
