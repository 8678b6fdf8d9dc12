"""Effects recognised by the shape of the code rather than by the callee's qualified name.

A Google API discovery client is built in a helper and passed around untyped, so its writes are
recognised by the fluent chain's shape (``service.users().messages().send(...).execute()``); an
ORM session handed in as an untyped parameter writes when it commits what was added to it.
"""

from __future__ import annotations

import libcst as cst

from resume_audit.analysis.effect_catalog import GOOGLE_CONSEQUENCES, GOOGLE_WRITE_METHODS
from resume_audit.analysis.effect_kinds import Effect
from resume_audit.analysis.queries import NameResolver
from resume_audit.facts.model import CallInfo, FunctionInfo


def google_chain_write(node: cst.Call, resolver: NameResolver, scope: FunctionInfo | None) -> Effect | None:
    """``service.users().messages().send(userId="me", body=b).execute()``: the ``.execute()``
    of a mutating method of a Google API discovery client, however long the fluent chain,
    also when the request is bound to a name first (``req = yt.videos().insert(...)``;
    ``req.execute()`` or a resumable ``req.next_chunk()``). Recognised by shape: a chain of
    at least two calls ending in a mutating method, executed with no positional argument
    (a SQL cursor's ``execute`` always has one)."""
    func = node.func
    if not (isinstance(func, cst.Attribute) and func.attr.value in ("execute", "next_chunk")):
        return None
    if any(a.keyword is None and a.star == "" for a in node.args):
        return None
    request = func.value
    if isinstance(request, cst.Name):
        found = resolver.binding_value(request.value, scope, None)
        if found is None or found[0].kind != "assign":
            return None
        request = found[0].value
    if not (isinstance(request, cst.Call) and isinstance(request.func, cst.Attribute)):
        return None
    method = request.func.attr.value
    if method not in GOOGLE_WRITE_METHODS:
        return None
    resource_call = request.func.value
    if not (isinstance(resource_call, cst.Call) and isinstance(resource_call.func, cst.Attribute)):
        return None
    resource = resource_call.func.attr.value
    chain = _chain_text(request)
    consequence = GOOGLE_CONSEQUENCES.get((resource, method), f"repeats the Google API {resource}().{method}() write")
    return Effect("saas", f"{chain}.execute()", consequence)


def _chain_text(call: cst.Call) -> str:
    """``users().messages().send()`` for a fluent chain (arguments elided)."""
    parts = []
    cur: cst.BaseExpression = call
    while isinstance(cur, cst.Call) and isinstance(cur.func, cst.Attribute):
        parts.append(f"{cur.func.attr.value}()")
        cur = cur.func.value
    return ".".join(reversed(parts))


#: ``merge`` is not here: it is an upsert by primary key, a re-run leaves one row
ORM_STAGING = frozenset({"add", "add_all", "delete", "bulk_save_objects"})


def orm_session_commit(call: CallInfo) -> Effect | None:
    """``session.add(row)`` ... ``session.commit()`` on a session whose type is unknown (an
    untyped parameter, a dependency-injected ``db``): the commit is the durable write."""
    f = call.node.func
    fn = call.function
    if fn is None or not (isinstance(f, cst.Attribute) and f.attr.value in ("commit", "flush")):
        return None
    receiver = f.value
    if not isinstance(receiver, cst.Name):
        return None
    for other in fn.calls:
        g = other.node.func
        if (
            isinstance(g, cst.Attribute)
            and g.attr.value in ORM_STAGING
            and isinstance(g.value, cst.Name)
            and g.value.value == receiver.value
            and other.order < call.order
        ):
            return Effect("sql", f"{receiver.value}.{f.attr.value}() after {receiver.value}.{g.attr.value}(...)")
    return None
