"""Reading and parsing one file, turning every way it can fail into a notification.

The scan must never stop because one file is bad: a file that cannot be read,
is not valid text in its declared encoding, or does not parse is reported and
skipped, and the rest of the tree is scanned.
"""

from __future__ import annotations

import ast
import contextlib
import signal
import threading
from typing import Iterator

import libcst as cst

from resume_audit.facts.libcst_internals import CAN_SKIP_VALIDATION, unvalidated
from resume_audit.findings import Notification, NotificationKind

# decoding is needed by every scan that reads a file, parsing only by one that analyses it: the
# decoder lives apart, so reading a file does not import LibCST
from resume_audit.reading.decoding import SourceText

#: Deeper expression nesting than this is not handed to LibCST: its native parser slows
#: down super-linearly on long operator chains (5,000 ``+`` terms take ~30 s) and
#: overflows its stack on deep bracket nesting or long ``and``/``or`` chains, which would
#: kill the whole scan. A boolean chain counts one level per operand.
MAX_NESTING = 1000


#: equal-span steps an expression subtree may take on top of its span (an f-string's parts can
#: carry the whole string's position); generous: it only makes the walk look further
_SPAN_SLACK = 50


def _max_depth(tree: ast.AST) -> int:
    """The deepest nesting in ``tree``, or any depth over :data:`MAX_NESTING` once one is seen.

    An expression on one line cannot nest deeper than it is long: every step down to a child is
    a shorter stretch of the line (a boolean chain's operands included, each a few bytes), so a
    subtree whose depth plus length stays under the limit is not walked -- nearly every
    expression of ordinary code. Only long or multi-line expressions are walked into, so any
    path deeper than the limit is still found."""
    deepest = 0
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > deepest:
            deepest = depth
            if deepest > MAX_NESTING:
                return deepest
        if isinstance(node, ast.expr) and not isinstance(node, ast.JoinedStr) and node.lineno == node.end_lineno:
            end = node.end_col_offset
            if end is not None and depth + (end - node.col_offset) + _SPAN_SLACK <= MAX_NESTING:
                continue
        # ``a and b and c`` is one flat node to the compiler but a left-nested chain to LibCST,
        # whose native parser overflows its stack (a segfault, no report at all) near 8,000 terms
        step = len(node.values) if isinstance(node, ast.BoolOp) else 1
        stack.extend((child, depth + step) for child in ast.iter_child_nodes(node))
    return deepest


@contextlib.contextmanager
def _alarm_deferred() -> Iterator[None]:
    """Hold back SIGALRM (the per-file time limit) while a parser runs, delivering it right after.

    A time-limit exception raised from inside ``ast.parse`` leaves CPython's AST recursion counter
    off ("SystemError: AST constructor recursion depth mismatch" on a *later* file's parse), and
    LibCST's native parser must not be unwound half-way either; the limit still holds, one parse late.
    """
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    # ``pthread_sigmask`` runs pending signal handlers when it returns, so the alarm can fire (and
    # raise) inside the blocking call itself, after the mask changed: the unblock must not depend on
    # that call having returned, or SIGALRM stays blocked and no later file ever times out
    was_blocked = signal.SIGALRM in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    try:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        yield
    finally:
        if not was_blocked:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM})


def _pre_check(source: SourceText) -> Notification | tuple[int, int, str] | None:
    """Screen a file with the compiler's own parser (``ast.parse`` only parses; it never runs
    anything) before LibCST sees it. Returns a notification for files LibCST must not
    parse, CPython's syntax error (line, column, message) to report if LibCST also fails,
    or None."""
    try:
        with _alarm_deferred():
            tree = ast.parse(source.text)
    except SyntaxError as exc:
        if "too many nested" in (exc.msg or ""):
            return Notification(
                NotificationKind.PARSE_ERROR,
                f"nesting too deep to parse ({exc.msg}), file skipped",
                source.display_path,
                line=exc.lineno,
                column=exc.offset,
            )
        # maybe newer syntax than this interpreter knows: let LibCST try
        return (exc.lineno or 1, exc.offset or 1, exc.msg)
    except (RecursionError, MemoryError, ValueError) as exc:
        return Notification(
            NotificationKind.PARSE_ERROR,
            f"nesting too deep to parse ({exc.__class__.__name__}), file skipped",
            source.display_path,
        )
    depth = _max_depth(tree)
    if depth > MAX_NESTING:
        return Notification(
            NotificationKind.PARSE_ERROR,
            f"expressions nested more than {MAX_NESTING} levels deep (generated code?), file skipped",
            source.display_path,
        )
    return None


def _parse_module(text: str, trusted: bool) -> cst.Module:
    """``cst.parse_module``; for ``trusted`` text (CPython's parser accepted it) without the
    per-node validation, which only re-checks what the parser already guarantees
    (:func:`~resume_audit.facts.libcst_internals.unvalidated`)."""
    if not (trusted and CAN_SKIP_VALIDATION):
        return cst.parse_module(text)
    with unvalidated():
        return cst.parse_module(text)


def parse_source(source: SourceText) -> cst.Module | Notification:
    """Parse with LibCST; a syntax error becomes a parse-error notification with its position.

    The compiler's parser screens the file first (see :func:`_pre_check`); its error
    positions and wording are also more precise than LibCST's, so they are the ones
    reported when both parsers reject a file.
    """
    screened = _pre_check(source)
    if isinstance(screened, Notification):
        return screened
    try:
        with _alarm_deferred():
            return _parse_module(source.text, trusted=screened is None)
    except cst.ParserSyntaxError as exc:
        if screened is not None:
            line, column, reason = screened
        else:
            line, column, reason = exc.raw_line, exc.raw_column + 1, f"LibCST cannot parse this file ({exc.message})"
        return Notification(
            NotificationKind.PARSE_ERROR,
            f"does not parse, file skipped: {reason} (line {line}, column {column})",
            source.display_path,
            line=line,
            column=column,
        )
    except RecursionError:
        return Notification(
            NotificationKind.PARSE_ERROR,
            "nesting too deep to parse, file skipped",
            source.display_path,
        )
