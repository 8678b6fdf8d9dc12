"""LangChain tools: which project function runs when a tool object is called.

Agents perform their effects through tools: ``@tool`` functions,
``StructuredTool.from_function(func=...)``, ``BaseTool`` subclasses'
``_run``/``_arun``, and tools looked up by name in a registry built from a
list (``{t.name: t for t in tools}``, ``dict(zip(names, tools))``,
``tools_by_name[call["name"]]``). Calling ``tool.invoke(args)``,
``tool.ainvoke``, ``tool.run``, ``tool.func(...)`` runs the tool's function,
so for effect tracing the call is a call of that function -- and a call
through a registry may run any tool in it.

Names were checked against langchain-core 1.x (``langchain_core.tools``:
``tool``, ``StructuredTool``, ``Tool``, ``BaseTool``; ``langchain.tools`` and
``langchain.agents`` re-export them). Matching is by the last component
under a ``langchain`` package, so the many re-export paths all match.
"""

from __future__ import annotations

from typing import Callable

import libcst as cst

from resume_audit.analysis.queries import ProjectQueries
from resume_audit.facts.model import CallInfo, ClassInfo, FunctionInfo, ModuleFacts
from resume_audit.facts.syntax import argument, string_value
from resume_audit.frameworks.classes import extends
from resume_audit.frameworks.langgraph.names import CREATE_REACT_AGENT, TOOL_NODE

#: calling one of these on a tool object runs the tool's function
TOOL_CALL_METHODS = frozenset(
    {"invoke", "ainvoke", "run", "arun", "func", "coroutine", "_run", "_arun", "batch", "abatch"}
)
#: registry lookups that return one tool: ``reg[name]``, ``reg.get(name)``
_LOOKUP_METHODS = frozenset({"get", "__getitem__", "pop"})
_BASE_TOOL = frozenset(
    {
        "langchain_core.tools.BaseTool",
        "langchain_core.tools.base.BaseTool",
        "langchain.tools.BaseTool",
        "langchain.tools.base.BaseTool",
        "langchain_community.tools.BaseTool",
    }
)
#: a bound on chains of names and helpers; cycles are cut by the per-project memo
_MAX_DEPTH = 40


def _langchain(name: str, last: str) -> bool:
    return (
        name.split(".", 1)[0] in ("langchain", "langchain_core", "langchain_community")
        and name.rsplit(".", 1)[-1] == last
    )


def is_tool_decorator(names: set[str]) -> bool:
    return any(_langchain(n, "tool") for n in names)


def _is_tool_factory(names: set[str]) -> bool:
    """``StructuredTool.from_function``, ``Tool.from_function``, ``Tool(...)``, ``StructuredTool(...)``."""
    for n in names:
        parts = n.split(".")
        if parts[0] not in ("langchain", "langchain_core", "langchain_community"):
            continue
        if parts[-1] in ("Tool", "StructuredTool") or (
            parts[-1] == "from_function" and len(parts) > 1 and parts[-2] in ("Tool", "StructuredTool")
        ):
            return True
    return False


def is_tool_function(fn: FunctionInfo, project: ProjectQueries) -> bool:
    resolver = project.resolver(fn.module)
    return any(is_tool_decorator(resolver.names(d.target, fn.parent)) for d in fn.decorators)


