"""The Python API behind the CLI: scan paths, apply config and baselines, decide the exit code.

``scan()`` is the function a team's own code or test suite calls (also
importable as ``from resume_audit import scan``)::

    from resume_audit import scan
    findings = scan(["src/myagent"])            # list[Finding]
    findings = scan("src", select=["RA1"], baseline=".resume-audit-baseline.json")

``run_scan(ScanRequest(...))`` is what ``resume-audit scan`` runs: it also
returns the notifications, the resolved configuration and the exit code.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from resume_audit.catalog.ruleindex import rule_ids
from resume_audit.config.settings import Config, load_config, validate_fail_on, validate_rule_ids
from resume_audit.config.tree import ConfigSource, ConfigTree, FixedConfig, Overrides, root_config
from resume_audit.discovery.repo_root import RepoPaths
from resume_audit.discovery.walk import PathNotFound
from resume_audit.engine.options import DEFAULT_MAX_FILE_BYTES, DEFAULT_TIME_LIMIT, ScanOptions
from resume_audit.engine.scan import scan as engine_scan
from resume_audit.findings import Finding, ScanResult, Span
from resume_audit.postprocess.baseline import apply_baseline, read_baseline, stale_baseline_note, write_baseline
from resume_audit.postprocess.gitdiff import ChangedLines, changed_lines
from resume_audit.reporters.progress import ScanProgress


@dataclass
class ScanRequest:
    """Everything a scan can be asked, as the CLI exposes it."""

    paths: list[Path]
    select: list[str] | None = None
    ignore: list[str] | None = None
    exclude: list[str] = field(default_factory=list)
    fail_on: str | None = None
    #: exit 1 when a suppression comment is unused (None: the configuration's fail-on-unused-suppressions)
    fail_on_unused_suppressions: bool | None = None
    config_path: Path | None = None
    root: Path | None = None
    baseline: Path | None = None
    write_baseline: Path | None = None
    #: report only findings on lines changed since this git ref
    diff_base: str | None = None
    #: worker processes (None: one per CPU, 1: in process)
    jobs: int | None = None
    #: per-file result cache directory (None: no cache)
    cache_dir: Path | None = None
    #: seconds one file's analysis may take
    file_timeout: float = DEFAULT_TIME_LIMIT
    #: bytes over which a candidate file is skipped with a notification
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    #: exit 2 when any file could not be analysed
    strict: bool = False
    #: scan ``*.py`` symlinks that point outside the scanned folder (skipped with a notification otherwise)
    follow_symlinks: bool = False
    #: a ready configuration to start from instead of reading ``config_path`` / the nearest pyproject.toml
    base_config: Config | None = None
    #: skip what git ignores (None: ``respect-gitignore`` of the root configuration, default yes)
    respect_gitignore: bool | None = None
    #: apply exclude patterns and .gitignore to paths named in ``paths`` too (None: ``force-exclude``
    #: of the root configuration, default no)
    force_exclude: bool | None = None


@dataclass
class ScanOutcome:
    """What ``run_scan`` produced: findings and notifications, the configuration in force, the CLI's exit code."""

    result: ScanResult
    #: the root configuration: the one whose scan-wide settings (``fail-on``) were used
    config: Config
    #: 0 nothing at or above ``fail-on``; 1 findings at or above it (or, when asked, an unused suppression
    #: comment); 2 ``strict`` and a file was not analysed
    exit_code: int


def default_root(paths: Sequence[Path]) -> Path:
    """The current directory when it contains every path (paths then read as the user typed them);
    otherwise the deepest common directory of the paths."""
    cwd = Path.cwd().resolve()
    resolved = [p.resolve() for p in paths]
    if all(p == cwd or cwd in p.parents for p in resolved):
        return cwd
    dirs = [p if p.is_dir() else p.parent for p in resolved]
    return Path(os.path.commonpath([str(d) for d in dirs]))


def config_source(request: ScanRequest) -> ConfigSource:
    """Where each scanned folder's configuration comes from: one for every file (``--config``, or a
    ready Config), else the nearest pyproject.toml with a [tool.resume-audit] table above each
    folder -- in every case with the command-line values in force."""
    known = rule_ids(request.cache_dir)  # from the cache when it has them: the rules are not imported
    overrides = Overrides(
        select=validate_rule_ids(request.select, set(known), "--select") if request.select is not None else None,
        ignore=validate_rule_ids(request.ignore, set(known), "--ignore") if request.ignore is not None else None,
        fail_on=validate_fail_on(request.fail_on, "--fail-on") if request.fail_on is not None else None,
        fail_on_unused_suppressions=request.fail_on_unused_suppressions,
    )
    if request.base_config is not None:
        return FixedConfig(overrides.apply(request.base_config))
    if request.config_path is not None:
        return FixedConfig(overrides.apply(load_config(request.config_path, known)))
    return ConfigTree(known, overrides)


def resolve_config(request: ScanRequest) -> Config:
    """The root configuration (:func:`~resume_audit.config.tree.root_config`): the one for the
    deepest folder holding every path, command-line values in force. Files in folders with their
    own [tool.resume-audit] are checked under theirs (:func:`config_source`)."""
    return root_config(config_source(request), request.paths or [Path.cwd()])


