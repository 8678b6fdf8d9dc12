"""``# resume-audit: ignore[RA201]`` comments.

A finding is suppressed when any line of its primary span carries the
comment, either bare (``# resume-audit: ignore``: every rule) or with a list
of rule ids. Comments are read with :mod:`tokenize`, so the marker inside a
string literal does not count.
"""

from __future__ import annotations

import io
import re
import tokenize

_MARKER = re.compile(r"#\s*resume-audit\s*:\s*ignore(?:\[(?P<ids>[^\]]*)\])?", re.IGNORECASE)

#: line -> rule ids suppressed there; ``None`` means every rule
Suppressions = dict[int, "frozenset[str] | None"]


def parse_suppressions(source: str) -> Suppressions:
    out: Suppressions = {}
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
        line = tok.start[0]
        ids = match.group("ids")
        if ids is None or not ids.strip():
            out[line] = None
        else:
            new = frozenset(i.strip().upper() for i in ids.split(",") if i.strip())
            prev = out.get(line, frozenset())
            out[line] = None if prev is None and line in out else (prev or frozenset()) | new
    return out


def is_suppressed(suppressions: Suppressions, rule_id: str, start_line: int, end_line: int) -> bool:
    for line in range(start_line, end_line + 1):
        if line in suppressions:
            ids = suppressions[line]
            if ids is None or rule_id in ids:
                return True
    return False
