"""Post-processing of one file's findings, where the file's own text is at hand: suppression
comments, per-path ignores, one finding per location, fingerprints.

Run by the analysis for each file a finding lands in (a finding reached from another file is
judged against the comments of the file it is in), so a cached result holds findings already
post-processed; what needs every file (duplicates reached from two files, unused suppression
comments) is done when the results are combined (:mod:`resume_audit.engine.combine`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

from resume_audit.config.settings import Config
from resume_audit.discovery.repo_root import AS_REPORTED, RepoPaths
from resume_audit.findings import Finding, Span
from resume_audit.postprocess.fingerprint import assign_fingerprints
from resume_audit.postprocess.suppression import SuppressionUse, parse_suppressions, suppressing_lines

if TYPE_CHECKING:
    from resume_audit.facts.collect import ModuleFacts
    from resume_audit.rules import Rule


def postprocess(
    findings: Iterable[Finding],
    module: ModuleFacts,
    config: Config,
    rules: Sequence[Rule],
    repo: RepoPaths = AS_REPORTED,
    used: set[SuppressionUse] | None = None,
) -> tuple[list[Finding], int]:
    """Suppression comments, per-path ignores, one finding per location, fingerprints -- all per file.

    Every comment that matches a finding is added to ``used`` -- also when a per-path ignore drops
    the finding anyway: the comment is not stale, only redundant with the configuration."""
    suppressions = parse_suppressions(module.source)
    relative = _config_relative(module, config)
    kept: list[Finding] = []
    suppressed = 0
    for f in findings:
        lines = suppressing_lines(suppressions, f.rule_id, f.span.start_line, f.span.end_line)
        if used is not None:
            used.update(SuppressionUse(f.span.path, line, f.rule_id) for line in lines)
        if lines or config.ignored_for_path(f.rule_id, relative):
            suppressed += 1
            continue
        kept.append(f)
    kept = one_per_location(kept, {type(r).id: type(r) for r in rules})
    return assign_fingerprints(kept, {module.display_path: module.lines}, repo.relative), suppressed


def _config_relative(module: ModuleFacts, config: Config) -> str:
    """The module's path as the configuration's per-path ignores name it: relative to the folder
    of the pyproject.toml it came from."""
    base = config.base_dir
    if base is None:
        return module.display_path
    try:
        return module.path.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return module.display_path


def one_per_location(findings: list[Finding], rules: Mapping[str, type[Rule]]) -> list[Finding]:
    """Drop exact duplicates, and a finding whose rule yields to another rule at the same location."""
    at: dict[tuple[str, int, int], set[str]] = {}
    for f in findings:
        at.setdefault((f.span.path, f.span.start_line, f.span.start_col), set()).add(f.rule_id)
    out: list[Finding] = []
    seen: set[tuple[str, Span]] = set()
    for f in findings:
        key = (f.rule_id, f.span)
        if key in seen:
            continue
        seen.add(key)
        present = at[(f.span.path, f.span.start_line, f.span.start_col)]
        yields_to: Sequence[str] = getattr(rules.get(f.rule_id), "yields_to", ())
        if any(other in present for other in yields_to):
            continue
        out.append(f)
    return out
