"""The repository root: what fingerprints and baseline entries name files relative to.

Reported paths are relative to the report root (``--root``, by default the
current directory), so the same file is ``pkg/node.py`` from the repository
root and ``node.py`` from inside ``pkg``. A fingerprint hashed from that path
-- and the baseline built from fingerprints -- would then depend on where the
scan was started: a baseline written with ``cd pkg && resume-audit scan .``
hid nothing when CI ran ``resume-audit scan pkg`` from the top. Hashing the
path relative to the *repository* root instead makes both the same.

The repository root is the nearest folder at or above the report root that
holds ``.git`` (a directory, or the file a worktree or submodule has: the git
top-level, found without running git); outside git, the folder of the
``pyproject.toml`` the configuration came from when it contains the report
root; else the report root itself.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


def repository_root(root: Path, config_root: Path | None = None) -> Path:
    """The folder fingerprint paths are relative to, for a scan reported relative to ``root``."""
    root = root.resolve()
    for folder in (root, *root.parents):
        if (folder / ".git").exists():
            return folder
    if config_root is not None:
        base = config_root.resolve()
        if base == root or base in root.parents:
            return base
    return root


@dataclass(frozen=True)
class RepoPaths:
    """Turns a reported path (relative to the report root, or absolute) into one relative to the
    repository root. Plain data: it travels to the worker processes."""

    #: the repository root, resolved
    anchor: str
    #: the report root relative to it, POSIX-style ("" when they are the same folder)
    prefix: str = ""

    @classmethod
    def for_scan(cls, root: Path, config_root: Path | None = None) -> "RepoPaths":
        resolved = root.resolve()
        anchor = repository_root(resolved, config_root)
        prefix = resolved.relative_to(anchor).as_posix()
        return cls(str(anchor), "" if prefix == "." else prefix)

    def relative(self, reported: str) -> str:
        """``reported`` relative to the repository root (unchanged when the file is outside it)."""
        if os.path.isabs(reported):
            try:
                return Path(reported).relative_to(self.anchor).as_posix()
            except ValueError:
                return reported
        return f"{self.prefix}/{reported}" if self.prefix else reported


#: reported paths taken as they are (a caller with no scan root, e.g. analysing files on their own)
AS_REPORTED = RepoPaths(anchor="", prefix="")
