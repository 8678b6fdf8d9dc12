"""When is a re-run of an effect harmless? Guards the EO rules share.

:mod:`resume_audit.analysis.effects` already treats an effect *call* keyed by an
idempotency key as harmless (:mod:`resume_audit.analysis.keys`). Two more shapes keep a re-run from repeating
the effect, and the EO rules (RA103/RA104) honour both:

* **A helper that forwards a key.** ``refund(charge_id, amount, key=k)``
  where ``refund`` passes its ``key`` parameter on as
  ``idempotency_key=key`` (or in an ``Idempotency-Key`` header): the call
  is keyed even though the helper also has an unkeyed branch for callers
  that pass no key.
* **A durable "already done" check keyed by the thread.** The effect sits
  under an ``if`` (or after an ``if ...: return`` guard clause) whose
  condition calls something with the thread id -- ``if
  ledger.already_done(thread_id, "charge"): return``, ``if not
  claim(config["configurable"]["thread_id"], "charge"):``, ``if r.set(f"{thread_id}:charge",
  1, nx=True):``. The check must name the thread (a name, attribute, key
  or string containing ``thread``, directly or through a variable built
  in the same function): a check keyed by something else (an order id
  that two threads share, a per-process set) is not a guard.

What is not a guard: an in-memory set or dict (gone after the crash that
causes the re-run), ``get_state``, a check after the effect.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import libcst as cst

from resume_audit.analysis.keys import KEY_HEADER, KEY_KEYWORD
from resume_audit.facts.model import CallInfo, FunctionInfo, ModuleFacts
from resume_audit.facts.syntax import argument, dict_items, names_in, string_value

if TYPE_CHECKING:
    from resume_audit.analysis.effect_kinds import Effect

_THREAD = re.compile(r"thread", re.IGNORECASE)
_NOT_CHECKS = frozenset({"len", "isinstance", "bool", "str", "int", "getattr", "hasattr", "print", "any", "all"})


def forwards_key(call: CallInfo, callee: FunctionInfo) -> bool:
    """Does ``call`` pass a (non-None) value for a parameter that ``callee`` forwards as an
    idempotency key (``idempotency_key=p``, ``headers={"Idempotency-Key": p}``)?"""
    params = callee.param_names()
    if callee.is_method and params and params[0] in ("self", "cls"):
        params = params[1:]
    passed: set[str] = set()
    i = 0
    for arg in call.node.args:
        if arg.star:
            continue
        if isinstance(arg.value, cst.Name) and arg.value.value == "None":
            if arg.keyword is None:
                i += 1
            continue
        if arg.keyword is not None:
            passed.add(arg.keyword.value)
        else:
            if i < len(params):
                passed.add(params[i])
            i += 1
    if not passed:
        return False
    for inner in callee.calls:
        for arg in inner.node.args:
            if arg.keyword is not None and KEY_KEYWORD.search(arg.keyword.value) and names_in(arg.value) & passed:
                return True
            if (
                arg.keyword is not None
                and arg.keyword.value in ("headers", "extra_headers")
                and isinstance(arg.value, cst.Dict)
            ):
                for key, value in dict_items(arg.value):
                    if key is not None and KEY_HEADER.match(key) and names_in(value) & passed:
                        return True
    return False


def _mentions_thread(node: cst.CSTNode, fn: FunctionInfo, depth: int = 0) -> bool:
    stack = [node]
    names: set[str] = set()
    while stack:
        cur = stack.pop()
        if isinstance(cur, cst.Name):
            if _THREAD.search(cur.value):
                return True
            names.add(cur.value)
        elif isinstance(cur, (cst.SimpleString, cst.FormattedStringText)):
            text = string_value(cur) if isinstance(cur, cst.SimpleString) else cur.value
            if text and _THREAD.search(text):
                return True
        stack.extend(cur.children)
    if depth >= 2:
        return False
    for b in fn.bindings:
        if b.name in names and b.kind == "assign" and _mentions_thread(b.value, fn, depth + 1):
            return True
    return False


def _check_calls(test: cst.BaseExpression) -> list[cst.Call]:
    out: list[cst.Call] = []
    stack: list[cst.CSTNode] = [test]
    while stack:
        cur = stack.pop()
        if isinstance(cur, cst.Call):
            if not (isinstance(cur.func, cst.Name) and cur.func.value in _NOT_CHECKS):
                out.append(cur)
        stack.extend(cur.children)
    return out


def _is_done_check(test: cst.BaseExpression, fn: FunctionInfo) -> bool:
    """A call in the test that is given the thread (``already_done(thread_id, "charge")``). The
    thread must be in the call's own arguments: ``if state.get("response"): return`` is a look
    into the in-memory state, even when ``state`` was built from a dict holding a thread id."""
    return any(
        _mentions_thread(arg.value, fn)
        or (isinstance(call.func, cst.Attribute) and _mentions_thread(call.func.value, fn, 2))
        for call in _check_calls(test)
        for arg in call.args
    )


def _terminates(stmt: cst.CSTNode) -> bool:
    body = getattr(stmt, "body", None)
    stmts = list(body.body) if isinstance(body, (cst.IndentedBlock, cst.SimpleStatementSuite)) else []
    for s in stmts:
        if isinstance(s, cst.SimpleStatementLine) and any(
            isinstance(x, (cst.Return, cst.Raise, cst.Continue)) for x in s.body
        ):
            return True
        if isinstance(s, (cst.Return, cst.Raise, cst.Continue)):
            return True
    return False


def done_check_guard(call: CallInfo, fn: FunctionInfo, module: ModuleFacts) -> cst.If | None:
    """The ``if`` that keeps ``call`` from repeating on a re-run, if any (see module doc)."""
    child: cst.CSTNode = call.node
    for anc in module.ancestors(call.node):
        if anc is fn.node:
            break
        if isinstance(anc, cst.If) and child is anc.body and _is_done_check(anc.test, fn):
            return anc
        if isinstance(anc, (cst.IndentedBlock, cst.Module)):
            for stmt in anc.body:
                if stmt is child:
                    break
                if isinstance(stmt, cst.If) and _terminates(stmt) and _is_done_check(stmt.test, fn):
                    return stmt
        child = anc
    return None


_OPENERS = frozenset({"builtins.open", "io.open", "codecs.open", "aiofiles.open", "os.fdopen"})
_OVERWRITES = frozenset({"shutil.copy", "shutil.copy2", "shutil.copyfile"})


_UPSERT = re.compile(
    r"\bON\s+CONFLICT\b.*?\bDO\s+UPDATE\s+SET\b(?P<set>.*)|\bON\s+DUPLICATE\s+KEY\s+UPDATE\b(?P<set2>.*)",
    re.IGNORECASE | re.DOTALL,
)
_SET_ITEM = re.compile(r"(?P<col>\w+)\s*=\s*(?P<value>[^,]+)")
#: a value taken from the statement itself, or a write timestamp (``updated_at = CURRENT_TIMESTAMP``:
#: a repeat moves the timestamp, the row's data stays the same)
_FROM_STATEMENT = re.compile(
    r"^\s*(excluded\.\w+|values\s*\(\s*\w+\s*\)|new\.\w+|[?]|%s|\$\d+|:\w+|%\(\w+\)s"
    r"|current_timestamp|current_date|localtimestamp|now\(\s*\)|datetime\(\s*'now'\s*\)|utc_timestamp\(\s*\))\s*$",
    re.IGNORECASE,
)


def _upsert_from_own_values(sql: str) -> bool:
    """``INSERT ... ON CONFLICT (...) DO UPDATE SET c = excluded.c`` (or MySQL ``ON DUPLICATE
    KEY UPDATE c = VALUES(c)``): every assignment takes the statement's own value, so running it
    twice leaves one row with the same values. ``SET n = t.n + excluded.n`` accumulates: not harmless."""
    m = _UPSERT.search(sql)
    if m is None:
        return False
    clause = (m.group("set") or m.group("set2") or "").split(" WHERE ")[0].split(" where ")[0]
    items = list(_SET_ITEM.finditer(clause))
    return bool(items) and all(_FROM_STATEMENT.match(i.group("value")) for i in items)


def replays_harmlessly(call: cst.Call, effect: Effect) -> bool:
    """An effect whose repetition leaves the same result, so a crash-replay duplicates nothing:

    * a file overwrite (``open(p, "w")``, ``Path.write_text``/``write_bytes``, ``shutil.copy*``) --
      appends (``"a"``), exclusive creates (``"x"``, which fail on the re-run), deletes, moves and
      renames are not harmless;
    * an SQL upsert whose every assignment takes the statement's own value
      (``ON CONFLICT (...) DO UPDATE SET c = excluded.c``, ``ON DUPLICATE KEY UPDATE c = VALUES(c)``).
      Plain ``UPDATE``s are not: a node that reads a balance and writes ``balance = ?`` re-reads the
      updated value on the re-run and applies the change twice."""
    kind = effect.kind
    if kind == "sql":
        sql = string_value(argument(call, 0, "query") or argument(call, 0, "sql") or argument(call, 0, "statement"))
        return sql is not None and _upsert_from_own_values(sql)
    if kind != "file":
        return False
    label: str = effect.label
    if label.endswith(("write_text", "write_bytes", "write_text()", "write_bytes()")) or label in _OVERWRITES:
        return True
    if label in _OPENERS:
        mode = string_value(argument(call, 1, "mode"))
        return mode is not None and "w" in mode and "a" not in mode and "x" not in mode
    return False


_WRITTEN_TABLE = re.compile(
    r"\b(?:INSERT\s+(?:OR\s+\w+\s+)?INTO|UPDATE|REPLACE\s+INTO)\s+[`\"\[]?(?P<table>[\w.]+)", re.IGNORECASE
)


def write_target(call: cst.Call, effect: Effect, module: ModuleFacts) -> str:
    """Where a write lands, as far as the source says: the table of an SQL statement, the path
    expression of a file write, else the sink's name. Two writes with one target overwrite each
    other."""
    kind = effect.kind
    first = (
        argument(call, 0, "query")
        or argument(call, 0, "sql")
        or argument(call, 0, "statement")
        or argument(call, 0, "file")
    )
    if kind == "sql":
        sql = string_value(first)
        m = _WRITTEN_TABLE.search(sql or "")
        if m is not None:
            return f"table {m.group('table').lower()}"
    if kind == "file" and first is not None:
        return f"file {module.code(first)}"
    return effect.label
