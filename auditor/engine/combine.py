"""Stage 5: one :class:`~resume_audit.findings.ScanResult` from the per-file results.

What needs every file is done here, the per-file part having been done by each analysis
(:mod:`resume_audit.postprocess.perfile`): a finding in a shared helper reached from two files is
reported once, a dependency's timeout met by several files once, suppression comments that
suppressed nothing in any file's analysis are reported (:mod:`resume_audit.postprocess.unused_suppressions`),
the per-file unresolved-import notes are folded into one, and everything is sorted by location:
the output is the same whatever order the files were analysed in.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from resume_audit.cache.fileresult import FileResult
from resume_audit.engine.candidates import Candidates
from resume_audit.engine.inventory import Inventory
from resume_audit.engine.scope import ScanScope
from resume_audit.findings import Finding, Notification, NotificationKind, ScanResult, Severity, Span
from resume_audit.postprocess.suppression import SuppressionComment, SuppressionUse
from resume_audit.postprocess.unused_suppressions import unused_suppressions


def combine(
    scope: ScanScope, inventory: Inventory, candidates: Candidates, results: dict[Path, FileResult]
) -> ScanResult:
    """The scan's result: every candidate's findings and notifications, with the inventory's."""
    notifications = inventory.notifications
    findings: list[Finding] = []
    suppressed = 0
    comments: dict[tuple[str, ...], dict[str, list[SuppressionComment]]] = {}  # by the rules run on the file
    uses: set[SuppressionUse] = set()
    seen: set[tuple[str, Span, str]] = set()
    noted = {(n.kind, n.path, n.line, n.message) for n in notifications}
    for path in candidates.paths:
        r = results[path]
        for f in r.findings:  # a finding in a shared helper can be reached from two files
            ident = (f.rule_id, f.span, f.fingerprint)
            if ident not in seen:
                seen.add(ident)
                findings.append(f)
        for n in r.notifications:  # a slow dependency's timeout can come with several files: once
            if (n.kind, n.path, n.line, n.message) not in noted:
                noted.add((n.kind, n.path, n.line, n.message))
                notifications.append(n)
        suppressed += r.suppressed
        uses.update(r.suppressions_used)
        if r.suppression_comments and not _failed(r):
            # a comment is judged against the rules its own folder's configuration runs
            comments.setdefault(tuple(inventory.group_of[path].rule_ids), {})[r.display] = r.suppression_comments
    known_ids = [rule.id for rule in inventory.rule_infos]
    for ran, in_files in comments.items():
        notifications.extend(unused_suppressions(in_files, uses, ran, known_ids))
    findings.sort(key=lambda f: f.sort_key)
    notifications, unresolved = summarise_unresolved(notifications)
    notifications.sort(key=lambda n: (n.path or "", n.line or 0, n.kind.value))
    return ScanResult(
        category="scan/" + ",".join(sorted(_shown(p, scope.root) for p in scope.paths)),
        unresolved_imports=unresolved,
        findings=findings,
        notifications=notifications,
        files_scanned=inventory.discovered,
        root=str(scope.root),
        rules_run=tuple(inventory.groups.rule_ids()),
        suppressed=suppressed,
        files_analysed=len(candidates.paths),
    )


def _failed(result: FileResult) -> bool:
    """Whether the file's own analysis timed out or hit a bug: its comments are not judged (the
    findings they suppress may be the ones that were lost)."""
    return any(
        n.path == result.display and n.kind in (NotificationKind.TIMEOUT, NotificationKind.INTERNAL_ERROR)
        for n in result.notifications
    )


def _shown(path: Path, root: Path) -> str:
    """A scanned path as the category names it: relative to the root when under it."""
    try:
        rel = path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()
    return rel or "."


def summarise_unresolved(notifications: Sequence[Notification]) -> tuple[list[Notification], int]:
    """Fold the per-file unresolved-import notes (cached with each file's result) into one
    notification per scan: a count and two examples, so a user knows tracing was incomplete
    without a line per import."""
    per_file = [n for n in notifications if n.kind is NotificationKind.UNRESOLVED_IMPORTS]
    if not per_file:
        return list(notifications), 0
    rest = [n for n in notifications if n.kind is not NotificationKind.UNRESOLVED_IMPORTS]
    pairs = sorted((n.path or "", name) for n in per_file for name in n.message.split())
    examples = "; ".join(f"`{name}` in {path}" for path, name in pairs[:2])
    files = len({path for path, _ in pairs})
    rest.append(
        Notification(
            NotificationKind.UNRESOLVED_IMPORTS,
            f"{len(pairs)} project import(s) in {files} file(s) matched no file of the scan (e.g. {examples}): "
            "effects and graphs behind them were not traced. Scan the folder the app is run from, "
            "or include the missing modules.",
            None,
            level=Severity.WARNING,
        )
    )
    return rest, len(pairs)