def tool_callees(
    call: cst.Call, scope: FunctionInfo | None, module: ModuleFacts, project: ProjectQueries
) -> list[FunctionInfo]:
    """Project functions ``call`` runs when it calls a tool object: ``tool.invoke(args)``,
    ``await tools_by_name[name].ainvoke(args)``, ``MyTool().run(...)``."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value in TOOL_CALL_METHODS):
        return []
    found = tool_targets(func.value, scope, module, project, 0)
    if len(found) > 1:
        allowed, excluded = _name_constraint(call, scope, module, project)
        found = [
            fn
            for fn in found
            if _tool_name(fn, project) not in excluded and (allowed is None or _tool_name(fn, project) in allowed)
        ]
    return found


def dispatch_targets(
    call: cst.Call, callee: FunctionInfo, scope: FunctionInfo | None, module: ModuleFacts, project: ProjectQueries
) -> list[FunctionInfo] | None:
    """``_safe_tool_invoke(tool_call["name"], args)`` where the helper does ``tools_by_name.get(name)
    .invoke(args)``: the tools this call can run, narrowed by the name passed in (a literal, or the
    ``if`` tests around the call). None when ``callee`` is not such a dispatcher."""
    found = _dispatcher_param(callee, project)
    if found is None:
        return None
    param, index = found
    arg = argument(call, index, param)
    if arg is None:
        return None
    tools = _dispatcher_tools(callee, project)
    literal = string_value(arg)
    if literal is not None:
        return [fn for fn in tools if _tool_name(fn, project) == literal]
    if _is_name_lookup(arg) or isinstance(arg, cst.Name):
        allowed, excluded = _name_constraint(call, scope, module, project)
        return [
            fn
            for fn in tools
            if _tool_name(fn, project) not in excluded and (allowed is None or _tool_name(fn, project) in allowed)
        ]
    return tools


def _dispatcher_param(fn: FunctionInfo, project: ProjectQueries) -> tuple[str, int] | None:
    return project.cached("langchain-dispatcher", id(fn), lambda: _find_dispatcher_param(fn, project), in_progress=None)


def _find_dispatcher_param(fn: FunctionInfo, project: ProjectQueries) -> tuple[str, int] | None:
    params = fn.param_names()
    offset = 1 if fn.is_method else 0
    resolver = project.resolver(fn.module)
    for info in fn.calls:
        f = info.node.func
        if not (isinstance(f, cst.Attribute) and f.attr.value in TOOL_CALL_METHODS):
            continue
        receiver = f.value
        if isinstance(receiver, cst.Name):
            b = resolver.binding_value(receiver.value, fn, info.order)
            receiver = b[0].value if b is not None and b[0].kind == "assign" else receiver
        key = None
        if (
            isinstance(receiver, cst.Subscript)
            and len(receiver.slice) == 1
            and isinstance(receiver.slice[0].slice, cst.Index)
        ):
            key = receiver.slice[0].slice.value
        elif (
            isinstance(receiver, cst.Call)
            and isinstance(receiver.func, cst.Attribute)
            and receiver.func.attr.value in _LOOKUP_METHODS
            and receiver.args
        ):
            key = receiver.args[0].value
        if isinstance(key, cst.Name) and key.value in params:
            return (key.value, params.index(key.value) - offset)
    return None


def _dispatcher_tools(fn: FunctionInfo, project: ProjectQueries) -> list[FunctionInfo]:
    out: list[FunctionInfo] = []
    for info in fn.calls:
        _add(out, tool_callees(info.node, fn, fn.module, project))
    return out


def _tool_name(fn: FunctionInfo, project: ProjectQueries) -> str:
    """The name a model calls the tool by: ``@tool("name")`` / ``@tool(name=...)``, else the function's."""
    for d in fn.decorators:
        if d.call is not None and is_tool_decorator(project.resolver(fn.module).names(d.target, fn.parent)):
            given = string_value(argument(d.call, 0, "name_or_callable")) or string_value(argument(d.call, 99, "name"))
            if given:
                return given
    return fn.name


