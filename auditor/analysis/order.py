"""Can this call complete before that one, within one execution of a function?

RA101/RA102 need "the effect runs before the interrupt, so a resume re-runs
it". Source order is the first approximation (a call completes when its
closing parenthesis is evaluated, so ``charge(interrupt(...))`` charges
*after* the interrupt and ``interrupt(charge())`` charges before it). Two
refinements keep the rule honest:

* branches that exclude each other (``if``/``else``, ``match`` cases,
  different ``except`` handlers) cannot both run in one pass, and a block
  that always ends in ``return``/``raise`` never falls through to later code;
* a loop turns "after" into "before the next iteration": ``for item in
  items: ok = interrupt(item); charge(item)`` charges item 1 before item 2's
  interrupt, so resuming item 2 re-charges item 1.
"""

from __future__ import annotations

from typing import Callable

import libcst as cst

from resume_audit.facts.model import CallInfo, ModuleFacts

Parents = Callable[[cst.CSTNode], "cst.CSTNode | None"]


def _chain(node: cst.CSTNode, module: ModuleFacts, stop: cst.CSTNode) -> list[cst.CSTNode]:
    """Ancestors of ``node`` from the node itself up to and including ``stop``."""
    out = [node]
    cur = node
    while cur is not stop:
        parent = module.parent(cur)
        if parent is None:
            break
        cur = parent
        out.append(cur)
    return out


def _block_statements(block: cst.CSTNode) -> list[cst.CSTNode] | None:
    if isinstance(block, cst.IndentedBlock):
        return list(block.body)
    if isinstance(block, cst.SimpleStatementSuite):
        return list(block.body)
    if isinstance(block, cst.Module):
        return list(block.body)
    return None


def _terminates(stmt: cst.CSTNode, kinds: tuple[type, ...]) -> bool:
    """Does this statement always leave the current block by one of ``kinds``?"""
    if isinstance(stmt, cst.SimpleStatementLine):
        return any(isinstance(s, kinds) for s in stmt.body)
    if isinstance(stmt, kinds):
        return True
    if isinstance(stmt, cst.If) and stmt.orelse is not None:
        return _block_terminates(stmt.body, kinds) and (
            _terminates(stmt.orelse, kinds)
            if isinstance(stmt.orelse, cst.If)
            else _block_terminates(stmt.orelse.body, kinds)
        )
    return False


def _block_terminates(block: cst.CSTNode, kinds: tuple[type, ...]) -> bool:
    stmts = _block_statements(block) or []
    return any(_terminates(s, kinds) for s in stmts)


def _leaves_before(chain: list[cst.CSTNode], upto_index: int, kinds: tuple[type, ...]) -> bool:
    """Walking up ``chain`` (below index ``upto_index``), is there a terminating
    statement after the path in any enclosing block?"""
    for i in range(1, min(upto_index, len(chain))):
        block = chain[i]
        stmts = _block_statements(block)
        if stmts is None:
            continue
        child = chain[i - 1]
        try:
            idx = next(k for k, s in enumerate(stmts) if s is child)
        except StopIteration:
            continue
        for later in stmts[idx:]:
            if later is not child and _terminates(later, kinds):
                return True
            if later is child and isinstance(child, cst.SimpleStatementLine):
                # `charge(); return` on one line: statements after the call in the same line
                continue
    return False


def _exclusive(a_chain: list[cst.CSTNode], b_chain: list[cst.CSTNode], common: cst.CSTNode) -> bool:
    """Are the two paths in mutually exclusive arms of ``common``?"""
    a_child = a_chain[a_chain.index(common) - 1] if common in a_chain else None
    b_child = b_chain[b_chain.index(common) - 1] if common in b_chain else None
    if a_child is None or b_child is None or a_child is b_child:
        return False
    if isinstance(common, cst.If):
        arms = {id(common.body), id(common.orelse)}
        return common.orelse is not None and {id(a_child), id(b_child)} == arms
    if isinstance(common, (cst.Match,)):
        return isinstance(a_child, cst.MatchCase) and isinstance(b_child, cst.MatchCase)
    if isinstance(common, (cst.Try, cst.TryStar)):
        handler_types = (cst.ExceptHandler, cst.ExceptStarHandler)
        return isinstance(a_child, handler_types) and isinstance(b_child, handler_types)
    if isinstance(common, cst.IfExp):
        return {id(a_child), id(b_child)} == {id(common.body), id(common.orelse)}
    return False


def _common_ancestor(a_chain: list[cst.CSTNode], b_chain: list[cst.CSTNode]) -> cst.CSTNode | None:
    b_ids = {id(n) for n in b_chain}
    for n in a_chain:
        if id(n) in b_ids:
            return n
    return None


_LOOPS = (cst.For, cst.While)


def completes_before(first: CallInfo, second: CallInfo, module: ModuleFacts, function_node: cst.CSTNode) -> bool:
    """Can ``first`` complete before ``second`` is evaluated in one run of the function
    (counting later iterations of a loop that contains both)?"""
    a_chain = _chain(first.node, module, function_node)
    b_chain = _chain(second.node, module, function_node)
    common = _common_ancestor(a_chain, b_chain)
    if common is None:
        return False
    a_idx = next(i for i, n in enumerate(a_chain) if n is common)
    exits = (cst.Return, cst.Raise)
    if first.done <= second.done and not _contains(first, second, module):
        if not _exclusive(a_chain, b_chain, common) and not _leaves_before(a_chain, a_idx, exits):
            return True
    # a loop around both: the next iteration evaluates `second` after `first`
    for i, n in enumerate(a_chain):
        if i > a_idx and not isinstance(n, _LOOPS):
            continue
        if (
            isinstance(n, _LOOPS)
            and i >= a_idx
            and any(x is n for x in b_chain)
            and _in_loop_body(a_chain, n, i)
            and _in_loop_body(b_chain, n, next(k for k, x in enumerate(b_chain) if x is n))
        ):
            if not _leaves_before(a_chain, i, (*exits, cst.Break)):
                return True
    return False


def _in_loop_body(chain: list[cst.CSTNode], loop: cst.CSTNode, idx: int) -> bool:
    child = chain[idx - 1] if idx > 0 else None
    return child is getattr(loop, "body", None)


def _contains(outer: CallInfo, inner: CallInfo, module: ModuleFacts) -> bool:
    return any(a is outer.node for a in module.ancestors(inner.node))
