"""Parsing without LibCST's per-node validation (issue 16) gives exactly the tree it would give
with it, and never leaves validation off.

The scan parses source CPython's own parser has already accepted; LibCST re-validates every node
its parser builds, a seventh of the parse. Checked here on every bundled fixture and on the
installed frameworks' sources (the same check passed on the 1,730 Python files of the real-world
corpus, 2,378 files in all, when this was built).
"""

from __future__ import annotations

import ast
import threading
from pathlib import Path

import libcst as cst
import pytest

from resume_audit.facts import libcst_internals as internals
from resume_audit.facts import parse as source

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "fixtures").rglob("*.py")) + sorted((ROOT / "auditor").rglob("*.py"))


def _trusted(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8")
        ast.parse(text)
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return None
    return text


def test_the_installed_libcst_only_validates_in_its_construction_hook() -> None:
    """If a LibCST release makes the hook do more, the scan keeps it (and this says so)."""
    assert internals.CAN_SKIP_VALIDATION
    assert cst.CSTNode.__post_init__ is internals.VALIDATING_HOOK


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_tree_is_the_validated_parse(path: Path) -> None:
    text = _trusted(path)
    if text is None:
        pytest.skip("not accepted by CPython: parsed with validation")
    fast = source._parse_module(text, trusted=True)
    assert fast.deep_equals(cst.parse_module(text))
    assert fast.code == text
    assert cst.CSTNode.__post_init__ is internals.VALIDATING_HOOK


def test_validation_is_back_after_a_failed_parse_and_for_code_built_by_hand() -> None:
    with pytest.raises(cst.ParserSyntaxError):
        source._parse_module("def f(:\n", trusted=True)
    assert cst.CSTNode.__post_init__ is internals.VALIDATING_HOOK
    with pytest.raises(cst.CSTValidationError):
        cst.SimpleWhitespace("not whitespace")  # what validation exists for: trees built by hand


def test_untrusted_text_keeps_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    """Text CPython rejected (newer syntax, say) is parsed with every check LibCST has."""
    seen: list[object] = []
    real = cst.parse_module

    def spy(text: str) -> cst.Module:
        seen.append(cst.CSTNode.__post_init__)
        return real(text)

    monkeypatch.setattr(cst, "parse_module", spy)
    source._parse_module("x = 1\n", trusted=False)
    source._parse_module("x = 1\n", trusted=True)
    assert seen == [internals.VALIDATING_HOOK, internals.skip_validation]


def test_parses_in_threads_leave_validation_on() -> None:
    texts = [t for t in (_trusted(p) for p in SOURCES[:40]) if t]
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for text in texts:
                source._parse_module(text, trusted=True)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert cst.CSTNode.__post_init__ is internals.VALIDATING_HOOK
