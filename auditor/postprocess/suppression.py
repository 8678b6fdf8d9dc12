"""``# resume-audit: ignore[RA201]`` comments.

A finding is suppressed when any line of its primary span carries the
comment, either bare (``# resume-audit: ignore``: every rule) or with a list
of rule ids. Comments are read with :mod:`tokenize`, so the marker inside a
string literal does not count.

Each comment is also kept as a :class:`SuppressionComment` (line, column,
ids) and each suppression that took effect as a :class:`SuppressionUse`, so
the scan can report comments that suppress nothing or name no rule (see
:mod:`resume_audit.postprocess.unused_suppressions`).
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from typing import NamedTuple

_MARKER = re.compile(r"#\s*resume-audit\s*:\s*ignore(?:\[(?P<ids>[^\]]*)\])?", re.IGNORECASE)

#: line -> rule ids suppressed there; ``None`` means every rule
Suppressions = dict[int, "frozenset[str] | None"]


@dataclass(frozen=True)
class SuppressionComment:
    """One ``# resume-audit: ignore`` comment as written."""

    line: int
    #: 1-based column of the ``#``
    column: int
    #: the rule ids it names (upper-cased); None: bare, every rule
    ids: frozenset[str] | None


class SuppressionUse(NamedTuple):
    """A finding of ``rule_id`` that a comment on ``line`` of ``path`` (a reported path) suppressed."""

    path: str
    line: int
    rule_id: str


def parse_comments(source: str) -> list[SuppressionComment]:
    """Every suppression comment of ``source``, in order (none when it cannot be tokenized)."""
    out: list[SuppressionComment] = []
    if "resume-audit" not in source:
        return out
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return out
    for tok in tokens:
        if tok.type != tokenize.COMMENT:
            continue
        match = _MARKER.search(tok.string)
        if not match:
            continue
        ids = match.group("ids")
        named = (
            None
            if ids is None or not ids.strip()
            else frozenset(i.strip().upper() for i in ids.split(",") if i.strip())
        )
        out.append(SuppressionComment(tok.start[0], tok.start[1] + 1 + match.start(), named))
    return out


def parse_suppressions(source: str) -> Suppressions:
    out: Suppressions = {}
    for comment in parse_comments(source):
        line = comment.line
        if comment.ids is None:
            out[line] = None
        else:
            prev = out.get(line, frozenset())
            out[line] = None if prev is None and line in out else (prev or frozenset()) | comment.ids
    return out


def suppressing_lines(suppressions: Suppressions, rule_id: str, start_line: int, end_line: int) -> list[int]:
    """The lines of the span whose comment suppresses ``rule_id`` (empty: not suppressed)."""
    out = []
    for line in range(start_line, end_line + 1):
        if line in suppressions:
            ids = suppressions[line]
            if ids is None or rule_id in ids:
                out.append(line)
    return out


def is_suppressed(suppressions: Suppressions, rule_id: str, start_line: int, end_line: int) -> bool:
    return bool(suppressing_lines(suppressions, rule_id, start_line, end_line))
