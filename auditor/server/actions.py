"""What the editor offers on a finding: its automatic fix as a quick fix, a suppression comment,
and its explanation on hover.

* The fix is the rule's own (:class:`~resume_audit.findings.Autofix`, what ``resume-audit fix``
  applies): a safe fix is the preferred quick fix; an unsafe one (it changes behaviour a user can
  see, ``--unsafe-fixes`` on the command line) is offered labelled as such, never preferred.
* "Suppress RAxxx on this line" writes the project's comment, ``# resume-audit: ignore[RAxxx]``
  (:mod:`resume_audit.postprocess.suppression`), on the first line of the finding where a comment
  can stand (not inside a multi-line string), or adds the id to the comment already there.
* Hover shows the finding's message and fix, then the rule's documentation: the text of
  ``resume-audit explain``.
"""

from __future__ import annotations

import io
import re
import tokenize
from typing import Sequence

from lsprotocol import types as lsp
from pygls.workspace import PositionCodec

from resume_audit.catalog.descriptors import descriptors
from resume_audit.catalog.docs import render_rule
from resume_audit.findings import Autofix, Finding, FixSafety
from resume_audit.server.diagnostics import Located, span_range

#: a comment that already suppresses some rules on the line: the id joins its list
_LISTED = re.compile(r"#\s*resume-audit\s*:\s*ignore\[(?P<ids>[^\]]*)\]", re.IGNORECASE)
_BARE = re.compile(r"#\s*resume-audit\s*:\s*ignore(?!\[)", re.IGNORECASE)

LinesByUri = dict[str, "Sequence[str] | None"]


def fix_action(
    finding: Finding,
    fix: Autofix,
    where: Located,
    lines_of: LinesByUri,
    codec: PositionCodec,
    diagnostic: lsp.Diagnostic | None,
) -> lsp.CodeAction:
    """The rule's fix as a quick fix: its edits, in every file they touch."""
    changes: dict[str, list[lsp.TextEdit]] = {}
    for edit in fix.edits:
        uri = where.uri(edit.span.path)
        changes.setdefault(uri, []).append(
            lsp.TextEdit(span_range(edit.span, lines_of.get(uri), codec), edit.replacement)
        )
    safe = fix.safety is FixSafety.SAFE
    title = (
        f"Fix {finding.rule_id}: {fix.description}"
        if safe
        else f"Fix {finding.rule_id} (unsafe: changes behaviour callers can see): {fix.description}"
    )
    return lsp.CodeAction(
        title=title,
        kind=lsp.CodeActionKind.QuickFix,
        diagnostics=[diagnostic] if diagnostic is not None else None,
        is_preferred=safe,
        edit=lsp.WorkspaceEdit(changes=changes),
    )


def suppress_action(
    finding: Finding, text: str, uri: str, codec: PositionCodec, diagnostic: lsp.Diagnostic | None
) -> lsp.CodeAction | None:
    """ "Suppress RAxxx on this line": the comment written, or the id added to the one there."""
    lines = text.splitlines(keepends=True)
    line = _commentable_line(text, finding.span.start_line, finding.span.end_line)
    if line is None or line > len(lines):
        return None
    content = lines[line - 1].rstrip("\r\n")
    listed = _LISTED.search(content)
    if _BARE.search(content) and listed is None:
        return None  # a bare comment suppresses every rule already
    if listed is not None:
        ids = [i.strip() for i in listed.group("ids").split(",") if i.strip()]
        if finding.rule_id in ids:
            return None
        at, new_text = listed.end("ids"), (", " if ids else "") + finding.rule_id
    else:
        at, new_text = len(content), f"  # resume-audit: ignore[{finding.rule_id}]"
    position = codec.position_to_client_units([content], lsp.Position(0, at))
    insert_at = lsp.Position(line - 1, position.character)
    return lsp.CodeAction(
        title=f"Suppress {finding.rule_id} on this line",
        kind=lsp.CodeActionKind.QuickFix,
        diagnostics=[diagnostic] if diagnostic is not None else None,
        edit=lsp.WorkspaceEdit(changes={uri: [lsp.TextEdit(lsp.Range(insert_at, insert_at), new_text)]}),
    )


def _commentable_line(text: str, first: int, last: int) -> int | None:
    """The first line from ``first`` to ``last`` whose end a comment can follow (1-based): not a
    line that ends inside a multi-line string or bracket continuation of a string. A file the
    tokenizer cannot read gets the first line."""
    try:
        ends = {
            tok.start[0]
            for tok in tokenize.generate_tokens(io.StringIO(text).readline)
            if tok.type in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT)
        }
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return first
    return next((line for line in range(first, last + 1) if line in ends), None)


def hover_text(findings: Sequence[Finding]) -> str:
    """Markdown for the findings under the cursor: each one's message and fix, then its rule's
    documentation (``resume-audit explain``)."""
    rules = descriptors()
    parts: list[str] = []
    for finding in findings:
        parts.append(f"**{finding.rule_id}** {finding.message}")
        if finding.fix:
            parts.append(f"**Fix:** {finding.fix}")
        rule = rules.get(finding.rule_id)
        if rule is not None:
            parts.append("---\n\n" + render_rule(rule))
    return "\n\n".join(parts)
