"""What the catalog's qualified names cannot say: handlers recognised by shape, and consumer loops.

The catalog (:mod:`resume_audit.handlers.known`) matches registrations whose receiver the project
model can type. Two kinds of serving code need more:

* a registration on a receiver nobody can type (an ``app`` handed in by a factory of another
  library) -- trusted by its shape where the module imports a web framework: ``@x.post("/path")``,
  ``x.add_api_route(path, fn)``;
* a function that *is* a consumer because of what it does, not how it is registered: it polls or
  iterates a Kafka consumer, polls SQS with ``receive_message``, iterates an aio-pika queue; and the
  callbacks of RabbitMQ ``basic_consume`` / aio-pika ``consume`` / Pub/Sub ``subscribe``.

Names checked against pika 1.3 (``basic_consume(queue, on_message_callback, ...)``), kafka-python
2.x, aiokafka 0.11, confluent-kafka 2.x and google-cloud-pubsub 2.x (2026-12-02).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterator

import libcst as cst

from resume_audit.facts.model import FunctionInfo, ModuleFacts
from resume_audit.facts.syntax import argument, keyword, positional, string_value
from resume_audit.handlers.known.web import AIOHTTP_ADD, ROUTE_DECORATORS, ROUTE_REGISTRATIONS
from resume_audit.handlers.known.web import PACKAGES as WEB_PACKAGES

if TYPE_CHECKING:
    from resume_audit.analysis.project import Project

#: Kafka consumers: a function that iterates or polls one is a consumer loop.
KAFKA_CONSUMERS = frozenset(
    {"kafka.KafkaConsumer", "kafka.consumer.KafkaConsumer", "aiokafka.AIOKafkaConsumer", "confluent_kafka.Consumer"}
)
CONSUMER_POLL_METHODS = frozenset({"poll", "consume", "getone", "getmany"})

#: a function found by shape: (the function, its kind, the node that shows it, the module of that node)
Found = tuple[FunctionInfo, str, cst.CSTNode, ModuleFacts]
#: what an expression may be, by qualified name (the matcher's :meth:`~resume_audit.handlers.matcher.Matcher.qualified_names`)
Names = Callable[[cst.BaseExpression, "FunctionInfo | None", ModuleFacts], set[str]]
#: the project functions an expression may be (the matcher's :meth:`~resume_audit.handlers.matcher.Matcher.functions`)
Functions = Callable[[cst.BaseExpression | None, "FunctionInfo | None", ModuleFacts], list[FunctionInfo]]


def untyped_route(
    dec_target: cst.BaseExpression, call: cst.Call | None, owner_names: set[str], module: ModuleFacts
) -> str | None:
    """``@x.post("/path")`` on an ``x`` nobody can type, in a module importing a web framework; and
    Chainlit's ``@cl.on_message`` where ``cl`` is not resolved."""
    if not isinstance(dec_target, cst.Attribute):
        return None
    method = dec_target.attr.value
    if method in ROUTE_DECORATORS and not owner_names and call is not None and module.uses_any(WEB_PACKAGES):
        path = string_value(argument(call, 0, "path")) or string_value(argument(call, 0, "rule"))
        if path is not None and path.startswith("/"):
            return "route handler"
    if method in ("on_message", "action_callback") and module.uses_any(("chainlit",)):
        return "Chainlit message handler"
    return None


def registrations(
    call: cst.Call, scope: FunctionInfo | None, module: ModuleFacts, functions: Functions
) -> Iterator[tuple[FunctionInfo, str]]:
    """Handlers registered by method name where the receiver is not typed: ``add_api_route``,
    ``add_url_rule``, aiohttp ``add_post`` in a web module; RabbitMQ and Pub/Sub callbacks."""
    f = call.func
    if not isinstance(f, cst.Attribute):
        return
    method = f.attr.value
    targets: list[tuple[cst.BaseExpression | None, str]] = []
    if module.uses_any(WEB_PACKAGES) and (method in ROUTE_REGISTRATIONS or method in AIOHTTP_ADD):
        index, kw = ROUTE_REGISTRATIONS.get(method, (AIOHTTP_ADD.get(method, 1), "handler"))
        if method == "add_route" and module.uses_any(("aiohttp",)):
            index, kw = 2, "handler"
        targets.append((_keyword_value(call, kw) or _positional(call, index), "route handler"))
    elif method == "basic_consume" and module.uses_any(("pika", "aio_pika")):
        target = _keyword_value(call, "on_message_callback") or _keyword_value(call, "consumer_callback")
        candidates = [target] if target is not None else [a.value for a in call.args if a.keyword is None]
        targets.extend((c, "RabbitMQ consumer callback") for c in candidates)
    elif method == "consume" and module.uses_any(("aio_pika",)):
        targets.append((_positional(call, 0) or _keyword_value(call, "callback"), "RabbitMQ consumer callback"))
    elif method == "subscribe" and module.uses_any(("google.cloud.pubsub", "google.cloud.pubsub_v1", "nats")):
        targets.append(
            (
                _keyword_value(call, "callback") or _keyword_value(call, "cb") or _positional(call, 1),
                "message subscriber callback",
            )
        )
    for target, kind in targets:
        for fn in functions(target, scope, module)[:1]:
            yield fn, kind


def consumer_loop(
    fn: FunctionInfo, module: ModuleFacts, project: "Project", names: Names
) -> tuple[str, cst.CSTNode] | None:
    """Is ``fn`` a consumer loop: it polls or iterates a Kafka consumer, polls SQS, iterates an aio-pika queue?"""
    resolver = project.resolver(module)
    for call in fn.calls:
        f = call.node.func
        if not isinstance(f, cst.Attribute):
            continue
        method = f.attr.value
        if method in CONSUMER_POLL_METHODS and names(f.value, fn, module) & KAFKA_CONSUMERS:
            return "Kafka consumer loop", call.node
        if method == "receive_message" and any(n.startswith("boto3") for n in resolver.call_names(call.node, fn)):
            return "SQS consumer loop", call.node
        if method == "iterator" and module.uses_any(("aio_pika",)):
            return "RabbitMQ consumer loop", call.node
    for node in _iter_fors(fn.node.body):
        if names(node.iter, fn, module) & KAFKA_CONSUMERS:
            return "Kafka consumer loop", node
    return None


def _keyword_value(call: cst.Call, name: str) -> cst.BaseExpression | None:
    arg = keyword(call, name)
    return arg.value if arg is not None else None


def _positional(call: cst.Call, index: int) -> cst.BaseExpression | None:
    arg = positional(call, index)
    return arg.value if arg is not None else None


def _iter_fors(node: cst.CSTNode) -> Iterator[cst.For]:
    stack = [node]
    while stack:
        cur = stack.pop()
        if isinstance(cur, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(cur, cst.For):
            yield cur
        stack.extend(cur.children)
