"""The LibCST private API the scan relies on is still there, and still gives LibCST's own answers.

Everything the package uses of LibCST beyond its public interface sits in
``resume_audit.facts.libcst_internals`` (one statement's positions, a module's positions without
the wrapper's extra visit, parsing without per-node validation). Each use falls back to the
public API when the private one is gone -- slower, never wrong -- so an upgrade of LibCST that
changes it breaks nothing visible but speed: these tests are where it shows, with what changed.
"""

from __future__ import annotations

import ast
from importlib.metadata import version
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from resume_audit.facts import libcst_internals as internals

SOURCE = "import os\n\n\nclass A:\n    def m(self, x):\n        if x:\n            return os.path.join(x,\n                                'a')\n"


def test_the_installed_libcst_still_has_the_private_api_the_scan_uses() -> None:
    missing = internals.missing()
    assert not missing, (
        f"LibCST {version('libcst')} changed its private API; "
        "resume_audit.facts.libcst_internals falls back to slower paths:\n- " + "\n- ".join(missing)
    )


def _whole_module(source: str) -> tuple[MetadataWrapper, dict[cst.CSTNode, tuple[int, int, int, int]]]:
    wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
    full = wrapper.resolve(PositionProvider)
    return wrapper, {n: (r.start.line, r.start.column, r.end.line, r.end.column) for n, r in full.items()}


def test_module_positions_are_libcsts_own() -> None:
    wrapper, want = _whole_module(SOURCE)
    got = internals.module_positions(wrapper.module, wrapper)
    assert {n: (r.start.line, r.start.column, r.end.line, r.end.column) for n, r in got.items()} == want


def test_one_statement_generated_alone_has_libcsts_positions_shifted_to_its_line() -> None:
    wrapper, want = _whole_module(SOURCE)
    stmt = wrapper.module.body[1]  # class A, from line 4: three lines before it in the source
    generated = internals.statement_code_positions(wrapper.module, stmt, [])
    assert generated is not None
    code, positions = generated
    assert code == wrapper.module.code_for_node(stmt)
    offset = SOURCE[: SOURCE.index(code)].count("\n")
    assert offset == 1  # the class's leading blank lines belong to its code
    assert {
        n: (r.start.line + offset, r.start.column, r.end.line + offset, r.end.column) for n, r in positions.items()
    } == {n: want[n] for n in positions}


def test_a_parse_without_validation_gives_the_validated_tree_and_puts_validation_back() -> None:
    text = Path(__file__).read_text(encoding="utf-8")
    ast.parse(text)
    assert internals.CAN_SKIP_VALIDATION
    with internals.unvalidated():
        fast = cst.parse_module(text)
        assert cst.CSTNode.__post_init__ is internals.skip_validation
    assert cst.CSTNode.__post_init__ is internals.VALIDATING_HOOK
    assert fast.deep_equals(cst.parse_module(text))


def test_no_other_module_of_the_package_touches_libcst_private_names() -> None:
    """The adapter is the only place: a private name elsewhere would break silently on an upgrade."""
    root = Path(__file__).resolve().parents[1]
    private = ("._codegen", "._computed", "._gen_impl", "__post_init__ =", "libcst._", "PositionProvidingCodegenState")
    offenders = []
    for folder in ("auditor", "rules", "dynamic"):
        for path in sorted((root / folder).rglob("*.py")):
            if path.name == "libcst_internals.py":
                continue
            text = path.read_text(encoding="utf-8")
            offenders += [f"{path.relative_to(root)}: {p}" for p in private if p in text]
    assert not offenders, offenders