def _name_constraint(
    call: cst.Call, scope: FunctionInfo | None, module: ModuleFacts, project: ProjectQueries
) -> tuple[set[str] | None, set[str]]:
    """Tool names a registry call can be reached with, from the ``if`` tests around it:
    ``if tool_call["name"] not in hitl_tools:`` excludes the listed tools, ``== "x"`` allows one."""
    allowed: set[str] | None = None
    excluded: set[str] = set()
    child: cst.CSTNode = call
    for anc in module.ancestors(call):
        if isinstance(anc, cst.FunctionDef):
            break
        if isinstance(anc, cst.If) and isinstance(anc.test, cst.Comparison) and len(anc.test.comparisons) == 1:
            in_body = child is anc.body
            if in_body or child is anc.orelse:
                test = anc.test
                op = test.comparisons[0].operator
                names = _string_set(test.comparisons[0].comparator, scope, module, project)
                if names is not None and _is_name_lookup(test.left):
                    positive = (
                        isinstance(op, (cst.In, cst.Equal)) if in_body else isinstance(op, (cst.NotIn, cst.NotEqual))
                    )
                    negative = (
                        isinstance(op, (cst.NotIn, cst.NotEqual)) if in_body else isinstance(op, (cst.In, cst.Equal))
                    )
                    if positive:
                        allowed = names if allowed is None else allowed & names
                    elif negative:
                        excluded |= names
        child = anc
    return allowed, excluded


def _is_name_lookup(expr: cst.BaseExpression) -> bool:
    """``tool_call["name"]`` or ``call.name``."""
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
        return string_value(expr.slice[0].slice.value) == "name"
    return isinstance(expr, cst.Attribute) and expr.attr.value == "name"


def _string_set(
    expr: cst.BaseExpression, scope: FunctionInfo | None, module: ModuleFacts, project: ProjectQueries, depth: int = 0
) -> set[str] | None:
    single = string_value(expr)
    if single is not None:
        return {single}
    if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
        values = [string_value(el.value) for el in expr.elements]
        return {v for v in values if v is not None} if all(v is not None for v in values) else None
    if isinstance(expr, cst.Name) and depth < 3:
        found = project.resolver(module).binding_value(expr.value, scope, None)
        if found is not None and found[0].kind == "assign":
            return _string_set(found[0].value, found[1], module, project, depth + 1)
    return None


def tool_targets(
    expr: cst.BaseExpression, scope: FunctionInfo | None, module: ModuleFacts, project: ProjectQueries, depth: int
) -> list[FunctionInfo]:
    """The project functions the tool object ``expr`` may run."""
    if depth > _MAX_DEPTH:
        return []
    resolver = project.resolver(module)
    if isinstance(expr, cst.Await):
        return tool_targets(expr.expression, scope, module, project, depth + 1)
    if isinstance(expr, cst.Subscript):
        return registry_tools(expr.value, scope, module, project, depth + 1)
    if isinstance(expr, cst.Call):
        f = expr.func
        if isinstance(f, cst.Attribute) and f.attr.value in _LOOKUP_METHODS:
            return registry_tools(f.value, scope, module, project, depth + 1)
        names = resolver.call_names(expr, scope)
        if _is_tool_factory(names):
            return _factory_functions(expr, scope, module, project)
        return _class_runs(names, module, project)
    if isinstance(expr, cst.Name):
        found = resolver.binding_value(expr.value, scope, module.order(expr) if expr in module._meta else None)
        if found is not None:
            binding, where = found
            if binding.kind == "for":
                return registry_tools(binding.value, where, module, project, depth + 1)
            if binding.kind in ("assign", "with"):
                return tool_targets(binding.value, where, module, project, depth + 1)
    out: list[FunctionInfo] = []
    for name in resolver.names(expr, scope):
        target = project.lookup(name, near=module)
        if isinstance(target, FunctionInfo) and is_tool_function(target, project):
            _add(out, [target])
        elif isinstance(target, ClassInfo) and extends(target, _BASE_TOOL, project):
            _add(out, _runs_of(target))
        else:
            _add(
                out, _module_variable_tool(name, project, depth + 1) or _module_variable_tools(name, project, depth + 1)
            )
    return out


def _module_variable_tool(qualified: str, project: ProjectQueries, depth: int) -> list[FunctionInfo]:
    """``refund = StructuredTool.from_function(...)`` / ``refund = RefundTool()`` in another module."""
    mod_name, _, var = qualified.rpartition(".")
    for m in project.by_name.get(mod_name, ()):
        for b in reversed(m.module_bindings):
            if b.name == var and b.kind in ("assign", "annotation"):
                return tool_targets(b.value, None, m, project, depth + 1)
    return []


