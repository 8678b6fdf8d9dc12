"""The EO rules' automatic fix: pass an idempotency key derived from the thread, the node and the
call's stable arguments to an SDK call that accepts one (RA101, RA103).

A LangGraph node re-runs from its first line on resume (RA101: always, after an ``interrupt()``;
RA103: when a crash beat the node's durable write). A key that is the same on the re-run makes
the provider answer the repeat with the first call's result instead of acting twice. The key
must therefore be built only from what a re-run sees again:

* the thread id (``config["configurable"]["thread_id"]``) -- a node's ``config`` parameter is
  how LangGraph hands it over, so the fix adds ``config`` when the node has none (that changes
  the function's signature: an **unsafe** fix, ``--unsafe-fixes``);
* the node's name and the API called;
* the call's **stable** arguments: built from the node's state (restored from the checkpoint on
  a re-run), ``config``, literals and module-level names. An argument computed in the node from
  anything else -- an LLM reply, the clock, a random id -- differs on the re-run and is left out
  of the key (the provider then refuses a repeat whose parameters differ rather than acting twice).

The parts are hashed (``hashlib.sha256``), so the key stays under the provider's length limit.

Not offered when the key could be wrong: the call is in a loop or a comprehension (every
iteration would share one key), the node makes two calls of the same API (they would share
keys), the call unpacks ``**kwargs``, the function is not a node (a ``@task`` or a tool gets no
``config`` parameter), or the node's parameters cannot take ``config``.
"""

from __future__ import annotations

import libcst as cst

from resume_audit.analysis.effect_catalog import KeyedApi, keyed_api
from resume_audit.analysis.resolve import Resolver
from resume_audit.facts.model import CallInfo, FunctionInfo
from resume_audit.findings import Autofix, Edit, FixSafety
from resume_audit.fixes.source_edits import add_keyword_edit, add_parameter_edit, import_edit, is_bound, local_name_of

#: where LangGraph's run configuration type lives (the annotation LangGraph recognises by identity)
RUNNABLE_CONFIG = frozenset(
    {"langchain_core.runnables.RunnableConfig", "langchain_core.runnables.config.RunnableConfig"}
)
_LOOPS = (cst.For, cst.While, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.Lambda)
#: calls whose result is as stable as their arguments
_PURE_CALLS = frozenset({"str", "int", "float", "round", "len", "abs", "min", "max", "sorted", "tuple", "bool"})
#: request options that are not part of what is asked for
_NOT_PARAMETERS = frozenset({"api_key", "stripe_account", "stripe_version", "max_network_retries", "headers"})


def idempotency_key_fix(call: CallInfo, fn: FunctionInfo, resolver: Resolver) -> Autofix | None:
    """The fix for ``call`` (an effect in the body of node function ``fn``), or None."""
    module = fn.module
    if call.function is not fn or call.module is not module:
        return None  # the effect is reached through a helper: the key belongs where the call is
    found = keyed_api(resolver.call_names(call.node, fn))
    if found is None:
        return None
    api, name = found
    if _in_loop(call, fn) or any(
        c is not call and keyed_api(resolver.call_names(c.node, fn)) == found for c in fn.calls
    ):
        return None
    edits: list[Edit] = []
    config = "config"
    param = fn.param("config")
    if param is None:
        if is_bound(module, "config") or any(b.name == "config" for b in fn.bindings):
            return None  # a local or global named config would be shadowed
        annotation = ""
        first = [*fn.node.params.posonly_params, *fn.node.params.params][:1]
        if first and first[0].annotation is not None:
            local = local_name_of(module, RUNNABLE_CONFIG)
            if local == "RunnableConfig":
                annotation = ": RunnableConfig"
            elif local is None and not is_bound(module, "RunnableConfig"):
                added = import_edit(module, "from langchain_core.runnables import RunnableConfig", "RunnableConfig")
                if added is not None:
                    edits.append(added)
                    annotation = ": RunnableConfig"
        parameter = add_parameter_edit(fn, f"config{annotation}")
        if parameter is None:
            return None
        edits.append(parameter)
    elif param.star:
        return None  # *config / **config: not the parameter LangGraph fills
    hashlib = local_name_of(module, frozenset({"hashlib"}))
    if hashlib is None:
        hashlib = "hashlib"
        added = import_edit(module, "import hashlib", "hashlib")
        if added is None:
            return None
        edits.append(added)
    stable = _stable_parts(call, fn, config)
    parts = [f'{config}["configurable"]["thread_id"]', f'"{fn.name}"', f'"{name}"', *stable]
    key = f"{hashlib}.sha256(repr(({', '.join(parts)})).encode()).hexdigest()"
    keyword = add_keyword_edit(module, call.node, api.keyword, key)
    if keyword is None:
        return None
    edits.append(keyword)
    return Autofix(_description(api, param is None), FixSafety.UNSAFE, tuple(edits))


