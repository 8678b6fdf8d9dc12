"""A rich progress bar over a sweep's cells, as a ``progress`` callback for ``crash_sweep``."""

from __future__ import annotations

import contextlib
from typing import Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from resume_audit.dynamic.parent.sweep import Progress as ProgressCallback


@contextlib.contextmanager
def rich_progress(console: Console | None = None, transient: bool = True) -> Iterator[ProgressCallback]:
    """Yield a callback that drives one progress bar (on stderr by default)."""
    console = console or Console(stderr=True)
    bar = Progress(
        TextColumn("[bold]crash-sweep[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}", style="dim"),
        console=console,
        transient=transient,
    )
    task = bar.add_task("uninterrupted run", total=None)

    def update(done: int, total: int, label: str) -> None:
        bar.update(task, completed=done, total=total, description=label[:70])

    with bar:
        yield update
