"""The static scan: discover, parse, index the project, run the rules, post-process.

Two passes, because hazards cross files: every file is parsed and indexed
first (so a node in ``graph.py`` can be seen to reach ``stripe.Charge.create``
inside ``tools/payments.py``), then each rule checks each module against the
whole project. Nothing here imports or executes scanned code.
"""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Iterable, Sequence

from auditor.analysis.configs import ConfigEvaluator
from auditor.analysis.effects import EffectModel
from auditor.analysis.facts import ModuleFacts, build_module_facts
from auditor.analysis.project import Project, module_name_for
from auditor.analysis.source import SourceText, parse_source, read_source
from auditor.config import Config
from auditor.discovery import SourcePath, discover
from auditor.findings import Finding, Notification, NotificationKind, ScanResult
from auditor.fingerprint import assign_fingerprints
from auditor.suppression import is_suppressed, parse_suppressions
from auditor.rules import Rule, RuleContext, all_rules


def load_module(source_path: SourcePath) -> ModuleFacts | Notification:
    """Read, parse and index one file; every failure becomes a notification."""
    source = read_source(source_path.path, source_path.display)
    if isinstance(source, Notification):
        return source
    return index_source(source)


def index_source(source: SourceText) -> ModuleFacts | Notification:
    tree = parse_source(source)
    if isinstance(tree, Notification):
        return tree
    name, is_package = module_name_for(source.path)
    try:
        return build_module_facts(source.path, source.display_path, name, is_package, source.text, tree)
    except RecursionError:
        return Notification(NotificationKind.PARSE_ERROR, "nesting too deep to analyse, file skipped", source.display_path)
    except Exception as exc:  # an indexing bug must cost one file, not the scan
        return Notification(
            NotificationKind.INTERNAL_ERROR,
            f"could not be indexed ({exc.__class__.__name__}: {str(exc)[:120]}); file skipped, please report",
            source.display_path,
        )


def active_rules(config: Config) -> list[Rule]:
    return [rule() for rule in all_rules() if config.rule_enabled(rule.id)]


def check_modules(
    modules: Sequence[ModuleFacts], config: Config, rules: Sequence[Rule]
) -> tuple[list[Finding], list[Notification]]:
    """Run ``rules`` over ``modules`` with the whole set as the project."""
    project = Project(modules)
    effects = EffectModel(config.effect_sinks, config.safe_calls)
    configs = ConfigEvaluator(project)
    findings: list[Finding] = []
    notes: list[Notification] = []
    for module in modules:
        for rule in rules:
            ctx = RuleContext(rule, module, project, effects, configs)
            try:
                findings.extend(rule.check(ctx))
            except RecursionError:
                notes.append(
                    Notification(NotificationKind.INTERNAL_ERROR, f"{rule.id} skipped this file: nesting too deep", module.display_path)
                )
            except Exception as exc:  # a rule bug must not lose the rest of the scan
                where = traceback.extract_tb(exc.__traceback__)[-1]
                notes.append(
                    Notification(
                        NotificationKind.INTERNAL_ERROR,
                        f"{rule.id} failed on this file ({exc.__class__.__name__}: {str(exc)[:120]} at "
                        f"{Path(where.filename).name}:{where.lineno}); other rules and files were scanned",
                        module.display_path,
                    )
                )
    return findings, notes


def postprocess(
    findings: Iterable[Finding], modules: Sequence[ModuleFacts], config: Config, rules: Sequence[Rule]
) -> tuple[list[Finding], int]:
    """Suppression comments, per-path ignores, one finding per location, fingerprints."""
    by_path = {m.display_path: m for m in modules}
    suppressions = {m.display_path: parse_suppressions(m.source) for m in modules}
    kept: list[Finding] = []
    suppressed = 0
    for f in findings:
        if config.ignored_for_path(f.rule_id, _config_relative(f.span.path, modules, config)):
            suppressed += 1
            continue
        if is_suppressed(suppressions.get(f.span.path, {}), f.rule_id, f.span.start_line, f.span.end_line):
            suppressed += 1
            continue
        kept.append(f)
    kept = one_per_location(kept, {type(r).id: type(r) for r in rules})
    lines = {path: m.lines for path, m in by_path.items()}
    return assign_fingerprints(kept, lines), suppressed


def _config_relative(display: str, modules: Sequence[ModuleFacts], config: Config) -> str:
    base = config.base_dir
    if base is None:
        return display
    for m in modules:
        if m.display_path == display:
            try:
                return m.path.resolve().relative_to(base.resolve()).as_posix()
            except ValueError:
                return display
    return display


def one_per_location(findings: list[Finding], rules: dict[str, type[Rule]]) -> list[Finding]:
    """Drop exact duplicates, and a finding whose rule yields to another rule at the same location."""
    at: dict[tuple[str, int, int], set[str]] = {}
    for f in findings:
        at.setdefault((f.span.path, f.span.start_line, f.span.start_col), set()).add(f.rule_id)
    out: list[Finding] = []
    seen: set[tuple] = set()
    for f in findings:
        key = (f.rule_id, f.span)
        if key in seen:
            continue
        seen.add(key)
        present = at[(f.span.path, f.span.start_line, f.span.start_col)]
        yields_to = getattr(rules.get(f.rule_id), "yields_to", ())
        if any(other in present for other in yields_to):
            continue
        out.append(f)
    return out


def scan(paths: Sequence[Path], config: Config, root: Path) -> ScanResult:
    """Scan ``paths`` and return findings and notifications (never raises for bad files)."""
    rules = active_rules(config)
    modules: list[ModuleFacts] = []
    notifications: list[Notification] = []
    files = 0
    for source_path in discover(paths, root, config.exclude):
        files += 1
        loaded = load_module(source_path)
        if isinstance(loaded, Notification):
            notifications.append(loaded)
        else:
            modules.append(loaded)
    raw, notes = check_modules(modules, config, rules)
    notifications.extend(notes)
    findings, suppressed = postprocess(raw, modules, config, rules)
    return ScanResult(
        findings=findings,
        notifications=notifications,
        files_scanned=files,
        root=str(root),
        rules_run=tuple(type(r).id for r in rules),
        suppressed=suppressed,
    )
