"""HTTP frameworks: route decorators and registrations, class-based views, RPC servers.

Names checked against the public source of fastapi 0.115 (``fastapi.FastAPI``, ``fastapi.APIRouter``,
``APIRouter.add_api_route(path, endpoint)``), starlette 1.10 (``starlette.routing.Route(path, endpoint)``,
``starlette.endpoints.HTTPEndpoint``), flask 3.1 (``Flask.add_url_rule(rule, endpoint, view_func)``,
``flask.views.MethodView``), django 5.x (``django.urls.path(route, view)``), DRF 3.15, django-ninja 1.x
(``NinjaAPI.post``), channels 4 (``AsyncWebsocketConsumer.receive``), aiohttp 3.x (``web.post(path,
handler)``, ``app.router.add_post(path, handler)``, ``RouteTableDef.post``), python-socketio 5
(``AsyncServer.on``/``event``), jsonrpcserver 5 (``@method``), functions-framework 3, azure-functions 1.x.
"""

from __future__ import annotations

from resume_audit.handlers.catalog import HandlerShape, Registration

DECORATOR, CALL, SUBCLASS = Registration.DECORATOR, Registration.CALL, Registration.SUBCLASS_METHOD

#: objects whose ``.get/.post/.route(...)`` decorators register a route handler, by framework
APPS: dict[str, tuple[str, ...]] = {
    "FastAPI": ("fastapi.FastAPI", "fastapi.applications.FastAPI", "fastapi.APIRouter", "fastapi.routing.APIRouter"),
    "Starlette": ("starlette.applications.Starlette", "starlette.routing.Router"),
    "Flask": ("flask.Flask", "flask.app.Flask", "flask.Blueprint", "flask.blueprints.Blueprint"),
    "Quart": ("quart.Quart", "quart.app.Quart", "quart.Blueprint", "quart.blueprints.Blueprint"),
    "aiohttp": (
        "aiohttp.web.RouteTableDef",
        "aiohttp.web_routedef.RouteTableDef",
        "aiohttp.web.Application",
        "aiohttp.web_app.Application",
    ),
    "sanic": ("sanic.Sanic",),
    "litestar": ("litestar.Litestar",),
    "django-ninja": ("ninja.NinjaAPI", "ninja.Router"),
}
#: the decorator methods on those objects that register a handler
ROUTE_DECORATORS = (
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
)
#: ``app.<method>(..., handler)`` on those objects: the method and where the handler goes
ROUTE_REGISTRATIONS: dict[str, tuple[int, str]] = {
    "add_api_route": (1, "endpoint"),  # FastAPI
    "add_api_websocket_route": (1, "endpoint"),
    "add_route": (1, "route"),  # Starlette add_route(path, route)
    "add_websocket_route": (1, "route"),
    "add_url_rule": (2, "view_func"),  # Flask/Quart add_url_rule(rule, endpoint, view_func)
}
#: aiohttp's router (``app.router``): ``add_post(path, handler)``, ``add_route(method, path, handler)``
AIOHTTP_ROUTER = (
    "aiohttp.web.Application.router",
    "aiohttp.web_app.Application.router",
    "aiohttp.web.UrlDispatcher",
    "aiohttp.web_urldispatcher.UrlDispatcher",
)
AIOHTTP_ADD = {"add_get": 1, "add_post": 1, "add_put": 1, "add_patch": 1, "add_delete": 1, "add_route": 2}
#: class-based views: every HTTP-verb method is a handler
VIEW_BASES = (
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
)
VIEW_METHODS = (
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
)

PACKAGES = (
    "fastapi",
    "starlette",
    "flask",
    "quart",
    "django",
    "rest_framework",
    "aiohttp",
    "litestar",
    "sanic",
    "ninja",
)