def registry_tools(
    expr: cst.BaseExpression | None,
    scope: FunctionInfo | None,
    module: ModuleFacts,
    project: ProjectQueries,
    depth: int = 0,
    falsy: frozenset[str] = frozenset(),
) -> list[FunctionInfo]:
    """Every project function a collection of tools may hold: a list or tuple of tools, a
    dict literal, ``{t.name: t for t in L}``, ``dict(zip(names, L))``, ``L1 + L2``, a name bound
    to any of those (with ``.append``/``.extend`` of it in the same scope), a module variable of
    another project module, a project helper returning one (``get_tools(...)``), or
    ``ToolNode(L)``."""
    if expr is None or depth > _MAX_DEPTH:
        return []
    return project.cached(
        "langchain-registry",
        (id(expr), id(scope), falsy),
        lambda: _registry_tools(expr, scope, module, project, depth, falsy),
        in_progress=[],
    )  # a cycle adds nothing


def _registry_tools(
    expr: cst.BaseExpression,
    scope: FunctionInfo | None,
    module: ModuleFacts,
    project: ProjectQueries,
    depth: int,
    falsy: frozenset[str],
) -> list[FunctionInfo]:
    """``falsy``: parameters of ``scope`` that are false for the call being followed
    (``get_tools(include_gmail=False)``): tools added under ``if include_gmail:`` are not there."""
    resolver = project.resolver(module)
    out: list[FunctionInfo] = []
    if isinstance(expr, cst.Await):
        return registry_tools(expr.expression, scope, module, project, depth + 1)
    if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
        for el in expr.elements:
            if isinstance(el, cst.StarredElement):
                _add(out, registry_tools(el.value, scope, module, project, depth + 1))
            else:
                _add(
                    out,
                    tool_targets(el.value, scope, module, project, depth + 1)
                    or _plain_functions(el.value, scope, module, project),
                )
        return out
    if isinstance(expr, cst.Dict):
        for item in expr.elements:
            if isinstance(item, cst.DictElement):
                _add(
                    out,
                    tool_targets(item.value, scope, module, project, depth + 1)
                    or _plain_functions(item.value, scope, module, project),
                )
            elif isinstance(item, cst.StarredDictElement):
                _add(out, registry_tools(item.value, scope, module, project, depth + 1))
        return out
    if isinstance(expr, (cst.DictComp, cst.ListComp, cst.SetComp, cst.GeneratorExp)):
        return _comprehension_tools(expr, scope, module, project, depth + 1, falsy)
    if isinstance(expr, cst.BinaryOperation):
        _add(out, registry_tools(expr.left, scope, module, project, depth + 1))
        _add(out, registry_tools(expr.right, scope, module, project, depth + 1))
        return out
    if isinstance(expr, cst.Call):
        names = resolver.call_names(expr, scope)
        last = {n.rsplit(".", 1)[-1] for n in names}
        if (
            names & {"builtins.dict", "builtins.list", "builtins.tuple", "builtins.zip", "builtins.sorted"}
            or "ToolNode" in last
        ):
            for a in expr.args:
                _add(out, registry_tools(a.value, scope, module, project, depth + 1, falsy))
            return out
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in ("values", "copy"):
            return registry_tools(expr.func.value, scope, module, project, depth + 1, falsy)
        for name in names:
            fn = project.function(name, near=module)
            if fn is not None:
                _add(out, _returned_tools(fn, expr, scope, module, project, depth + 1))
        return out
    if isinstance(expr, cst.Name):
        found = resolver.binding_value(expr.value, scope, None)
        if found is not None and found[0].kind in ("assign", "with", "annotation"):
            binding, where = found
            inner = falsy if where is scope else frozenset()
            _add(out, registry_tools(binding.value, where, module, project, depth + 1, inner))
            _add(out, _mutations(expr.value, where, module, project, depth + 1, inner))
            return out
        for name in resolver.names(expr, scope):
            _add(out, _module_variable_tools(name, project, depth + 1))
        return out
    if isinstance(expr, cst.Attribute):  # self.tools = [...] in __init__
        for name in resolver.names(expr, scope):
            _add(out, _module_variable_tools(name, project, depth + 1))
        return out
    return out