def only_changed(findings: list[Finding], changed: ChangedLines, root: Path) -> tuple[list[Finding], int]:
    """Findings whose flagged lines, or a related location's (a newly added ``interrupt()``
    that makes an old effect re-run), were changed; and how many were left out."""

    def touched(span: Span) -> bool:
        path = Path(span.path) if Path(span.path).is_absolute() else root / span.path
        return changed.touches(path, span.start_line, span.end_line)

    kept = [f for f in findings if touched(f.span) or any(touched(r.span) for r in f.related)]
    return kept, len(findings) - len(kept)


def scan_options(
    request: ScanRequest, config: Config, repo: RepoPaths, progress: ScanProgress | None = None
) -> ScanOptions:
    """How the engine runs the request (``config``: the root configuration, whose scan-wide
    settings apply where the request leaves them open)."""
    return ScanOptions(
        jobs=request.jobs,
        cache_dir=request.cache_dir,
        time_limit=request.file_timeout,
        max_file_bytes=request.max_file_bytes,
        follow_symlinks=request.follow_symlinks,
        progress=progress,
        exclude=request.exclude,
        respect_gitignore=config.respect_gitignore if request.respect_gitignore is None else request.respect_gitignore,
        force_exclude=config.force_exclude if request.force_exclude is None else request.force_exclude,
        repo=repo,
    )


def run_scan(request: ScanRequest, progress: ScanProgress | None = None) -> ScanOutcome:
    """Scan, apply the baseline, write one if asked, and compute the exit code."""
    if not request.paths:
        raise PathNotFound("no paths given")
    for p in request.paths:
        if not p.exists():
            raise PathNotFound(f"path does not exist: {p}")
    source = config_source(request)
    config = root_config(source, request.paths)
    root = (request.root or default_root(request.paths)).resolve()
    # fingerprints and baseline entries name files relative to the repository root, wherever the scan starts
    repo = RepoPaths.for_scan(root, config.base_dir)
    result = engine_scan(request.paths, source, root, scan_options(request, config, repo, progress))
    if request.baseline is not None:
        known = read_baseline(request.baseline)
        result.findings, result.baselined = apply_baseline(result.findings, known)
        stale = stale_baseline_note(request.baseline, known, result.baselined)
        if stale is not None:  # a baseline that hides nothing protects nothing: say so
            result.notifications.append(stale)
    if request.diff_base is not None:
        changed = changed_lines(request.diff_base, request.paths[0].resolve())
        result.findings, result.outside_diff = only_changed(result.findings, changed, root)
    if request.write_baseline is not None:
        write_baseline(request.write_baseline, result.findings, repo)
    threshold = config.fail_threshold()
    exit_code = 1 if threshold is not None and result.count_at_or_above(threshold) else 0
    if config.fail_on_unused_suppressions and result.unused_suppressions:
        exit_code = 1  # as ruff's RUF100: asked for, a stale suppression fails whatever --fail-on says
    if request.strict and result.unanalysed:
        exit_code = 2
    return ScanOutcome(result, config, exit_code)


def scan(
    paths: Sequence[str | os.PathLike[str]] | str | os.PathLike[str],
    *,
    config: Config | str | os.PathLike[str] | None = None,
    root: str | os.PathLike[str] | None = None,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    baseline: str | os.PathLike[str] | None = None,
    jobs: int | None = None,
    respect_gitignore: bool | None = None,
    force_exclude: bool | None = None,
) -> list[Finding]:
    """Statically scan ``paths`` (files or directories, recursively) and return the findings.

    The same semantics as ``resume-audit scan``; never imports or runs the scanned code.

    - ``config``: a :class:`~resume_audit.config.settings.Config`, or the ``pyproject.toml`` to read
      ``[tool.resume-audit]`` from (``--config``), for every file; default: each file gets
      the nearest pyproject.toml above it that has the table.
    - ``root``: the directory reported paths are relative to (``--root``); default: the
      current directory when it contains every path, else their common directory.
    - ``select`` / ``ignore``: rule ids or prefixes, overriding the configuration
      (``--select`` / ``--ignore``); ``exclude``: extra gitignore-style patterns to skip,
      relative to the root (``--exclude``).
    - ``respect_gitignore`` / ``force_exclude``: ``--[no-]respect-gitignore`` /
      ``--[no-]force-exclude`` (default: the configuration's, else yes / no).
    - ``baseline``: a baseline file (``--baseline``): only findings not recorded in it are returned.
    - ``jobs``: worker processes (``--jobs``); default one per CPU, ``1`` scans in this process.

    Findings come back sorted by location, each with its rule id, severity, contract
    properties, span, message and fix. Files that cannot be read or parsed are skipped
    (:func:`run_scan` returns them as notifications). Raises
    :class:`~resume_audit.config.settings.ConfigError` for invalid configuration or rule ids,
    :class:`~resume_audit.discovery.walk.PathNotFound` for a missing path and
    :class:`~resume_audit.postprocess.baseline.BaselineError` for an unreadable baseline -- the errors the
    CLI turns into exit code 2.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    request = ScanRequest(
        paths=[Path(p) for p in paths],
        select=list(select) if select is not None else None,
        ignore=list(ignore) if ignore is not None else None,
        exclude=list(exclude),
        root=Path(root) if root is not None else None,
        baseline=Path(baseline) if baseline is not None else None,
        jobs=jobs,
        respect_gitignore=respect_gitignore,
        force_exclude=force_exclude,
    )
    if isinstance(config, Config):
        request.base_config = config
    elif config is not None:
        request.config_path = Path(config)
    return run_scan(request).result.findings
