"""Whether a process still runs: leftovers named after their writer's pid (a cache entry's
temporary file, a sweep's temporary root) are removed only once that writer is gone."""

from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    """True while ``pid`` exists (a process of another user counts: signalling it is refused)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