def _comprehension_tools(
    expr: cst.DictComp | cst.ListComp | cst.SetComp | cst.GeneratorExp,
    scope: FunctionInfo | None,
    module: ModuleFacts,
    project: ProjectQueries,
    depth: int,
    falsy: frozenset[str],
) -> list[FunctionInfo]:
    """``{t.name: t for t in L}`` holds L's tools; ``[ALL[n] for n in names]`` holds ALL's."""
    element = expr.value if isinstance(expr, cst.DictComp) else expr.elt
    target = expr.for_in.target
    if isinstance(element, cst.Name) and isinstance(target, cst.Name) and element.value == target.value:
        return registry_tools(expr.for_in.iter, scope, module, project, depth, falsy)
    if isinstance(element, cst.Subscript):
        return registry_tools(element.value, scope, module, project, depth, falsy)
    if (
        isinstance(element, cst.Call)
        and isinstance(element.func, cst.Attribute)
        and element.func.attr.value in _LOOKUP_METHODS
    ):
        return registry_tools(element.func.value, scope, module, project, depth, falsy)
    return registry_tools(expr.for_in.iter, scope, module, project, depth, falsy)


def _returned_tools(
    fn: FunctionInfo,
    call: cst.Call,
    call_scope: FunctionInfo | None,
    call_module: ModuleFacts,
    project: ProjectQueries,
    depth: int,
) -> list[FunctionInfo]:
    """Tools a project helper returns; a returned comprehension over one of its parameters
    (``def by_name(tools): return {t.name: t for t in tools}``) takes the caller's argument."""
    out: list[FunctionInfo] = []
    params = fn.param_names()
    falsy = _falsy_params(fn, call)
    for ret in fn.returns:
        if ret.value is None:
            continue
        value = ret.value
        source = value
        if isinstance(value, (cst.DictComp, cst.ListComp, cst.SetComp, cst.GeneratorExp)):
            element = value.value if isinstance(value, cst.DictComp) else value.elt
            if (
                isinstance(element, cst.Name)
                and isinstance(value.for_in.target, cst.Name)
                and element.value == value.for_in.target.value
            ):
                source = value.for_in.iter
        if isinstance(source, cst.Name) and source.value in params:
            index = params.index(source.value)
            if fn.is_method and index > 0:
                index -= 1
            arg = argument(call, index, source.value)
            if arg is not None:
                _add(out, registry_tools(arg, call_scope, call_module, project, depth + 1))
                continue
        _add(out, registry_tools(value, fn, fn.module, project, depth + 1, falsy))
    return out


def _falsy_params(fn: FunctionInfo, call: cst.Call) -> frozenset[str]:
    """Parameters of ``fn`` that are ``False``/``None`` for this call: passed so, or left at such a default."""
    out = set()
    offset = 1 if fn.is_method else 0
    p = fn.node.params
    for i, param in enumerate((*p.posonly_params, *p.params, *p.kwonly_params)):
        name = param.name.value
        index = i - offset if param in (*p.posonly_params, *p.params) else 99
        given = argument(call, index, name) if index >= 0 else None
        value = given if given is not None else param.default
        if isinstance(value, cst.Name) and value.value in ("False", "None"):
            out.add(name)
    return frozenset(out)


