"""Is an effect call keyed by an idempotency key, so a re-run is deduplicated by the provider?

What counts as keyed (documented in docs/effects.md):

* a keyword argument whose name says idempotency or deduplication:
  ``idempotency_key=``, ``IdempotencyKey=``, ``MessageDeduplicationId=``,
  AWS ``ClientToken=`` / ``ClientRequestToken=``;
* an ``Idempotency-Key`` (or ``X-Idempotency-Key``) header, given inline or
  through a dict variable built in the same function.
"""

from __future__ import annotations

import re

import libcst as cst

from resume_audit.analysis.queries import NameResolver
from resume_audit.facts.model import FunctionInfo
from resume_audit.facts.syntax import dict_items, keyword, subscript_keys_assigned

#: a keyword argument that carries an idempotency key
KEY_KEYWORD = re.compile(r"idempot|dedup|client_?(request_?)?token", re.IGNORECASE)
#: a header that carries one
KEY_HEADER = re.compile(r"^(x-)?idempotency[-_ ]?key$", re.IGNORECASE)


def is_keyed(call: cst.Call, resolver: NameResolver, scope: FunctionInfo | None) -> bool:
    """Is this effect call keyed by an idempotency key (so a re-run is deduplicated)?"""
    for arg in call.args:
        if arg.keyword is not None and KEY_KEYWORD.search(arg.keyword.value):
            return True
    for header_kw in ("headers", "extra_headers"):
        header = keyword(call, header_kw)
        if header is not None and _headers_carry_key(header.value, resolver, scope):
            return True
    return False


def _headers_carry_key(expr: cst.BaseExpression, resolver: NameResolver, scope: FunctionInfo | None) -> bool:
    if isinstance(expr, cst.Dict):
        for key, value in dict_items(expr):
            if key is not None and KEY_HEADER.match(key):
                return True
            if key is None and _headers_carry_key(value, resolver, scope):
                return True
        return False
    if isinstance(expr, cst.Call):
        return any(a.keyword is not None and KEY_KEYWORD.search(a.keyword.value) for a in expr.args) or any(
            isinstance(a.value, cst.Dict) and _headers_carry_key(a.value, resolver, scope) for a in expr.args
        )
    if isinstance(expr, cst.Name):
        found = resolver.binding_value(expr.value, scope, None) if scope is not None else None
        if found is not None and _headers_carry_key(found[0].value, resolver, found[1]):
            return True
        # headers["Idempotency-Key"] = ... in the same function
        if scope is not None:
            for sub in subscript_keys_assigned(scope.node.body, expr.value):
                if KEY_HEADER.match(sub):
                    return True
    return False
