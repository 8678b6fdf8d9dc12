"""A pydantic-graph 1.x approval run persisted with FileStatePersistence.

``Prepare`` fires ``prepare_order`` and hands over to ``Approve``; the run
stops before ``Approve`` (``park_at``) until a human answers; the answer
reaches ``Approve`` as ``ctx.deps``; ``Charge`` fires ``charge_card``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic_graph import BaseNode, End, GraphRunContext
from pydantic_graph.graph import Graph


def prepare_order(order_id: int) -> None:
    """A non-idempotent effect before the approval."""


def charge_card(order_id: int) -> None:
    """The gated, non-idempotent effect."""


@dataclass
class Order:
    order_id: int = 7
    steps: list[str] = field(default_factory=list)


@dataclass
class Prepare(BaseNode[Order, str, str]):
    async def run(self, ctx: GraphRunContext[Order, str]) -> "Approve":
        prepare_order(ctx.state.order_id)
        ctx.state.steps.append("prepared")
        return Approve()


@dataclass
class Approve(BaseNode[Order, str, str]):
    async def run(self, ctx: GraphRunContext[Order, str]) -> "Charge | End[str]":
        ctx.state.steps.append(f"answer:{ctx.deps}")
        return Charge() if ctx.deps == "approve" else End("rejected")


@dataclass
class Charge(BaseNode[Order, str, str]):
    async def run(self, ctx: GraphRunContext[Order, str]) -> End[str]:
        charge_card(ctx.state.order_id)
        ctx.state.steps.append("charged")
        return End("charged")


approval_graph = Graph(nodes=(Prepare, Approve, Charge))


def build() -> dict[str, Any]:
    return {"graph": approval_graph, "start": Prepare(), "state": Order(), "park_at": ["Approve"]}
