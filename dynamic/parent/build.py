"""From cell verdicts to :class:`resume_audit.findings.Finding` objects.

One finding per (rule, node, subject): a duplicated effect exposed at five
kill points is one hazard with five witnesses, not five findings. The primary
witness is the first cell in the sweep's stable order, so the finding --
message, code flow and fingerprint -- is the same on every sweep of the same
graph. Findings are located at the definition of the node that misbehaved in
the user's file; where that cannot be known, at the target itself.
"""

from __future__ import annotations

import hashlib
import os

from resume_audit.dynamic.adapters.base import SourceLocation
from resume_audit.dynamic.catalog import dynamic_rule
from resume_audit.dynamic.cells import Cell, Hit
from resume_audit.findings import Finding, FlowStep, Related, Span


def display_path(path: str, cwd: str) -> str:
    """Relative to ``cwd`` (POSIX) when inside it, absolute otherwise -- as the static scan reports paths."""
    real = os.path.realpath(path)
    root = os.path.realpath(cwd)
    if real == root or real.startswith(root + os.sep):
        return os.path.relpath(real, root).replace(os.sep, "/")
    return real


class Locator:
    """Spans for nodes (from the dry run's report) and for the target."""

    def __init__(self, nodes: dict[str, SourceLocation], target_loc: SourceLocation | None, cwd: str) -> None:
        self.nodes = dict(nodes)
        self.target = target_loc
        self.cwd = cwd

    def span(self, node: str | None) -> Span:
        loc = self.nodes.get(node or "") or self.target
        if loc is None:
            return Span("<unknown>", 1, 1, 1, 1)
        return Span(display_path(loc.file, self.cwd), loc.start_line, loc.start_col, loc.start_line, loc.start_col + 3)

    def site(self, site: str | None, node: str | None) -> Span:
        """The span of the source line ``site`` ("file:line"), or the node's when unknown."""
        if site:
            file, _, line = site.rpartition(":")
            try:
                n = int(line)
                with open(file, encoding="utf-8") as fh:
                    text = fh.read().splitlines()[n - 1]
            except (OSError, ValueError, IndexError):
                return self.span(node)
            start = len(text) - len(text.lstrip()) + 1
            return Span(display_path(file, self.cwd), n, start, n, len(text.rstrip()) + 1)
        return self.span(node)

    def definition(self, node: str | None) -> Span:
        loc = self.nodes.get(node or "") or self.target
        if loc is None:
            return Span("<unknown>", 1, 1, 1, 1)
        return Span(display_path(loc.file, self.cwd), loc.start_line, loc.start_col, loc.end_line, loc.end_col)


def fingerprint(rule: str, target: str, node: str | None, probe: str) -> str:
    key = "\x1f".join(["resumeAudit/dyn/v1", rule, target, node or "", probe])
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def build_findings(cells: list[Cell], locator: Locator, target: str) -> list[Finding]:
    groups: dict[tuple[str, str, str], list[tuple[Cell, Hit]]] = {}
    for cell in cells:
        for hit in cell.hits:
            groups.setdefault((hit.rule, hit.node or "", hit.subject), []).append((cell, hit))
    findings = []
    for (rule_id, node, _subject), members in sorted(groups.items()):
        rule = dynamic_rule(rule_id)
        assert rule is not None, rule_id
        cell, hit = members[0]
        others = [c.name for c, _ in members[1:]]
        message = hit.message
        if others:
            message += f" The same happens in {len(others)} other cell{'s' if len(others) != 1 else ''}."
        span = locator.definition(hit.node)
        flow = tuple(FlowStep(locator.site(step[2] if len(step) > 2 else None, step[0]), step[1]) for step in hit.flow)
        witness = {
            **(hit.witness.to_json() if hit.witness is not None else {}),
            "cell": cell.name,
            "cell_kind": str(cell.kind),
        }
        if others:
            witness["also_at"] = others
        related: tuple[Related, ...] = ()
        if hit.node is None and locator.target is not None:
            related = (Related(locator.definition(None), "the swept target"),)
        findings.append(
            Finding(
                rule_id=rule.id,
                severity=rule.severity,
                properties=rule.properties,
                message=message,
                fix=" ".join(rule.fix.split()),
                span=span,
                related=related,
                flows=(flow,) if flow else (),
                fingerprint=fingerprint(rule.id, target, hit.node, cell.name),
                scope=hit.node or "",
                origin="dynamic",
                witness=witness,
                evidence=hit.witness,
            )
        )
    return sorted(findings, key=lambda f: f.sort_key)
