"""The user's rule settings applied to a sweep's findings, as ``scan`` applies them.

A team that silences a finding in ``scan`` (``--ignore``, ``[tool.resume-audit] ignore`` /
``per-path-ignores``, a ``# resume-audit: ignore[RA707]`` comment on the flagged line) expects
``crash-sweep`` and ``audit`` to honour the same setting: otherwise noise from a probe cannot be
silenced and CI cannot be made green without dropping the sweep.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from resume_audit.config.settings import Config, find_pyproject, load_config, validate_rule_ids
from resume_audit.dynamic.catalog import DYNAMIC_RULES
from resume_audit.findings import Finding
from resume_audit.postprocess.suppression import Suppressions, is_suppressed, parse_suppressions


@dataclass(frozen=True)
class Filtered:
    """The findings kept, and how many the settings dropped."""

    kept: list[Finding]
    suppressed: int


def known_rule_ids() -> list[str]:
    """Every rule id a setting may name: the static catalog and the dynamic one."""
    from resume_audit.rules import all_rules

    return [r.id for r in all_rules()] + [r.id for r in DYNAMIC_RULES]


def sweep_config(target_path: Path | None, select: Sequence[str] | None, ignore: Sequence[str] | None) -> Config:
    """The nearest ``[tool.resume-audit]`` table above the target file (or the working directory),
    with ``--select`` / ``--ignore`` from the command line on top."""
    known = known_rule_ids()
    config = load_config(find_pyproject(target_path if target_path is not None else Path.cwd()), known)
    if select is not None:
        config.select = validate_rule_ids(select, set(known), "--select")
    if ignore is not None:
        config.ignore = validate_rule_ids(ignore, set(known), "--ignore")
    return config


def apply_settings(findings: Sequence[Finding], config: Config, root: Path) -> Filtered:
    """Drop findings of disabled rules, per-path ignores and inline suppressions on the flagged lines."""
    kept: list[Finding] = []
    dropped = 0
    sources: dict[str, Suppressions | None] = {}
    for f in findings:
        path = Path(f.span.path) if Path(f.span.path).is_absolute() else root / f.span.path
        relative = f.span.path
        if config.base_dir is not None:
            try:
                relative = path.resolve().relative_to(config.base_dir.resolve()).as_posix()
            except ValueError:
                pass
        if not config.rule_enabled(f.rule_id) or config.ignored_for_path(f.rule_id, relative):
            dropped += 1
            continue
        if f.span.path not in sources:
            try:
                sources[f.span.path] = parse_suppressions(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError):
                sources[f.span.path] = None
        suppressions = sources[f.span.path]
        if suppressions is not None and is_suppressed(suppressions, f.rule_id, f.span.start_line, f.span.end_line):
            dropped += 1
            continue
        kept.append(f)
    return Filtered(kept, dropped)
