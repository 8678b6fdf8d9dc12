"""Writing the cache's JSON files: whole or not at all.

The result cache, the file table, the stored summaries and the rule snapshot each write a JSON
file that a concurrent or later scan reads. A file is written to a temporary name in its own
folder and renamed over the old one, so a reader sees the old file or the new one, never half of
either; a failure (an unwritable cache) costs the write, never the scan.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path


def write_json_atomically(path: Path, data: object) -> bool:
    """Write ``data`` to ``path`` (replacing it in one rename); False when it could not be written.

    ``json.dumps`` and one write: ``json.dump`` streams through the pure-Python encoder, several
    times slower on the file table of a big tree."""
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f"{os.getpid()}-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(data))
        os.replace(tmp, path)
        return True
    except OSError:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        return False