def _routes() -> tuple[HandlerShape, ...]:
    out: list[HandlerShape] = []
    for framework, types in APPS.items():
        out.append(
            HandlerShape(
                framework,
                f"{framework} route handler",
                DECORATOR,
                tuple(f"{t}.{m}" for t in types for m in ROUTE_DECORATORS),
                PACKAGES,
            )
        )
        for method, (position, keyword) in ROUTE_REGISTRATIONS.items():
            out.append(
                HandlerShape(
                    framework,
                    "route handler",
                    CALL,
                    tuple(f"{t}.{method}" for t in types),
                    PACKAGES,
                    position=position,
                    keyword=keyword,
                )
            )
    for method, position in AIOHTTP_ADD.items():
        out.append(
            HandlerShape(
                "aiohttp",
                "route handler",
                CALL,
                tuple(f"{r}.{method}" for r in AIOHTTP_ROUTER),
                PACKAGES,
                position=position,
                keyword="handler",
            )
        )
    return tuple(out)


SHAPES: tuple[HandlerShape, ...] = (
    *_routes(),
    HandlerShape(
        "Starlette/Django/aiohttp",
        "route handler",
        CALL,
        (
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
        ),
        PACKAGES,
        position=1,
        keyword="endpoint",
    ),
    HandlerShape(
        "Django", "route handler", CALL, ("django.urls.path", "django.urls.re_path"), PACKAGES, keyword="view"
    ),
    HandlerShape("aiohttp", "route handler", CALL, ("aiohttp.web.route",), PACKAGES, position=2, keyword="handler"),
    HandlerShape(
        "aiohttp", "route handler", CALL, ("aiohttp.web.post", "aiohttp.web.get"), PACKAGES, keyword="handler"
    ),
    HandlerShape(
        "Django REST framework",
        "Django REST framework view",
        DECORATOR,
        ("rest_framework.decorators.api_view",),
        PACKAGES,
    ),
    HandlerShape(
        "Django",
        "Django view",
        DECORATOR,
        (
            "django.views.decorators.http.require_POST",
            "django.views.decorators.http.require_http_methods",
            "django.views.decorators.http.require_GET",
            "django.views.decorators.csrf.csrf_exempt",
        ),
        PACKAGES,
    ),
    HandlerShape(
        "Django/DRF/Flask/Starlette", "class-based view method", SUBCLASS, VIEW_BASES, PACKAGES, methods=VIEW_METHODS
    ),
    HandlerShape(
        "Django Channels",
        "Channels consumer",
        SUBCLASS,
        (
            "channels.generic.websocket.AsyncWebsocketConsumer",
            "channels.generic.websocket.WebsocketConsumer",
            "channels.generic.websocket.AsyncJsonWebsocketConsumer",
            "channels.generic.websocket.JsonWebsocketConsumer",
        ),
        ("channels",),
        methods=("receive", "receive_json", "websocket_receive"),
    ),
    HandlerShape(
        "litestar",
        "litestar route handler",
        DECORATOR,
        tuple(f"litestar.{m}" for m in ("get", "post", "put", "patch", "delete", "route", "websocket")),
        ("litestar",),
    ),
    HandlerShape(
        "Socket.IO",
        "Socket.IO event handler",
        DECORATOR,
        tuple(f"socketio.{s}.{m}" for s in ("Server", "AsyncServer") for m in ("on", "event")),
        ("socketio",),
    ),
    HandlerShape(
        "JSON-RPC",
        "JSON-RPC method",
        DECORATOR,
        ("jsonrpcserver.method", "fastapi_jsonrpc.Entrypoint.method"),
        ("jsonrpcserver", "fastapi_jsonrpc"),
    ),
    HandlerShape(
        "Google Cloud Functions",
        "Cloud Function",
        DECORATOR,
        ("functions_framework.http", "functions_framework.cloud_event"),
        ("functions_framework",),
    ),
    HandlerShape(
        "Azure Functions",
        "Azure Function",
        DECORATOR,
        ("azure.functions.FunctionApp.*", "azure.functions.Blueprint.*"),
        ("azure.functions",),
    ),
)