def _description(api: KeyedApi, adds_config: bool) -> str:
    added = (
        " and adds the node's `config` parameter (LangGraph passes the run's configuration to it)"
        if adds_config
        else ""
    )
    return (
        f"pass {api.keyword}= derived from the thread id, the node and the call's stable arguments, so "
        f"{api.sdk} answers a re-run's repeat without acting again{added}; {api.sdk} remembers a key for "
        f"{api.retention}, so a re-run later than that acts again"
    )


def _in_loop(call: CallInfo, fn: FunctionInfo) -> bool:
    for ancestor in fn.module.ancestors(call.node):
        if ancestor is fn.node:
            return False
        if isinstance(ancestor, _LOOPS):
            return True
    return False


def _stable_parts(call: CallInfo, fn: FunctionInfo, config: str) -> list[str]:
    """Source text of each argument a re-run computes again identically (see the module docstring),
    keyword arguments as ``"name", value`` pairs so that two calls differing only in which keyword
    gets a value differ in key."""
    module = fn.module
    params = [*fn.node.params.posonly_params, *fn.node.params.params]
    state = params[0].name.value if params else None
    roots = {n for n in (state, config) if n is not None}
    parts: list[str] = []
    for arg in call.node.args:
        if arg.star or (arg.keyword is not None and arg.keyword.value in _NOT_PARAMETERS):
            continue
        if not _is_stable(arg.value, fn, roots, depth=0):
            continue
        text = module.code(arg.value).strip()
        if "\n" in text:
            continue  # a multi-line literal: stable, but the key would not fit on its line
        parts.extend([f'"{arg.keyword.value}"', text] if arg.keyword is not None else [text])
    return parts


def _is_stable(expr: cst.BaseExpression, fn: FunctionInfo, roots: set[str], depth: int) -> bool:
    if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(expr, cst.Name):
        if expr.value in roots or expr.value in ("None", "True", "False"):
            return True
        local = [b for b in fn.bindings if b.name == expr.value]
        if local:
            # a local assigned once from stable parts is as stable as they are
            return (
                depth < 2
                and len(local) == 1
                and local[0].kind == "assign"
                and _is_stable(local[0].value, fn, roots, depth + 1)
            )
        return (
            any(b.name == expr.value and b.kind == "assign" for b in fn.module.module_bindings) and expr.value.isupper()
        )
    if isinstance(expr, cst.Attribute):
        return _is_stable(expr.value, fn, roots, depth)
    if isinstance(expr, cst.Subscript):
        return _is_stable(expr.value, fn, roots, depth) and all(
            isinstance(s.slice, cst.Index) and _is_stable(s.slice.value, fn, roots, depth) for s in expr.slice
        )
    if isinstance(expr, cst.FormattedString):
        return all(
            isinstance(p, cst.FormattedStringText)
            or (isinstance(p, cst.FormattedStringExpression) and _is_stable(p.expression, fn, roots, depth))
            for p in expr.parts
        )
    if isinstance(expr, cst.BinaryOperation):
        return _is_stable(expr.left, fn, roots, depth) and _is_stable(expr.right, fn, roots, depth)
    if isinstance(expr, cst.UnaryOperation):
        return _is_stable(expr.expression, fn, roots, depth)
    if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
        return all(isinstance(e, cst.Element) and _is_stable(e.value, fn, roots, depth) for e in expr.elements)
    if isinstance(expr, cst.Dict):
        return all(
            isinstance(e, cst.DictElement)
            and _is_stable(e.key, fn, roots, depth)
            and _is_stable(e.value, fn, roots, depth)
            for e in expr.elements
        )
    if isinstance(expr, cst.Call):
        func = expr.func
        pure = (isinstance(func, cst.Name) and func.value in _PURE_CALLS) or (
            isinstance(func, cst.Attribute) and func.attr.value == "get" and _is_stable(func.value, fn, roots, depth)
        )
        return pure and all(not a.star and _is_stable(a.value, fn, roots, depth) for a in expr.args)
    return False
