"""The nesting guard in front of LibCST (``facts/parse.py``): files nested deeper than LibCST's
native parser survives are reported and skipped, never handed to it (a stack overflow there kills
the whole scan). The guard walks only expressions that are long enough to be deep; these tests
check that it still finds every way of nesting past the limit, and agrees with a full walk on
real code."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from resume_audit.facts.parse import MAX_NESTING, _max_depth, _pre_check
from resume_audit.findings import Notification
from resume_audit.reading.decoding import SourceText

REPO = Path(__file__).resolve().parents[1]
N = MAX_NESTING + 200

DEEP = {
    "plus chain": "x = " + "+".join(["1"] * N),
    "and chain": "x = " + " and ".join(["a"] * N),
    "attribute chain": "x = a" + ".b" * N,
    "call chain": "x = f" + "()" * N,
    "subscript chain": "x = a" + "[0]" * N,
    "unary chain": "x = " + "-" * N + "1",
    "not chain": "x = " + "not " * N + "a",
    "lambda chain": "x = " + "lambda: " * N + "1",
    "conditional chain": "x = " + "a if c else " * N + "b",
    "chain over lines": "x = (\n" + " +\n".join(["1"] * N) + "\n)",
    "chain in an f-string": 'x = f"{' + "+".join(["1"] * N) + '}"',
    "chain in a call argument": "f(" + "+".join(["1"] * N) + ")",
    "chain in a default": "def f(a=" + "+".join(["1"] * N) + "):\n    pass",
    "chain in a decorator": "@d(" + "+".join(["1"] * N) + ")\ndef f():\n    pass",
}

SHALLOW = {
    "long flat list": "x = [" + ", ".join(["1"] * 5000) + "]",
    "long flat call": "f(" + ", ".join(f"a{i}" for i in range(3000)) + ")",
    "long string": "x = '" + "y" * 20000 + "'",
    "long comparison": "x = " + " < ".join(["a"] * 3000),
    "moderate chain": "x = " + "+".join(["1"] * (MAX_NESTING // 2)),
}


def _full_depth(tree: ast.AST) -> int:
    """The guard's depth, every node walked: the reference the pruned walk is checked against."""
    deepest = 0
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        step = len(node.values) if isinstance(node, ast.BoolOp) else 1
        stack.extend((child, depth + step) for child in ast.iter_child_nodes(node))
    return deepest


def _parsed(source: str) -> ast.AST:
    try:
        return ast.parse(source)
    except (SyntaxError, RecursionError, MemoryError) as exc:  # the compiler's own limits: reported earlier
        pytest.skip(f"the compiler rejects it first ({exc.__class__.__name__})")


@pytest.mark.parametrize("name", sorted(DEEP))
def test_every_way_of_nesting_past_the_limit_is_caught(name: str) -> None:
    tree = _parsed(DEEP[name])
    assert _full_depth(tree) > MAX_NESTING  # the case is what it says
    assert _max_depth(tree) > MAX_NESTING
    screened = _pre_check(SourceText(Path("deep.py"), "deep.py", DEEP[name], "utf-8"))
    assert isinstance(screened, Notification) and "skipped" in screened.message


@pytest.mark.parametrize("name", sorted(SHALLOW))
def test_long_but_shallow_code_is_parsed(name: str) -> None:
    tree = _parsed(SHALLOW[name])
    assert _full_depth(tree) <= MAX_NESTING
    assert _max_depth(tree) <= MAX_NESTING
    assert _pre_check(SourceText(Path("flat.py"), "flat.py", SHALLOW[name], "utf-8")) is None


def test_the_pruned_walk_agrees_with_the_full_one_on_real_code() -> None:
    """On every fixture (and this package's own code) the pruned walk never reports a depth over
    the limit the full walk does not, and never misses one (none of them is that deep)."""
    files = sorted((REPO / "fixtures").rglob("*.py")) + sorted((REPO / "auditor").rglob("*.py"))
    assert len(files) > 100
    for f in files:
        try:
            tree = ast.parse(f.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        assert (_max_depth(tree) > MAX_NESTING) == (_full_depth(tree) > MAX_NESTING), f
