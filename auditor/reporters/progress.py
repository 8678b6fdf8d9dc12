"""A progress bar for long scans: on stderr, only when stderr is a terminal, and only once the
scan has run for about a second (a quick scan, a pipe or a CI log never sees it).

The engine reports phases through a plain callback (``progress(phase, done, total)``); this module
turns it into a rich bar, so the engine needs no terminal knowledge.
"""

from __future__ import annotations

import contextlib
import os
import time
from typing import TYPE_CHECKING, Callable, Iterator

if TYPE_CHECKING:
    from rich.console import Console

#: progress(phase, done, total): ``total`` None while it is not known yet (files still being found)
ScanProgress = Callable[[str, int, "int | None"], None]
#: seconds a scan runs before the bar appears (``RESUME_AUDIT_PROGRESS_DELAY`` overrides it)
DEFAULT_DELAY = 1.0


def silent(phase: str, done: int, total: int | None) -> None:
    """The callback when no bar is wanted."""


@contextlib.contextmanager
def scan_progress(
    console: Console | None = None, delay: float | None = None, *, enabled: bool = True
) -> Iterator[ScanProgress]:
    """Yield a callback that shows a transient bar once the scan has taken ``delay`` seconds
    (never when not ``enabled``: ``--quiet``)."""
    if not enabled:  # --quiet: no console needed at all
        yield silent
        return
    from rich.console import Console

    console = console or Console(stderr=True)
    if not console.is_terminal:
        yield silent
        return
    # the bar's machinery is imported only when a terminal may see it
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    wait = delay if delay is not None else float(os.environ.get("RESUME_AUDIT_PROGRESS_DELAY", DEFAULT_DELAY))
    bar = Progress(
        TextColumn("[bold]resume-audit scan[/] {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )
    task = bar.add_task("finding files", total=None)
    started = time.monotonic()
    shown = False

    def update(phase: str, done: int, total: int | None) -> None:
        nonlocal shown
        if not shown:
            if time.monotonic() - started < wait:
                return
            bar.start()
            shown = True
        bar.update(task, description=phase, completed=done, total=total)

    try:
        yield update
    finally:
        if shown:
            bar.stop()