def _mutations(
    name: str,
    scope: FunctionInfo | None,
    module: ModuleFacts,
    project: ProjectQueries,
    depth: int,
    falsy: frozenset[str] = frozenset(),
) -> list[FunctionInfo]:
    """``tools.append(send_email)`` / ``tools.extend(gmail_tools)`` / ``tools.update({...})`` in the scope,
    except under ``if <flag>:`` where the flag is one of ``falsy``."""
    out: list[FunctionInfo] = []
    calls = scope.calls if scope is not None else module.module_calls
    for info in calls:
        if falsy and _guarded_by(info.node, module, falsy):
            continue
        f = info.node.func
        if (
            isinstance(f, cst.Attribute)
            and isinstance(f.value, cst.Name)
            and f.value.value == name
            and f.attr.value in ("append", "extend", "insert", "update")
        ):
            for a in info.node.args:
                if f.attr.value == "append" or (f.attr.value == "insert" and a is info.node.args[-1]):
                    _add(
                        out,
                        tool_targets(a.value, scope, module, project, depth + 1)
                        or _plain_functions(a.value, scope, module, project),
                    )
                elif f.attr.value in ("extend", "update"):
                    _add(out, registry_tools(a.value, scope, module, project, depth + 1))
    return out


def _guarded_by(node: cst.CSTNode, module: ModuleFacts, flags: frozenset[str]) -> bool:
    """Is ``node`` inside the body of ``if <flag>:`` (or ``if <flag> and ...:``) for one of ``flags``?"""
    child = node
    for anc in module.ancestors(node):
        if isinstance(anc, cst.If) and child is anc.body:
            test = anc.test
            while isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
                if isinstance(test.left, cst.Name) and test.left.value in flags:
                    return True
                test = test.right
            if isinstance(test, cst.Name) and test.value in flags:
                return True
        if isinstance(anc, cst.FunctionDef):
            return False
        child = anc
    return False


def _module_variable_tools(qualified: str, project: ProjectQueries, depth: int) -> list[FunctionInfo]:
    """``TOOLS`` imported from another project module: the list it is bound to there."""
    mod_name, _, var = qualified.rpartition(".")
    out: list[FunctionInfo] = []
    for m in project.by_name.get(mod_name, ()):
        for b in reversed(m.module_bindings):
            if b.name == var and b.kind in ("assign", "annotation"):
                _add(out, registry_tools(b.value, None, m, project, depth + 1))
                _add(out, _mutations(var, None, m, project, depth + 1))
                break
    return out


def _factory_functions(
    call: cst.Call, scope: FunctionInfo | None, module: ModuleFacts, project: ProjectQueries
) -> list[FunctionInfo]:
    """``StructuredTool.from_function(func=send, coroutine=asend)`` / ``Tool(name, send, ...)``."""
    out: list[FunctionInfo] = []
    resolver = project.resolver(module)
    for expr in (argument(call, 0, "func"), argument(call, 99, "coroutine"), argument(call, 1, "func")):
        if expr is None:
            continue
        for name in resolver.names(expr, scope):
            fn = project.function(name, near=module)
            if fn is not None:
                _add(out, [fn])
    return out


def _class_runs(names: set[str], module: ModuleFacts, project: ProjectQueries) -> list[FunctionInfo]:
    out: list[FunctionInfo] = []
    for name in names:
        cls = project.lookup(name, near=module)
        if isinstance(cls, ClassInfo) and extends(cls, _BASE_TOOL, project):
            _add(out, _runs_of(cls))
    return out


def _runs_of(cls: ClassInfo) -> list[FunctionInfo]:
    return [cls.methods[m] for m in ("_run", "_arun") if m in cls.methods]


def _plain_functions(
    expr: cst.BaseExpression, scope: FunctionInfo | None, module: ModuleFacts, project: ProjectQueries
) -> list[FunctionInfo]:
    """A bare project function in a tools list (``create_react_agent(model, [send_email])``
    wraps plain functions as tools)."""
    out: list[FunctionInfo] = []
    for name in project.resolver(module).names(expr, scope):
        fn = project.function(name, near=module)
        if fn is not None:
            _add(out, [fn])
            break
    return out


def _add(out: list[FunctionInfo], more: list[FunctionInfo]) -> None:
    for fn in more:
        if all(fn is not o for o in out):
            out.append(fn)


