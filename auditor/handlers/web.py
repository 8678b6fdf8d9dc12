"""Which code serves requests: the functions a framework runs once per delivery, and the modules of a served app.

RA302 (a resume delivered from a handler with no dedupe), RA303 (a thread id shared by every caller)
and RA601 (an in-memory checkpointer behind interrupts in a served app) need to know which functions
run once per incoming request, update or message -- and so can run concurrently, in several worker
processes, and be re-delivered -- and which modules belong to a served application.

What registers a handler is data: the handler catalog (:mod:`resume_audit.handlers.known`: web
frameworks, bots, task queues, chat UIs, MCP and A2A servers, serverless entry points) and the
project's own ``handlers = [...]`` entries, matched by :mod:`resume_audit.handlers.matcher`. What the
catalog cannot say by qualified name -- a route on an app nobody can type, a Kafka or SQS polling
loop, a RabbitMQ callback -- is found by :mod:`resume_audit.handlers.fallbacks`. This module indexes
both once per scan and answers the rules' questions (:func:`served_path`, :func:`module_is_served`).

Nothing here imports the scanned code or these frameworks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from resume_audit.facts.model import FunctionInfo, ModuleFacts
from resume_audit.handlers import fallbacks
from resume_audit.handlers.catalog import Concurrency, HandlerShape
from resume_audit.handlers.known import BUILTIN
from resume_audit.handlers.known.apps import MCP_SERVERS, STREAMLIT_RUN
from resume_audit.handlers.known.queues import CELERY_APPS
from resume_audit.handlers.known.web import APPS
from resume_audit.handlers.matcher import Matcher, Shapes
from resume_audit.handlers.packages import HTTP_PACKAGES, QUEUE_PACKAGES, SERVING_WORDS, SQS_PACKAGES

if TYPE_CHECKING:
    from resume_audit.analysis.project import Project

__all__ = [
    "HTTP_PACKAGES",
    "QUEUE_PACKAGES",
    "SERVING_WORDS",
    "SQS_PACKAGES",
    "STREAMLIT_RUN",
    "Handler",
    "ServedPath",
    "handlers",
    "handler_for",
    "served_path",
    "module_serves",
    "module_is_served",
]

#: Apps whose construction in a module makes that module a served app.
APP_CONSTRUCTORS = frozenset(
    {t for types in APPS.values() for t in types} | set(CELERY_APPS) | set(MCP_SERVERS) | {"dramatiq.Worker"}
)
LANGSERVE_ADD_ROUTES = frozenset({"langserve.add_routes", "langserve.server.add_routes"})


@dataclass(frozen=True)
class Handler:
    """A function that runs once per request or message."""

    function: FunctionInfo
    #: what kind of entry point it is, for messages: "FastAPI route handler", "Celery task", ...
    kind: str
    #: the decorator, registration call or loop that makes it one
    node: cst.CSTNode
    #: the module ``node`` is in (a urls.py can register a view of views.py)
    module: ModuleFacts
    #: what one delivery means for it
    concurrency: Concurrency = Concurrency.CONCURRENT
    #: the catalog entry that matched; None when found by shape (an untyped route, a consumer loop)
    shape: HandlerShape | None = None
    #: the qualified name that matched the entry (``aiogram.Dispatcher.message``)
    matched: str | None = None

    @property
    def label(self) -> str:
        """``aiogram handler 'on_approve'``; a page's top-level code by its file (``Streamlit script run of app.py``)."""
        if self.function is self.function.module.script_body:
            return f"{self.kind} of {self.function.module.display_path}"
        return f"{self.kind} '{self.function.qualname}'"

    @property
    def why(self) -> str:
        """The catalog entry (or the shape) that makes it a handler, for listings."""
        if self.shape is None:
            return f"by shape: {self.kind}"
        origin = "" if self.shape.source == "built-in" else f" [{self.shape.source}]"
        return f"{self.shape.framework}: {self.shape.describe(self.matched)}{origin}"


@dataclass(frozen=True)
class ServedPath:
    """How a function is reached from a handler: ``calls[i]`` leads into the next function."""

    handler: Handler
    calls: tuple[cst.Call, ...]
    modules: tuple[ModuleFacts, ...]


class _Index:
    def __init__(self, project: "Project") -> None:
        self.project = project
        own = tuple(project.handler_shapes)
        # the project's own entries first: a function both match is reported as the user named it;
        # a built-in shape of a framework no file of the project imports cannot match anything, and
        # asking what a receiver is for its methods (``queue.enqueue``) can walk a large tree
        present = tuple(s for s in BUILTIN if not s.packages or any(project.files_mentioning(w) for w in s.words))
        self.matcher = Matcher(project, Shapes((*own, *present)))
        self.handlers: dict[int, Handler] = {}
        self.serving_modules: set[int] = set()
        self._serving: dict[int, ModuleFacts] = {}
        # only modules that can serve are parsed for handlers: those importing a framework of the
        # catalog, SQS pollers, files defining a Lambda-style handler(event, context), and those
        # holding the words of the project's own entries
        words = (*SERVING_WORDS, *(w for s in own for w in s.words))
        for module in project.modules_mentioning(tuple(dict.fromkeys(words))):
            self._index_module(module)

    # -- collection -------------------------------------------------------
    def _serve(self, module: ModuleFacts) -> None:
        self.serving_modules.add(id(module))
        self._serving[id(module)] = module

    def _add(
        self,
        fn: FunctionInfo | None,
        kind: str,
        node: cst.CSTNode,
        module: ModuleFacts,
        shape: HandlerShape | None = None,
        matched: str | None = None,
    ) -> None:
        if fn is None or id(fn) in self.handlers:
            return
        concurrency = shape.concurrency if shape is not None else Concurrency.CONCURRENT
        self.handlers[id(fn)] = Handler(fn, kind, node, module, concurrency, shape, matched)
        self._serve(fn.module)

    def _index_module(self, module: ModuleFacts) -> None:
        matcher = self.matcher
        if module.uses_any(HTTP_PACKAGES) and module.uses_any(("streamlit", "gradio", "chainlit", "langserve")):
            self._serve(module)
        for match in matcher.matches(module):
            self._add(match.function, match.shape.kind, match.node, match.module, match.shape, match.matched)
        polls = module.uses_any(QUEUE_PACKAGES) or module.uses_any(SQS_PACKAGES)
        for fn in module.functions:
            if id(fn) in self.handlers:
                continue
            for dec in fn.decorators:
                owner = (
                    matcher.qualified_names(dec.target.value, fn.parent, module)
                    if isinstance(dec.target, cst.Attribute)
                    else set()
                )
                kind = fallbacks.untyped_route(dec.target, dec.call, owner, module)
                if kind is not None:
                    self._add(fn, kind, dec.node, module)
                    break
            if polls and id(fn) not in self.handlers:
                loop = fallbacks.consumer_loop(fn, module, self.project, matcher.qualified_names)
                if loop is not None:
                    self._add(fn, loop[0], loop[1], module)
        resolver = self.project.resolver(module)
        for call in module.all_calls:
            names = resolver.call_names(call.node, call.function)
            if names & APP_CONSTRUCTORS:
                self._serve(module)
            if names & LANGSERVE_ADD_ROUTES:
                self._serve(module)
            for fn, kind in fallbacks.registrations(call.node, call.function, module, matcher.functions):
                self._add(fn, kind, call.node, module)

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
