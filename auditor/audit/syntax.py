"""The few questions ``audit`` asks of a module's syntax, answered on the scan's LibCST tree.

Entry-point discovery and the effect plan read modules as the scan parsed them
(:class:`~resume_audit.facts.collect.ModuleFacts`); these helpers answer what they need in the terms
the audit has always used, so its choices do not depend on which tree holds the code:

- *statement order* is the order of Python's own grammar: a module's statements are its top-level
  simple statements (each of ``a = 1; b = 2``) and compound statements;
- where two nodes are *first*, breadth-first order counts only the nodes Python's grammar has (the
  ``ast`` module's): LibCST's wrappers -- a statement line, an indented block, an argument, a list
  element -- add no level (:func:`breadth_first_key`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Collection, Iterator

import libcst as cst

if TYPE_CHECKING:
    from resume_audit.facts.collect import ModuleFacts

#: LibCST nodes that stand for no node of Python's grammar: they never add a level
_WRAPPERS: tuple[type[cst.CSTNode], ...] = (
    cst.SimpleStatementLine,
    cst.SimpleStatementSuite,
    cst.IndentedBlock,
    cst.Else,
    cst.Finally,
    cst.Element,
    cst.DictElement,
    cst.StarredDictElement,
    cst.AssignTarget,
    cst.Annotation,
    cst.Decorator,
    cst.Index,
    cst.ComparisonTarget,
    cst.CompIf,
    cst.AsName,
    cst.From,
)


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """``node`` and everything below it, in source order (nested defs and lambdas included)."""
    stack = [node]
    while stack:
        cur = stack.pop()
        yield cur
        stack.extend(reversed(cur.children))


def top_level_statements(facts: ModuleFacts) -> Iterator[cst.CSTNode]:
    """The module's statements in order: each small statement of a line, and each compound statement."""
    for statement in facts.tree.body:
        if isinstance(statement, cst.SimpleStatementLine):
            yield from statement.body
        else:
            yield statement


def _adds_level(node: cst.CSTNode, parent: cst.CSTNode | None, child: cst.CSTNode | None) -> bool:
    """Does ``node`` (the parent of ``child``) stand for a node of Python's grammar on the way down to it?"""
    if isinstance(node, _WRAPPERS):
        return False
    if isinstance(node, cst.Arg):  # a plain positional argument is the expression itself; *a, **k, k=v are not
        return bool(node.star) or node.keyword is not None
    if isinstance(node, cst.Param) and child is not None and child is node.default:
        return False  # a default value hangs off the parameter list, not the parameter
    if isinstance(node, cst.BooleanOperation) and isinstance(parent, cst.BooleanOperation):
        # ``a or b or c`` is one operation of three values, not two nested ones
        return not (parent.left is node and type(parent.operator) is type(node.operator) and not node.lpar)
    if isinstance(node, (cst.ConcatenatedString, cst.FormattedString)) and isinstance(parent, cst.ConcatenatedString):
        return False  # implicit concatenation is one string
    if isinstance(node, cst.CompFor) and isinstance(parent, cst.CompFor):
        return False  # ``for a in x for b in y``: both generators are the comprehension's own
    if isinstance(node, cst.SubscriptElement):
        return isinstance(parent, cst.Subscript) and len(parent.slice) > 1  # ``x[a, b]`` holds a tuple
    return True


def _field_rank(node: cst.CSTNode, chain: list[cst.CSTNode], i: int) -> int:
    """Where, among the grammar's fields of ``node`` (``chain[i]``), the path down to ``chain[0]`` goes,
    where that order is not the source's: a conditional's test comes first, a dict's keys before its
    values, a call's keyword arguments after its positional ones."""
    child = chain[i - 1]
    if isinstance(node, cst.IfExp):
        return 0 if child is node.test else 1 if child is node.body else 2
    if isinstance(node, cst.Dict) and isinstance(child, cst.DictElement) and i >= 2:
        return 0 if chain[i - 2] is child.key else 1
    if isinstance(node, cst.Dict):
        return 1  # ``**other``: a value without a key
    if isinstance(node, cst.Call) and isinstance(child, cst.Arg):
        return 2 if child.keyword is not None or child.star == "**" else 1
    return 0


