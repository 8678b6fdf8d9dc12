"""Which code serves requests: HTTP route handlers and queue consumers.

RA302 (a resume delivered from a handler with no dedupe) and RA601 (an
in-memory checkpointer behind interrupts in a served app) need to know
which functions run once per incoming request or message -- and so can run
concurrently, in several worker processes, and be re-delivered -- and which
modules belong to a served application.

Recognised (by resolved qualified name where the receiver can be typed,
otherwise by the decorator's shape in a module that imports the framework):

* HTTP: FastAPI / Starlette (``@app.post("/x")``, ``@router.get``,
  ``api_route``, ``websocket``, ``add_api_route(path, fn)``,
  ``add_route``, ``Route(path, endpoint=fn)``, ``HTTPEndpoint`` methods);
  Flask / Quart (``@app.route``, ``@bp.post``, ``add_url_rule(rule,
  endpoint, view_func)``, ``MethodView`` methods); Django (views named in
  ``path()`` / ``re_path()`` / ``url()``, ``View`` / DRF ``APIView`` /
  ``ViewSet`` methods, ``@api_view``, ``@require_POST`` and friends);
  aiohttp (``@routes.post``, ``router.add_post(path, fn)``); LangServe
  ``add_routes(app, runnable)`` (the runnable is served); Chainlit
  ``@cl.on_message``.
* Queues: Celery ``@app.task`` / ``@shared_task``, Dramatiq ``@actor``,
  Kafka consumer loops (kafka-python ``KafkaConsumer``, aiokafka
  ``AIOKafkaConsumer``, confluent-kafka ``Consumer``: a function iterating
  or polling one), RabbitMQ ``basic_consume(queue, on_message_callback)``
  (pika) and aio-pika ``queue.consume(cb)`` / ``queue.iterator()``, SQS
  ``receive_message`` polling loops, Google Pub/Sub ``subscribe(path,
  callback=cb)``, and AWS Lambda handlers (a module-level ``def
  handler(event, context)``).

Names checked against the public source of fastapi 0.115 (``fastapi.FastAPI``,
``fastapi.APIRouter``, ``fastapi.routing.APIRouter.add_api_route``),
starlette 1.10.0 (installed: ``starlette.applications.Starlette``,
``starlette.routing.Route``, ``starlette.endpoints.HTTPEndpoint``),
flask 3.1 (``flask.Flask.add_url_rule(rule, endpoint, view_func)``,
``flask.views.MethodView``), django 5.x (``django.urls.path``), DRF 3.15,
aiohttp 3.14.5 (installed), celery 5.4 (``celery.Celery.task``,
``celery.shared_task``), pika 1.3 (``basic_consume(queue,
on_message_callback, ...)``), kafka-python 2.x, aiokafka 0.11,
confluent-kafka 2.x (2026-12-02).

Nothing here imports the scanned code or these frameworks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Iterator

import libcst as cst

from resume_audit.facts.model import ClassInfo, FunctionInfo, ModuleFacts
from resume_audit.facts.syntax import argument, keyword, string_value
from resume_audit.facts.walk import visit_fast
from resume_audit.handlers.packages import HTTP_PACKAGES, QUEUE_PACKAGES, SERVING_WORDS, SQS_PACKAGES

if TYPE_CHECKING:
    from resume_audit.analysis.project import Project

#: MCP servers: every ``@mcp.tool()`` is a request handler of the clients that call it
MCP_SERVERS = frozenset(
    {"mcp.server.fastmcp.FastMCP", "mcp.server.FastMCP", "fastmcp.FastMCP", "fastmcp.server.FastMCP"}
)

#: Objects whose ``.get/.post/.route(...)`` decorators register HTTP handlers.
APP_TYPES = frozenset(
    {
        "fastapi.FastAPI",
        "fastapi.applications.FastAPI",
        "fastapi.APIRouter",
        "fastapi.routing.APIRouter",
        "starlette.applications.Starlette",
        "starlette.routing.Router",
        "flask.Flask",
        "flask.app.Flask",
        "flask.Blueprint",
        "flask.blueprints.Blueprint",
        "quart.Quart",
        "quart.app.Quart",
        "quart.Blueprint",
        "quart.blueprints.Blueprint",
        "aiohttp.web.RouteTableDef",
        "aiohttp.web_routedef.RouteTableDef",
        "aiohttp.web.Application",
        "aiohttp.web_app.Application",
        "sanic.Sanic",
        "litestar.Litestar",
    }
)
#: Decorator methods on an app object that register a route handler.
ROUTE_DECORATORS = frozenset(
    {
        "get",
        "post",
        "put",
        "patch",
        "delete",
        "head",
        "options",
        "trace",
        "api_route",
        "route",
        "websocket",
        "websocket_route",
        "view",
    }
)
#: ``app.<method>(..., handler)``: the method and where the handler goes (positional index, keyword).
ROUTE_REGISTRATIONS: dict[str, tuple[int, str]] = {
    "add_api_route": (1, "endpoint"),  # FastAPI
    "add_api_websocket_route": (1, "endpoint"),
    "add_route": (
        1,
        "route",
    ),  # Starlette add_route(path, route), aiohttp add_route(method, path, handler) handled below
    "add_websocket_route": (1, "route"),
    "add_url_rule": (2, "view_func"),  # Flask/Quart add_url_rule(rule, endpoint, view_func)
    "add_get": (1, "handler"),  # aiohttp router
    "add_post": (1, "handler"),
    "add_put": (1, "handler"),
    "add_patch": (1, "handler"),
    "add_delete": (1, "handler"),
}
#: Route objects whose second argument (or ``endpoint=``/``view=``) is a handler.
ROUTE_OBJECTS = frozenset(
    {
        "starlette.routing.Route",
        "starlette.routing.WebSocketRoute",
        "fastapi.routing.APIRoute",
        "django.urls.path",
        "django.urls.re_path",
        "django.conf.urls.url",
        "aiohttp.web.post",
        "aiohttp.web.get",
        "aiohttp.web.put",
        "aiohttp.web.patch",
        "aiohttp.web.delete",
        "aiohttp.web.route",
    }
)
#: Decorators that by themselves mark a function as a request or message handler.
HANDLER_DECORATORS: dict[str, str] = {
    "rest_framework.decorators.api_view": "Django REST framework view",
    "django.views.decorators.http.require_POST": "Django view",
    "django.views.decorators.http.require_http_methods": "Django view",
    "django.views.decorators.http.require_GET": "Django view",
    "django.views.decorators.csrf.csrf_exempt": "Django view",
    "chainlit.on_message": "Chainlit message handler",
    "chainlit.action_callback": "Chainlit action callback",
    "celery.shared_task": "Celery task",
    "celery.app.shared_task": "Celery task",
    "dramatiq.actor": "Dramatiq actor",
}
#: Objects whose ``.task`` decorator registers a Celery task.
CELERY_APPS = frozenset({"celery.Celery", "celery.app.Celery", "celery.app.base.Celery"})
#: Class-based views: every HTTP-verb method is a handler.
VIEW_BASES = frozenset(
    {
        "django.views.View",
        "django.views.generic.View",
        "django.views.generic.base.View",
        "rest_framework.views.APIView",
        "rest_framework.viewsets.ViewSet",
        "rest_framework.viewsets.ModelViewSet",
        "rest_framework.viewsets.GenericViewSet",
        "rest_framework.generics.GenericAPIView",
        "flask.views.MethodView",
        "flask.views.View",
        "quart.views.MethodView",
        "starlette.endpoints.HTTPEndpoint",
        "starlette.endpoints.WebSocketEndpoint",
        "aiohttp.web.View",
    }
)
VIEW_METHODS = frozenset(
    {
        "get",
        "post",
        "put",
        "patch",
        "delete",
        "dispatch",
        "dispatch_request",
        "create",
        "update",
        "partial_update",
        "destroy",
        "list",
        "retrieve",
        "on_receive",
    }
)
#: Kafka consumers: a function that iterates or polls one is a consumer loop.
KAFKA_CONSUMERS = frozenset(
    {"kafka.KafkaConsumer", "kafka.consumer.KafkaConsumer", "aiokafka.AIOKafkaConsumer", "confluent_kafka.Consumer"}
)
CONSUMER_POLL_METHODS = frozenset({"poll", "consume", "getone", "getmany"})
#: Apps whose construction in a module makes that module a served app.
APP_CONSTRUCTORS = APP_TYPES | CELERY_APPS | MCP_SERVERS | frozenset({"celery.Celery", "dramatiq.Worker"})
LANGSERVE_ADD_ROUTES = frozenset({"langserve.add_routes", "langserve.server.add_routes"})


#: The handler kind of a Streamlit page's top-level code (see :func:`session_shared`).
STREAMLIT_RUN = "Streamlit script run"


def session_state_values(module: ModuleFacts, key: str) -> list[cst.BaseExpression]:
    """Values a Streamlit page stores under ``key`` in ``st.session_state`` (attribute or item
    assignment, ``setdefault``)."""
    out: list[cst.BaseExpression] = []

    def is_session_state(expr: cst.BaseExpression) -> bool:
        return isinstance(expr, cst.Attribute) and expr.attr.value == "session_state"

    class _V(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for t in node.targets:
                tgt = t.target
                if isinstance(tgt, cst.Attribute) and tgt.attr.value == key and is_session_state(tgt.value):
                    out.append(node.value)
                elif isinstance(tgt, cst.Subscript) and is_session_state(tgt.value) and tgt.slice:
                    el = tgt.slice[0].slice
                    if isinstance(el, cst.Index) and string_value(el.value) == key:
                        out.append(node.value)

        def visit_Call(self, node: cst.Call) -> None:
            f = node.func
            if (
                isinstance(f, cst.Attribute)
                and f.attr.value == "setdefault"
                and is_session_state(f.value)
                and len(node.args) == 2
            ):
                if string_value(node.args[0].value) == key:
                    out.append(node.args[1].value)

    visit_fast(module.tree, _V())
    return out


def session_shared(
    value: cst.BaseExpression | None,
    scope: FunctionInfo | None,
    module: ModuleFacts,
    project: "Project",
    depth: int = 0,
) -> bool:
    """Is a Streamlit page's ``thread_id`` the same for every browser session: a literal, a
    module constant, or a ``st.session_state`` entry only ever set to a literal? A per-session
    value (``str(uuid4())`` kept in session state) is not: Streamlit runs one script run per
    session at a time, so such a thread is never resumed from two runs at once."""
    if value is None or depth > 5:
        return False
    if isinstance(value, (cst.SimpleString, cst.ConcatenatedString, cst.Integer)):
        return isinstance(value, cst.Integer) or string_value(value) is not None
    if isinstance(value, cst.Name):
        found = project.resolver(module).binding_value(value.value, scope, module.order(value))
        return (
            found is not None
            and found[0].kind == "assign"
            and session_shared(found[0].value, found[1], module, project, depth + 1)
        )
    key = None
    if (
        isinstance(value, cst.Attribute)
        and isinstance(value.value, cst.Attribute)
        and value.value.attr.value == "session_state"
    ):
        key = value.attr.value
    elif (
        isinstance(value, cst.Subscript)
        and isinstance(value.value, cst.Attribute)
        and value.value.attr.value == "session_state"
        and value.slice
    ):
        el = value.slice[0].slice
        key = string_value(el.value) if isinstance(el, cst.Index) else None
    if key is not None:
        values = session_state_values(module, key)
        return bool(values) and all(session_shared(v, None, module, project, depth + 1) for v in values)
    return False


@dataclass(frozen=True)
class Handler:
    """A function that runs once per request or message."""

    function: FunctionInfo
    #: what kind of entry point it is, for messages: "FastAPI route", "Celery task", ...
    kind: str
    #: the decorator, registration call or loop that makes it one
    node: cst.CSTNode
    #: the module ``node`` is in (a urls.py can register a view of views.py)
    module: ModuleFacts


@dataclass(frozen=True)
class ServedPath:
    """How a function is reached from a handler: ``calls[i]`` leads into the next function."""

    handler: Handler
    calls: tuple[cst.Call, ...]
    modules: tuple[ModuleFacts, ...]


class _Index:
    def __init__(self, project: "Project") -> None:
        self.project = project
        self.handlers: dict[int, Handler] = {}
        self.serving_modules: set[int] = set()
        self._serving: dict[int, ModuleFacts] = {}
        # only modules that can serve are parsed for handlers: those importing a web or queue
        # framework, SQS pollers, and files defining a Lambda-style handler(event, context)
        for module in project.modules_mentioning(SERVING_WORDS):
            self._index_module(module)

    # -- collection -------------------------------------------------------
    def _serve(self, module: ModuleFacts) -> None:
        self.serving_modules.add(id(module))
        self._serving[id(module)] = module

    def _add(self, fn: FunctionInfo | None, kind: str, node: cst.CSTNode, module: ModuleFacts) -> None:
        if fn is None or id(fn) in self.handlers:
            return
        self.handlers[id(fn)] = Handler(fn, kind, node, module)
        self._serve(fn.module)

    def _index_module(self, module: ModuleFacts) -> None:
        uses_web = module.uses_any(HTTP_PACKAGES)
        uses_queue = module.uses_any(QUEUE_PACKAGES)
        polls_sqs = module.uses_any(SQS_PACKAGES)
        resolver = self.project.resolver(module)
        if uses_web and module.uses_any(("streamlit", "gradio", "chainlit", "langserve")):
            self._serve(module)
        if module.uses_any(("streamlit",)):
            # Streamlit re-runs the page's top-level code on every interaction of every session
            first = next(
                (st for st in module.tree.body if "streamlit" in module.code(st)),
                module.tree.body[0] if module.tree.body else module.tree,
            )
            self._add(module.script_body, STREAMLIT_RUN, first, module)
        for fn in module.functions:
            for dec in fn.decorators:
                kind = self._decorator_kind(dec.target, dec.call, fn, module, uses_web)
                if kind is not None:
                    self._add(fn, kind, dec.node, module)
                    break
            if fn.class_info is not None and fn.is_method and fn.name in VIEW_METHODS:
                base = self._view_base(fn.class_info, 0)
                if base is not None:
                    self._add(fn, f"{base} method", fn.node.name, module)
            if (uses_queue or polls_sqs) and id(fn) not in self.handlers:
                loop = self._consumer_loop(fn, module)
                if loop is not None:
                    self._add(fn, loop[0], loop[1], module)
            if (
                fn.parent is None
                and fn.class_info is None
                and fn.param_names()[:2] == ["event", "context"]
                and len(fn.param_names()) == 2
            ):
                self._add(fn, "AWS Lambda handler", fn.node.name, module)
        for call in module.all_calls:
            names = resolver.call_names(call.node, call.function)
            if names & APP_CONSTRUCTORS:
                self._serve(module)
            self._registration(call.node, call.function, names, module, uses_web, uses_queue)

    def _decorator_kind(
        self, target: cst.BaseExpression, call: cst.Call | None, fn: FunctionInfo, module: ModuleFacts, uses_web: bool
    ) -> str | None:
        resolver = self.project.resolver(module)
        names = resolver.names(target, fn.parent)
        for name in names:
            if name in HANDLER_DECORATORS:
                return HANDLER_DECORATORS[name]
        if not isinstance(target, cst.Attribute):
            return None
        method = target.attr.value
        owner_types = self._types(target.value, fn.parent, module)
        if method == "task" and owner_types & CELERY_APPS:
            return "Celery task"
        if method in ("tool", "resource", "prompt") and owner_types & MCP_SERVERS:
            return f"MCP {method} handler"
        if method in ROUTE_DECORATORS:
            if owner_types & APP_TYPES:
                return f"{_framework(owner_types & APP_TYPES)} route handler"
            # the app object comes from somewhere we cannot type: trust the shape
            # ``@x.post("/path")`` in a module that imports a web framework
            if uses_web and call is not None and not owner_types:
                path = string_value(argument(call, 0, "path")) or string_value(argument(call, 0, "rule"))
                if path is not None and path.startswith("/"):
                    return "route handler"
        if method in ("on_message", "action_callback") and module.uses_any(("chainlit",)):
            return "Chainlit message handler"
        return None

    def _types(self, expr: cst.BaseExpression, scope: FunctionInfo | None, module: ModuleFacts) -> set[str]:
        """What ``expr`` is an instance of, following module variables across the project."""
        out: set[str] = set()
        for name in self.project.resolver(module).names(expr, scope):
            out.add(name)
            followed = module_variable_type(name, self.project)
            if followed is not None:
                out.add(followed)
        return out

    def _view_base(self, cls: ClassInfo, depth: int) -> str | None:
        if depth > 5:
            return None
        resolver = self.project.resolver(cls.module)
        for base in cls.node.bases:
            names = resolver.names(base.value, None)
            if names & VIEW_BASES:
                return sorted(names & VIEW_BASES)[0].rsplit(".", 1)[-1]
            for n in names:
                found = self.project.lookup(n, near=cls.module)
                if isinstance(found, ClassInfo) and found is not cls:
                    inner = self._view_base(found, depth + 1)
                    if inner is not None:
                        return inner
        return None

    def _consumer_loop(self, fn: FunctionInfo, module: ModuleFacts) -> tuple[str, cst.CSTNode] | None:
        resolver = self.project.resolver(module)
        for call in fn.calls:
            f = call.node.func
            if not isinstance(f, cst.Attribute):
                continue
            method = f.attr.value
            if method in CONSUMER_POLL_METHODS and self._types(f.value, fn, module) & KAFKA_CONSUMERS:
                return "Kafka consumer loop", call.node
            if method == "receive_message" and any(n.startswith("boto3") for n in resolver.call_names(call.node, fn)):
                return "SQS consumer loop", call.node
            if method == "iterator" and module.uses_any(("aio_pika",)):
                return "RabbitMQ consumer loop", call.node
        for node in _iter_fors(fn.node.body):
            if self._types(node.iter, fn, module) & KAFKA_CONSUMERS:
                return "Kafka consumer loop", node
        return None

    def _registration(
        self,
        call: cst.Call,
        scope: FunctionInfo | None,
        names: set[str],
        module: ModuleFacts,
        uses_web: bool,
        uses_queue: bool,
    ) -> None:
        f = call.func
        if names & ROUTE_OBJECTS:
            target = argument(call, 1, "endpoint") or keyword_value(call, "view")
            self._add_target(target, scope, module, "route handler", call)
            return
        if names & LANGSERVE_ADD_ROUTES:
            self._serve(module)
            return
        if not isinstance(f, cst.Attribute):
            return
        method = f.attr.value
        if method in ROUTE_REGISTRATIONS and uses_web:
            index, kw = ROUTE_REGISTRATIONS[method]
            if method == "add_route" and module.uses_any(("aiohttp",)):
                index = 2
            target = keyword_value(call, kw) or _positional(call, index)
            self._add_target(target, scope, module, "route handler", call)
            return
        if method == "basic_consume" and uses_queue:
            target = keyword_value(call, "on_message_callback") or keyword_value(call, "consumer_callback")
            candidates = [target] if target is not None else [a.value for a in call.args if a.keyword is None]
            for c in candidates:
                self._add_target(c, scope, module, "RabbitMQ consumer callback", call)
            return
        if method == "consume" and module.uses_any(("aio_pika",)):
            self._add_target(
                _positional(call, 0) or keyword_value(call, "callback"),
                scope,
                module,
                "RabbitMQ consumer callback",
                call,
            )
            return
        if method == "subscribe" and module.uses_any(("google.cloud.pubsub", "google.cloud.pubsub_v1", "nats")):
            self._add_target(
                keyword_value(call, "callback") or keyword_value(call, "cb") or _positional(call, 1),
                scope,
                module,
                "message subscriber callback",
                call,
            )

    def _add_target(
        self,
        target: cst.BaseExpression | None,
        scope: FunctionInfo | None,
        module: ModuleFacts,
        kind: str,
        node: cst.CSTNode,
    ) -> None:
        if target is None:
            return
        if (
            isinstance(target, cst.Call)
            and isinstance(target.func, cst.Attribute)
            and target.func.attr.value == "as_view"
        ):
            # Django/Flask class-based view: its verb methods were indexed from the class
            return
        for name in self.project.resolver(module).names(target, scope):
            fn = self.project.function(name, near=module)
            if fn is not None and fn.name != "__init__":
                self._add(fn, kind, node, module)
                return

    # -- queries ----------------------------------------------------------
    def reached(self) -> dict[int, ServedPath]:
        """Every project function a handler reaches (the handler itself, its nested
        functions, and what they call through the project), with the first path found."""
        return self.project.cached("web", "reached", self._reach)

    def _reach(self) -> dict[int, ServedPath]:
        out: dict[int, ServedPath] = {}
        nested: dict[int, list[FunctionInfo]] = {}
        indexed: set[int] = set()

        def nested_in(fn: FunctionInfo) -> list[FunctionInfo]:
            if id(fn.module) not in indexed:
                indexed.add(id(fn.module))
                for other in fn.module.functions:
                    if other.parent is not None:
                        nested.setdefault(id(other.parent), []).append(other)
            return nested.get(id(fn), [])

        queue: list[tuple[FunctionInfo, ServedPath]] = []
        for h in self.handlers.values():
            path = ServedPath(h, (), ())
            out[id(h.function)] = path
            queue.append((h.function, path))
        while queue:
            fn, path = queue.pop(0)
            if len(path.calls) > 8:
                continue
            for inner in nested_in(fn):
                if id(inner) not in out:
                    out[id(inner)] = path
                    queue.append((inner, path))
            for call in fn.calls:
                for callee in self.project.callees(call, fn.module):
                    if id(callee) in out:
                        continue
                    nxt = ServedPath(path.handler, (*path.calls, call.node), (*path.modules, fn.module))
                    out[id(callee)] = nxt
                    queue.append((callee, nxt))
        return out

    def served_modules(self) -> set[int]:
        """Modules that serve requests, and every project module they import (transitively)."""
        return self.project.cached("web", "served-modules", self._serving_closure)

    def _serving_closure(self) -> set[int]:
        # forward over imports from the serving modules, parsing only what they import
        seen = set(self.serving_modules)
        stack = list(self._serving.values())
        while stack:
            cur = stack.pop()
            for imported in cur.imported_modules:
                parts = imported.split(".")
                for i in range(len(parts), 0, -1):
                    found = self.project.by_name.get(".".join(parts[:i]), ())
                    for m in found:
                        if id(m) not in seen:
                            seen.add(id(m))
                            stack.append(m)
                    if found:
                        break
        return seen


def _index(project: "Project") -> _Index:
    return project.cached("web", "index", lambda: _Index(project))


def handlers(project: "Project") -> list[Handler]:
    """Every request / message handler in the project."""
    return list(_index(project).handlers.values())


def handler_for(fn: FunctionInfo, project: "Project") -> Handler | None:
    """``fn`` itself if it is a handler."""
    return _index(project).handlers.get(id(fn))


def served_path(fn: FunctionInfo, project: "Project") -> ServedPath | None:
    """How ``fn`` runs per request / message: it is a handler, nested in one, or called
    (through project functions) from one. ``None`` when no handler reaches it."""
    return _index(project).reached().get(id(fn))


def module_serves(module: ModuleFacts, project: "Project") -> bool:
    """Does the module define handlers or construct an app / worker?"""
    return id(module) in _index(project).serving_modules


def module_is_served(module: ModuleFacts, project: "Project") -> bool:
    """Is the module part of a served app: it serves, or a serving module imports it (transitively)?"""
    return id(module) in _index(project).served_modules()


def module_variable_type(qualified: str, project: "Project") -> str | None:
    """``pkg.main.app`` (a module-level ``app = FastAPI()`` in another project module)
    -> ``fastapi.FastAPI``. ``pkg.main.app.post`` -> ``fastapi.FastAPI.post``."""
    parts = qualified.split(".")
    for i in range(len(parts) - 1, 0, -1):
        modules = project.by_name.get(".".join(parts[:i]))
        if not modules:
            continue
        module = modules[0]
        var, rest = parts[i], parts[i + 1 :]
        binding = None
        for b in module.module_bindings:
            if b.name == var and b.kind == "assign":
                binding = b
        if binding is None:
            return None
        value = binding.value.expression if isinstance(binding.value, cst.Await) else binding.value
        if not isinstance(value, cst.Call):
            return None
        names = project.resolver(module).call_names(value, None)
        if not names:
            return None
        return ".".join([sorted(names)[0], *rest])
    return None


# -- small helpers --------------------------------------------------------------


def keyword_value(call: cst.Call, name: str) -> cst.BaseExpression | None:
    arg = keyword(call, name)
    return arg.value if arg is not None else None


def _positional(call: cst.Call, index: int) -> cst.BaseExpression | None:
    i = 0
    for arg in call.args:
        if arg.keyword is None and not arg.star:
            if i == index:
                return arg.value
            i += 1
    return None


def _framework(types: Iterable[str]) -> str:
    top = sorted(types)[0].split(".")[0]
    return {
        "fastapi": "FastAPI",
        "starlette": "Starlette",
        "flask": "Flask",
        "quart": "Quart",
        "aiohttp": "aiohttp",
    }.get(top, top)


def _iter_fors(node: cst.CSTNode) -> Iterator[cst.For]:
    stack = [node]
    while stack:
        cur = stack.pop()
        if isinstance(cur, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(cur, cst.For):
            yield cur
        stack.extend(cur.children)
