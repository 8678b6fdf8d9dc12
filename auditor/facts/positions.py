"""A node's line and columns from generating only the statement that holds it.

LibCST computes positions by generating the code of the whole module, about 1.5x the parse;
a scan needs them only for the nodes findings point at. So the statement holding a node is
generated alone (:func:`~resume_audit.facts.libcst_internals.statement_code_positions`) and
found in the source; its positions are shifted by the lines before it. ``tests/test_positions.py``
checks the result equals LibCST's own positions on every fixture program.
"""

from __future__ import annotations

import re

import libcst as cst

from resume_audit.facts.libcst_internals import Positions, statement_code_positions

#: a statement's nodes' positions counted from its own first line, and the lines before it
Placed = tuple[Positions, int]

_NEWLINE = re.compile(r"\r\n|\r|\n")
_FINAL_NEWLINE = re.compile(r"(?:\r\n|\r|\n)\Z")


def statement_positions(
    tree: cst.Module, source: str, stmt: cst.CSTNode, indents: list[str] | None = None
) -> Placed | None:
    """Positions of the nodes of one statement, without generating the whole module: the
    statement's code (leading comments and blank lines included) is generated alone, found in
    the source -- it must occur exactly once, at the start of a line -- and its lines are
    shifted by the lines before it. Columns need no shift: a module-level statement starts at
    column 0, and a nested one (``indents``: the indentation its enclosing blocks push, as
    :meth:`ModuleFacts.indents_of <resume_audit.facts.model.ModuleFacts.indents_of>` gives it)
    is generated with that indentation, on its first line and on the continuation lines LibCST
    indents. None when the statement's code is not found exactly once (the caller falls back to
    a bigger statement, then the whole module), so a wrong position is never reported."""
    generated = statement_code_positions(tree, stmt, indents or [])
    if generated is None:
        return None
    code, computed = generated
    if not code:
        return None
    needle = code
    if not tree.has_trailing_newline:
        # the file's last line has no newline, so the last statement's code (which ends with
        # one) is not in the source as generated: without its final newline, that statement
        # counts as an occurrence too, or "x = 1" at the end would be placed on an earlier "x = 1"
        final = _FINAL_NEWLINE.search(code)
        needle = code[: final.start()] if final is not None else code
    at = source.find(needle)
    if at < 0 or source.find(needle, at + 1) >= 0 or (at > 0 and source[at - 1] not in "\r\n"):
        return None
    return computed, len(_NEWLINE.findall(source, 0, at))
