"""LibCST's private API, in one place: everything the scan uses beyond the public interface.

Three things the public API cannot do at the speed a scan needs (benchmarks/README.md):

* **one statement's positions** -- a finding's line and columns come from generating only the
  statement that holds it (``CSTNode._codegen`` with a ``PositionProvidingCodegenState``,
  read back from the provider's ``_computed``), not the whole module;
* **a whole module's positions** without the batched visit ``MetadataWrapper.resolve`` adds
  (``PositionProvider._gen_impl``);
* **a parse without per-node validation** of source CPython's parser already accepted:
  ``CSTNode.__post_init__`` only calls ``_validate``, and the parser swaps it out.

No other module of the package touches a LibCST name starting with an underscore. Each use
has a fallback (the public API, slower) when the installed LibCST changed; :func:`missing`
says what changed, and ``tests/test_libcst_internals.py`` fails with that text on an upgrade.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Iterator, Mapping

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

try:
    from libcst.metadata.position_provider import PositionProvidingCodegenState
except ImportError:  # pragma: no cover - a LibCST that moved its codegen state
    PositionProvidingCodegenState = None  # type: ignore[assignment, misc]

#: node -> its line/column range (lines counted from the generated code's first line)
Positions = Mapping[cst.CSTNode, CodeRange]


def statement_code_positions(tree: cst.Module, stmt: cst.CSTNode, indents: list[str]) -> tuple[str, Positions] | None:
    """The code LibCST generates for ``stmt`` alone -- inside blocks that push ``indents``,
    outermost first -- and the positions of its nodes in that code. None when the installed
    LibCST cannot do it (the caller falls back to the whole module's positions)."""
    try:
        provider = PositionProvider()
        state = PositionProvidingCodegenState(
            default_indent=tree.default_indent, default_newline=tree.default_newline, provider=provider
        )
        for indent in indents:
            state.increase_indent(indent)
        stmt._codegen(state)
        computed: Positions = provider._computed  # type: ignore[assignment]
        return "".join(state.tokens), computed
    except Exception:  # pragma: no cover - a LibCST that reorganised its codegen
        return None


def module_positions(tree: cst.Module, wrapper: MetadataWrapper) -> Positions:
    """Line/column ranges of every node of ``tree`` (the module ``wrapper`` wraps). The position
    provider's own code generation, run directly: going through ``MetadataWrapper.resolve`` adds
    a full (and here useless) batched visit of the tree, which costs as much again."""
    provider = PositionProvider()
    try:
        provider._gen_impl(tree)
        computed: Positions = provider._computed  # type: ignore[assignment]
        return computed
    except AttributeError:  # pragma: no cover - a LibCST that reorganised its providers
        return wrapper.resolve(PositionProvider)


def _validates_only(hook: object) -> bool:
    """Whether LibCST's node construction hook does nothing but validate the node (checked on
    the installed release: if a later one makes it do more, parsing keeps it)."""
    code = getattr(hook, "__code__", None)
    return code is not None and code.co_names == ("_validate",)


#: the hook every node runs when built: LibCST's validation
VALIDATING_HOOK = cst.CSTNode.__post_init__
#: LibCST validates every node it builds (a fifth of its parse time); a tree its own parser
#: builds from source CPython accepted needs none of it. False: the installed LibCST's hook does
#: more than validate, and every parse keeps it.
CAN_SKIP_VALIDATION = _validates_only(VALIDATING_HOOK)
_HOOK_LOCK = threading.Lock()


def skip_validation(self: cst.CSTNode) -> None:
    """The hook while :func:`unvalidated` is in effect: builds nodes without checking them."""
    return None


@contextlib.contextmanager
def unvalidated() -> Iterator[None]:
    """Nodes built meanwhile (by LibCST's parser) skip validation. The hook is swapped under a
    lock and always put back, so only trees built inside the block skip it."""
    with _HOOK_LOCK:
        cst.CSTNode.__post_init__ = skip_validation  # type: ignore[method-assign]
        try:
            yield
        finally:
            cst.CSTNode.__post_init__ = VALIDATING_HOOK  # type: ignore[method-assign]


def missing() -> list[str]:
    """What the installed LibCST no longer provides of the private API above, one sentence each
    (empty: all of it works). Each use falls back to something slower, never to a wrong answer."""
    out: list[str] = []
    if PositionProvidingCodegenState is None:
        out.append(
            "libcst.metadata.position_provider.PositionProvidingCodegenState is gone: "
            "finding positions now generate the whole module (slower)"
        )
    if not callable(getattr(cst.CSTNode, "_codegen", None)):
        out.append("CSTNode._codegen is gone: finding positions now generate the whole module (slower)")
    if not callable(getattr(PositionProvider, "_gen_impl", None)):
        out.append(
            "PositionProvider._gen_impl is gone: module positions now go through MetadataWrapper.resolve (slower)"
        )
    probe = cst.parse_module("x = 1\n")
    placed = statement_code_positions(probe, probe.body[0], [])
    if placed is None or placed[0] != "x = 1\n" or probe.body[0] not in placed[1]:
        out.append(
            "a statement's code and positions cannot be generated alone (CSTNode._codegen with "
            "PositionProvidingCodegenState, PositionProvider._computed): finding positions fall back"
        )
    if not CAN_SKIP_VALIDATION:
        out.append("CSTNode.__post_init__ does more than call _validate: every parse keeps validation (slower)")
    return out
