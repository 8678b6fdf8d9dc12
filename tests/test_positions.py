"""Finding positions computed per module-level statement match LibCST's whole-module positions.

The analysis places a node by generating only its module-level statement (see
``resume_audit.facts.positions.statement_positions``); any disagreement with LibCST's own
``PositionProvider`` over the module would put a finding on the wrong line.
"""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from resume_audit.facts.collect import build_module_facts
from resume_audit.facts.libcst_internals import statement_code_positions
from resume_audit.facts.positions import statement_positions as _statement_positions

REPO = Path(__file__).resolve().parents[1]

EDGE_CASES = {
    "crlf": "import os\r\n\r\n# comment\r\ndef f(x):\r\n    return os.path.join(x,\r\n        'a')\r\n",
    "old-mac newlines": "x = 1\r\rdef g():\r    return 2\r",
    "decorators and comments": "@a\n# between\n@b(1,\n   2)\nasync def h():\n    await z()\n\n\nclass C:  # trailing\n    pass\n",
    "form feed and semicolons": "a = 1; b = 2\n\x0c\ndef k():\n    pass\n",
    "duplicate statements": "pass\nimport os\npass\nimport os\ndef only_once():\n    return 1\n",
    "header comment and no final newline": "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n'''doc'''\nx = [\n    1,\n]",
    "unicode": "s = 'héllo wörld'  # ünïcode\ndef π():\n    return 'ß'\n",
    # nested lines: placed by their own code, generated with the indentation of their blocks
    "nested blocks and continuations": (
        "class A:\n    def m(self, x):\n        # a comment\n        if x:\n            y = f(x,\n                  2)\n"
        "        else:\n            y = 3  # three\n        for i in x:\n            while i:\n                i -= 1; g(i)\n"
        "        return y\n\ndef t():\n\tif 1:\n\t\tz = call(1,\n\t\t\t2)\n\treturn z\n"
    ),
    "match cases": (
        "def h(cmd):\n    match cmd:\n        case [a, b]:\n            run(a)\n            run(b)\n"
        "        case _:\n            pass\n    return None\n"
    ),
    "repeated nested lines": "def a():\n    return x\n\ndef b():\n    return x\n\ndef c():\n    return charge(1)\n",
    "crlf nested": "def f(x):\r\n    try:\r\n        pay(x,\r\n            1)\r\n    except E:\r\n        raise\r\n",
    # the last line has no newline, and its text is an earlier line's: never placed on that one
    "same last line, no final newline": "x = 1\ny = 2\nx = 1",
    "same last nested line, no final newline": "def f():\n    return x\ndef g():\n    pass\n    return x",
    "odd indents": "def f():\n  if 1:\n     a = 1\n     if 2:\n      b = [\n  1]\n",
}


def _check(source: str) -> int:
    wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
    full = wrapper.resolve(PositionProvider)
    placed = 0
    for stmt in wrapper.module.body:
        placed += _placed_right(
            source,
            full,
            _statement_positions(wrapper.module, source, stmt),
            wrapper.module.code_for_node(stmt),
            wrapper.module,
        )
    return placed


def _placed_right(source: str, full, got, code: str, module: cst.Module) -> int:
    """1 when a statement was placed by its own code and every node of it sits where LibCST's
    whole-module positions (``full``) put it; 0 when it fell back, which only a statement whose
    code (``code``, as generated) is not found once at a line start may do."""
    if not got:
        assert not _found_once_at_a_line_start(source, _as_searched(module, code)), source
        return 0
    computed, offset = got
    for node, rng in computed.items():
        want = full[node]
        assert (rng.start.line + offset, rng.start.column, rng.end.line + offset, rng.end.column) == (
            want.start.line,
            want.start.column,
            want.end.line,
            want.end.column,
        ), (type(node).__name__, source)
    return 1


def _check_nested(source: str) -> int:
    """Every simple statement line inside a block, placed by its own code, lands where LibCST's
    whole-module positions put it; and every node a module's facts place (by whichever path)
    does too."""
    wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
    full = wrapper.resolve(PositionProvider)
    facts = build_module_facts(Path("m.py"), "m.py", "m", False, source, wrapper.module)
    lines = [n for n in full if isinstance(n, cst.SimpleStatementLine) and n not in wrapper.module.body]
    placed = 0
    for line in lines:
        indents = facts.indents_of(line)
        placed += _placed_right(
            source,
            full,
            _statement_positions(wrapper.module, source, line, indents),
            _indented_code(wrapper.module, line, indents),
            wrapper.module,
        )
    for node, want in full.items():
        if node is not wrapper.module:
            assert facts.position(node) == ((want.start.line, want.start.column), (want.end.line, want.end.column))
    return placed


def _found_once_at_a_line_start(source: str, code: str) -> bool:
    """Would this code have placed its statement (a byte-order mark before the first line, for
    one, makes it fall back)."""
    at = source.find(code)
    return source.count(code) == 1 and (at == 0 or source[at - 1] in "\r\n")


def _as_searched(module: cst.Module, code: str) -> str:
    """A statement's code as the source is searched for it: without its final newline when the
    file's last line has none (the last statement then counts as an occurrence too)."""
    return code if module.has_trailing_newline else code.rstrip("\r\n")


def _indented_code(module: cst.Module, line: cst.CSTNode, indents: list[str]) -> str:
    """The line's code as generated inside its blocks (what must occur once in the source)."""
    generated = statement_code_positions(module, line, indents)
    assert generated is not None, "the installed LibCST cannot generate one statement: see test_libcst_internals.py"
    return generated[0]


@pytest.mark.parametrize("name", sorted(EDGE_CASES))
def test_edge_cases(name):
    assert _check(EDGE_CASES[name]) > 0
    _check_nested(EDGE_CASES[name])


def test_nested_lines_are_placed_on_their_own():
    for name in ("nested blocks and continuations", "match cases", "crlf nested", "odd indents"):
        assert _check_nested(EDGE_CASES[name]) > 0, name
    # `return x` twice: those two fall back, `return charge(1)` is placed
    assert _check_nested(EDGE_CASES["repeated nested lines"]) == 1


def test_every_fixture_program():
    files = sorted((REPO / "fixtures").rglob("*.py"))
    assert len(files) > 100
    placed = sum(_check(f.read_text(encoding="utf-8")) for f in files)
    assert placed > 500
    nested = sum(_check_nested(f.read_text(encoding="utf-8")) for f in files)
    assert nested > 1000
