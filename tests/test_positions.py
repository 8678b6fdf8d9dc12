"""Finding positions computed per module-level statement match LibCST's whole-module positions.

The analysis places a node by generating only its module-level statement (see
``resume_audit.analysis.facts._statement_positions``); any disagreement with LibCST's own
``PositionProvider`` over the module would put a finding on the wrong line.
"""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from resume_audit.analysis.facts import _statement_positions

REPO = Path(__file__).resolve().parents[1]

EDGE_CASES = {
    "crlf": "import os\r\n\r\n# comment\r\ndef f(x):\r\n    return os.path.join(x,\r\n        'a')\r\n",
    "old-mac newlines": "x = 1\r\rdef g():\r    return 2\r",
    "decorators and comments": "@a\n# between\n@b(1,\n   2)\nasync def h():\n    await z()\n\n\nclass C:  # trailing\n    pass\n",
    "form feed and semicolons": "a = 1; b = 2\n\x0c\ndef k():\n    pass\n",
    "duplicate statements": "pass\nimport os\npass\nimport os\ndef only_once():\n    return 1\n",
    "header comment and no final newline": "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n'''doc'''\nx = [\n    1,\n]",
    "unicode": "s = 'héllo wörld'  # ünïcode\ndef π():\n    return 'ß'\n",
}


def _check(source: str) -> int:
    wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
    full = wrapper.resolve(PositionProvider)
    placed = 0
    for stmt in wrapper.module.body:
        got = _statement_positions(wrapper.module, source, stmt)
        if not got:
            # only a statement whose code occurs more than once may fall back
            assert source.count(wrapper.module.code_for_node(stmt)) != 1
            continue
        computed, offset = got
        for node, rng in computed.items():
            want = full[node]
            assert (rng.start.line + offset, rng.start.column, rng.end.line + offset, rng.end.column) == (
                want.start.line, want.start.column, want.end.line, want.end.column), (type(node).__name__, source)
        placed += 1
    return placed


@pytest.mark.parametrize("name", sorted(EDGE_CASES))
def test_edge_cases(name):
    assert _check(EDGE_CASES[name]) > 0


def test_every_fixture_program():
    files = sorted((REPO / "fixtures").rglob("*.py"))
    assert len(files) > 100
    placed = sum(_check(f.read_text(encoding="utf-8")) for f in files)
    assert placed > 500
