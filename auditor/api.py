"""The Python API behind the CLI: scan paths, apply config and baselines, decide the exit code.

``scan()`` is the function a team's own code or test suite calls::

    from auditor.api import scan
    findings = scan(["src/myagent"])            # list[Finding]
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from auditor.baseline import apply_baseline, read_baseline, write_baseline
from auditor.config import Config, find_pyproject, load_config, validate_fail_on, validate_rule_ids
from auditor.discovery import PathNotFound
from auditor.engine import scan as engine_scan
from auditor.findings import Finding, ScanResult, Span
from auditor.gitdiff import ChangedLines, changed_lines
from auditor.rules import all_rules


@dataclass
class ScanRequest:
    """Everything a scan can be asked, as the CLI exposes it."""

    paths: list[Path]
    select: list[str] | None = None
    ignore: list[str] | None = None
    exclude: list[str] = field(default_factory=list)
    fail_on: str | None = None
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


@dataclass
class ScanOutcome:
    result: ScanResult
    config: Config
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


def resolve_config(request: ScanRequest) -> Config:
    """File configuration (explicit, or the nearest pyproject.toml with a [tool.resume-audit] table),
    overridden by command-line values."""
    known = [r.id for r in all_rules()]
    pyproject = request.config_path or (find_pyproject(request.paths[0]) if request.paths else None)
    config = load_config(pyproject, known)
    if request.select is not None:
        config.select = validate_rule_ids(request.select, set(known), "--select")
    if request.ignore is not None:
        config.ignore = validate_rule_ids(request.ignore, set(known), "--ignore")
    if request.exclude:
        config.exclude = [*config.exclude, *request.exclude]
    if request.fail_on is not None:
        config.fail_on = validate_fail_on(request.fail_on, "--fail-on")
    return config


def only_changed(findings: list[Finding], changed: ChangedLines, root: Path) -> tuple[list[Finding], int]:
    """Findings whose flagged lines, or a related location's (a newly added ``interrupt()``
    that makes an old effect re-run), were changed; and how many were left out."""

    def touched(span: Span) -> bool:
        path = Path(span.path) if Path(span.path).is_absolute() else root / span.path
        return changed.touches(path, span.start_line, span.end_line)

    kept = [f for f in findings if touched(f.span) or any(touched(r.span) for r in f.related)]
    return kept, len(findings) - len(kept)


def run_scan(request: ScanRequest) -> ScanOutcome:
    """Scan, apply the baseline, write one if asked, and compute the exit code."""
    if not request.paths:
        raise PathNotFound("no paths given")
    for p in request.paths:
        if not p.exists():
            raise PathNotFound(f"path does not exist: {p}")
    config = resolve_config(request)
    root = (request.root or default_root(request.paths)).resolve()
    result = engine_scan(request.paths, config, root, jobs=request.jobs, cache_dir=request.cache_dir)
    if request.baseline is not None:
        known = read_baseline(request.baseline)
        result.findings, result.baselined = apply_baseline(result.findings, known)
    if request.diff_base is not None:
        changed = changed_lines(request.diff_base, request.paths[0].resolve())
        result.findings, result.outside_diff = only_changed(result.findings, changed, root)
    if request.write_baseline is not None:
        write_baseline(request.write_baseline, result.findings)
    threshold = config.fail_threshold()
    exit_code = 1 if threshold is not None and result.count_at_or_above(threshold) else 0
    return ScanOutcome(result, config, exit_code)


def scan(paths: Sequence[str | Path], *, config: Config | None = None, root: str | Path | None = None) -> list[Finding]:
    """Scan ``paths`` and return the findings (config from ``config`` or the project's pyproject.toml)."""
    path_list = [Path(p) for p in paths]
    if config is None:
        config = resolve_config(ScanRequest(paths=path_list))
    base = Path(root).resolve() if root is not None else default_root(path_list)
    return engine_scan(path_list, config, base).findings
