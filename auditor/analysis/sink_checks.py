"""Argument checks of the sink table: when a call of a sink writes, judged by what it is handed.

``open(path)`` reads and ``open(path, "a")`` appends; ``requests.request("GET", url)`` reads
and ``requests.request("POST", url)`` sends; ``cursor.execute("SELECT ...")`` reads and
``cursor.execute("INSERT ...")`` writes. An entry of the sink table
(:mod:`resume_audit.analysis.effect_catalog`) names one of these checks beside its pattern.
"""

from __future__ import annotations

import re
from typing import Callable

import libcst as cst

from resume_audit.facts.syntax import argument, positional, string_value

_MUTATING_HTTP = {"POST", "PUT", "PATCH", "DELETE"}


def mode_writes(call: cst.Call) -> bool:
    """``open(path, mode)`` with a mode that writes, appends or creates."""
    mode = string_value(argument(call, 1, "mode"))
    return mode is not None and any(ch in mode for ch in "wax+")


def method_is_mutating(index: int) -> Callable[[cst.Call], bool]:
    """A ``request(method, url)``-style call whose method (positional ``index``) mutates."""

    def check(call: cst.Call) -> bool:
        method = string_value(argument(call, index, "method"))
        return method is not None and method.upper() in _MUTATING_HTTP

    return check


def urlopen_sends_data(call: cst.Call) -> bool:
    """``urlopen(url, data)``, or ``urlopen(Request(url, data=..., method="POST"))``."""
    if argument(call, 1, "data") is not None:
        return True
    target = argument(call, 0, "url")
    if isinstance(target, cst.Call):
        if argument(target, 1, "data") is not None:
            return True
        method = string_value(argument(target, 5, "method"))
        return method is not None and method.upper() in _MUTATING_HTTP
    return False


_SQL_WRITE = re.compile(r"\b(INSERT|UPDATE|DELETE|MERGE|REPLACE|UPSERT|TRUNCATE)\b", re.IGNORECASE)
_SQL_IDEMPOTENT = re.compile(
    r"ON\s+CONFLICT(\s*\([^)]*\))?\s+DO\s+NOTHING|INSERT\s+OR\s+IGNORE|INSERT\s+IGNORE", re.IGNORECASE
)
_SQL_COMMENT = re.compile(r"--[^\n]*|/\*.*?\*/", re.DOTALL)


def sql_write_text(sql: str) -> bool:
    """Does this SQL text write, non-idempotently? ``SELECT``s and ``ON CONFLICT DO NOTHING`` do not."""
    body = _SQL_COMMENT.sub(" ", sql).strip()
    first = body.split(None, 1)[0].upper() if body else ""
    if first not in {"INSERT", "UPDATE", "DELETE", "MERGE", "REPLACE", "UPSERT", "TRUNCATE", "WITH"}:
        return False
    if first == "WITH" and not _SQL_WRITE.search(body):
        return False
    return not _SQL_IDEMPOTENT.search(body)


def sql_argument_writes(call: cst.Call) -> bool:
    """``execute("INSERT ...")``, also through ``sql.SQL("...")`` or ``text("...")``."""
    first = argument(call, 0, "query") or argument(call, 0, "statement") or argument(call, 0, "sql")
    if isinstance(first, cst.Call):  # psycopg sql.SQL("..."), sqlalchemy text("...")
        inner = argument(first, 0, "text")
        if inner is None:
            first_arg = positional(first, 0)
            inner = first_arg.value if first_arg is not None else None
        first = inner
    text = string_value(first)
    return text is not None and sql_write_text(text)