def _start(facts: ModuleFacts, node: cst.CSTNode) -> tuple[int, int]:
    try:
        return facts.position(node)[0]
    except KeyError:  # a node LibCST gives no position of its own: ordered by the field rank alone
        return 0, 0


def breadth_first_key(facts: ModuleFacts, node: cst.CSTNode) -> tuple[int, tuple[tuple[int, int, int], ...]]:
    """Sorts nodes as a breadth-first walk of Python's own syntax tree (the ``ast`` module's) meets them:
    shallower first, then along the grammar's field order (mostly the source's)."""
    chain = [node, *facts.ancestors(node)]
    path: list[tuple[int, int, int]] = []
    below = node  # the nearest node of the grammar below chain[i]
    for i in range(1, len(chain)):
        parent = chain[i + 1] if i + 1 < len(chain) else None
        if _adds_level(chain[i], parent, chain[i - 1]):
            line, column = _start(facts, below)
            path.append((_field_rank(chain[i], chain, i), line, column))
            below = chain[i]
    return len(path), tuple(reversed(path))


def _import_statements(facts: ModuleFacts) -> list[cst.Import | cst.ImportFrom]:
    return [n for n in walk(facts.tree) if isinstance(n, (cst.Import, cst.ImportFrom))]


def absolute_import_tops(facts: ModuleFacts, interesting: Collection[str] | None = None) -> list[str]:
    """The top-level package of every absolute import, first-imported first (breadth first: a module-level
    import before one in a function). With ``interesting``: [] at once when the module imports none of those
    packages (the common case, decided from the facts' import set without a walk)."""
    if interesting is not None and not any(m.split(".")[0] in interesting for m in facts.imported_modules):
        return []
    ordered = sorted(_import_statements(facts), key=lambda n: breadth_first_key(facts, n))
    out: dict[str, None] = {}
    for node in ordered:
        if isinstance(node, cst.Import):
            out.update((dotted(a.name).split(".")[0], None) for a in node.names)
        elif node.module is not None and not node.relative:
            out[dotted(node.module).split(".")[0]] = None
    return list(out)


def dotted(expr: cst.BaseExpression) -> str:
    """``a.b.c`` for a name or attribute chain (empty for anything else)."""
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        head = dotted(expr.value)
        return f"{head}.{expr.attr.value}" if head else ""
    return ""


def callee(expr: cst.CSTNode) -> str:
    """The last name of what is called (or named): ``StateGraph`` for ``graph.StateGraph(...)``."""
    if isinstance(expr, cst.Call):
        expr = expr.func
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    if isinstance(expr, cst.Name):
        return expr.value
    return ""


def positional(call: cst.Call) -> list[cst.Arg]:
    """The positional arguments, ``*args`` included (what Python's grammar lists as a call's ``args``)."""
    return [a for a in call.args if a.keyword is None and a.star != "**"]


def is_string_literal(expr: cst.BaseExpression) -> bool:
    """A string or bytes literal (implicitly concatenated too), not an f-string."""
    if isinstance(expr, cst.SimpleString):
        return True
    if isinstance(expr, cst.ConcatenatedString):
        return is_string_literal(expr.left) and is_string_literal(expr.right)
    return False


def base_names(cls: cst.ClassDef) -> list[str]:
    """The last name of each base class (``Flow`` for ``Flow[State]`` and ``crewai.Flow``)."""
    out = []
    for base in cls.bases:
        value = base.value
        if base.star:
            out.append("")
            continue
        if isinstance(value, cst.Subscript):
            value = value.value
        out.append(callee(value))
    return out


def required_params(fn: cst.FunctionDef) -> list[str]:
    """The parameters a call must pass: positional ones without a default, then keyword-only ones."""
    p = fn.params
    return [x.name.value for x in (*p.posonly_params, *p.params, *p.kwonly_params) if x.default is None]


def assigned(statement: cst.CSTNode) -> tuple[list[str], cst.BaseExpression | None]:
    """(the plain names an assignment or annotated assignment binds, the value), or ([], None)."""
    if isinstance(statement, cst.Assign):
        return [t.target.value for t in statement.targets if isinstance(t.target, cst.Name)], statement.value
    if isinstance(statement, cst.AnnAssign):
        return ([statement.target.value] if isinstance(statement.target, cst.Name) else []), statement.value
    return [], None