# -- tools served by MCP servers through langchain-mcp-adapters ----------------------------
#: Where langchain-mcp-adapters hands out LangChain tools that call an MCP server's tools
#: (checked against langchain-mcp-adapters 0.1: ``MultiServerMCPClient.get_tools()``,
#: ``langchain_mcp_adapters.tools.load_mcp_tools(session)``). Each tool's ``ainvoke`` is a
#: ``session.call_tool(name, args)`` on the server: whatever the server does, it does again.
MCP_ADAPTER_TOOL_SOURCES = frozenset(
    {
        "langchain_mcp_adapters.client.MultiServerMCPClient.get_tools",
        "langchain_mcp_adapters.tools.load_mcp_tools",
    }
)
#: Runners that execute whichever tool of their list the model picked.
TOOL_RUNNER_METHODS = frozenset({"invoke", "ainvoke", "batch", "abatch", "stream", "astream"})


def _mcp_source_classifier(project: ProjectQueries) -> Callable[[CallInfo, ModuleFacts], str | None]:
    def classify(call: CallInfo, module: ModuleFacts) -> str | None:
        names = project.resolver(module).call_names(call.node, call.function)
        return "mcp-tools" if names & MCP_ADAPTER_TOOL_SOURCES else None

    return classify


def holds_mcp_adapter_tools(
    expr: cst.BaseExpression | None,
    scope: FunctionInfo | None,
    module: ModuleFacts,
    project: ProjectQueries,
    depth: int = 0,
) -> bool:
    """Does ``expr`` hold tools from an MCP server (``await client.get_tools()``, a project helper
    that gathers them, a list that includes them)?"""
    if expr is None or depth > 5:
        return False
    if isinstance(expr, cst.Await):
        return holds_mcp_adapter_tools(expr.expression, scope, module, project, depth + 1)
    if isinstance(expr, (cst.List, cst.Tuple)):
        return any(holds_mcp_adapter_tools(el.value, scope, module, project, depth + 1) for el in expr.elements)
    if isinstance(expr, cst.BinaryOperation):
        return holds_mcp_adapter_tools(expr.left, scope, module, project, depth + 1) or holds_mcp_adapter_tools(
            expr.right, scope, module, project, depth + 1
        )
    if isinstance(expr, cst.Name):
        found = project.resolver(module).binding_value(expr.value, scope, module.order(expr))
        if found is None or found[0].kind != "assign":
            return False
        return holds_mcp_adapter_tools(found[0].value, found[1], module, project, depth + 1)
    if isinstance(expr, cst.Call):
        info = module.call_info(expr)
        if info is None:
            return False
        # the tools come from the adapters here or from a project helper that fetches them
        return project.reach("langchain-mcp-adapter-tools", _mcp_source_classifier(project), info, module) is not None
    return False


def mcp_adapter_tool_run(
    call: cst.Call, scope: FunctionInfo | None, module: ModuleFacts, project: ProjectQueries
) -> str | None:
    """``tool_node.ainvoke(state)`` / ``agent.invoke(...)`` where the ``ToolNode`` or prebuilt agent
    was built over MCP adapter tools: the call runs a tool on an MCP server. Returns what runs."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value in TOOL_RUNNER_METHODS):
        return None
    receiver: cst.BaseExpression = func.value
    if isinstance(receiver, cst.Name):
        found = project.resolver(module).binding_value(receiver.value, scope, module.order(receiver))
        if found is None or found[0].kind != "assign":
            return None
        receiver, scope = found[0].value, found[1]
    if not isinstance(receiver, cst.Call):
        return None
    names = project.resolver(module).call_names(receiver, scope)
    if names & TOOL_NODE:
        tools = argument(receiver, 0, "tools")
        what = "a ToolNode over MCP server tools"
    elif names & CREATE_REACT_AGENT:
        tools = argument(receiver, 1, "tools")
        what = "a prebuilt agent over MCP server tools"
    else:
        return None
    return what if holds_mcp_adapter_tools(tools, scope, module, project) else None
