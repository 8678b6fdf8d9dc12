"""What a scan covers: the paths, where each folder's configuration comes from, the report root
and the repository root -- settled once, before any stage runs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from resume_audit.config.settings import Config
from resume_audit.config.tree import ConfigSource, FixedConfig, common_dir, root_config
from resume_audit.discovery.repo_root import RepoPaths


@dataclass(frozen=True)
class ScanScope:
    """The scanned paths as given, the configuration source, the root reported paths are relative
    to, and the repository root fingerprints are relative to."""

    paths: Sequence[Path]
    source: ConfigSource
    root: Path
    repo: RepoPaths

    @classmethod
    def of(cls, paths: Sequence[Path], config: Config | ConfigSource, root: Path, repo: RepoPaths | None) -> ScanScope:
        """``config``: one configuration for every file, or a source giving each folder its own;
        ``repo``: None to find it from ``root`` and the root configuration."""
        source: ConfigSource = FixedConfig(config) if isinstance(config, Config) else config
        return cls(paths, source, root, repo or RepoPaths.for_scan(root, root_config(source, list(paths)).base_dir))

    @property
    def fixed_config(self) -> Config | None:
        """The one configuration of every file, when there is one (``--config``, or given by the caller)."""
        return self.source.config if isinstance(self.source, FixedConfig) else None

    def home(self) -> Path:
        """The folder whose configuration stands for the scan when no file was found."""
        return common_dir(self.paths) if self.paths else self.root
