"""Suppression hygiene, as ruff's unused-``noqa`` check (RUF100): a ``# resume-audit: ignore``
comment that names an unknown rule id, or suppresses nothing on its line, is reported.

A stale suppression is worse than none: it hides the next hazard someone writes on that line.
It is reported as a notification (path, line, column) in every format; ``--fail-on-unused-suppressions``
(or ``fail-on-unused-suppressions = true``) makes the scan exit 1 when there is one.

What counts, so that a partial run never calls a needed comment unused:

* an id that is no rule's (``RA999``, a typo, a prefix such as ``RA1``) is reported whatever ran;
* a known id is judged only when its rule ran in this scan (``--select``/``--ignore`` left it on):
  it is unused when no finding of that rule on a line of the comment's span was suppressed by it
  -- in any file's analysis, since a hazard in a shared helper is found from the files that call it;
* a bare comment (every rule) is judged only when every rule ran;
* only files the scan analysed are judged, and not one whose own analysis timed out or failed.

The uses come from every file's result, cached ones included, so a warm run reports the same.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from resume_audit.findings import Notification, NotificationKind, Severity
from resume_audit.postprocess.suppression import SuppressionComment, SuppressionUse


def unused_suppressions(
    comments: Mapping[str, Sequence[SuppressionComment]],
    uses: Iterable[SuppressionUse],
    rules_run: Iterable[str],
    known_rules: Iterable[str],
) -> list[Notification]:
    """A notification per comment (by reported path) that names an unknown id or suppresses nothing."""
    used = set(uses)
    ran, known = set(rules_run), set(known_rules)
    lines_used = {(u.path, u.line) for u in used}
    notes: list[Notification] = []
    for path, found in comments.items():
        for comment in found:
            problems: list[str] = []
            if comment.ids is None:
                if ran >= known and (path, comment.line) not in lines_used:
                    problems.append("no finding on this line is suppressed by it")
            else:
                unknown = sorted(i for i in comment.ids if i not in known)
                idle = sorted(i for i in comment.ids if i in ran and SuppressionUse(path, comment.line, i) not in used)
                if unknown:
                    problems.append(
                        f"unknown rule id{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                        "(`resume-audit rules` lists them)"
                    )
                if idle:
                    problems.append(f"no {', '.join(idle)} finding on this line to suppress")
            if problems:
                notes.append(
                    Notification(
                        NotificationKind.UNUSED_SUPPRESSION,
                        f"unused suppression comment: {'; '.join(problems)}. Remove it, or the ids it no longer needs.",
                        path,
                        comment.line,
                        comment.column,
                        level=Severity.WARNING,
                    )
                )
    return notes
