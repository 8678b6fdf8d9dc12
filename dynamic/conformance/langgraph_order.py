"""An order-approval graph: a human approves, then the card is charged.

`charge_card` is a module-level effect with no idempotency key, so a crash
after the charge but before the `charge` node's write is durable charges the
card again on resume (RA701). Parking at `review` is durable, so the
interrupt path itself is exactly-once.

The state is a pydantic model, and `charge` -- the last node -- writes a value
its schema forbids (`None` in `receipt: list[str]`): the CV probe. A framework
that validates what it persists refuses the write; one that does not persists
it without a word (RA706).
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from pydantic import BaseModel


class OrderState(BaseModel):
    order_id: int
    amount: int = 0
    approved: bool = False
    charge_id: str = ""
    receipt: list[str] = []
    log: Annotated[list[str], operator.add] = []


def charge_card(order_id: int, amount: int) -> str:
    """Stands in for a payment provider call (stubbed or recorded by the sweep)."""
    return f"ch_{order_id}_{amount}"


def prepare(state: OrderState) -> dict[str, Any]:
    return {"amount": 42, "log": ["prepared"]}


def review(state: OrderState) -> dict[str, Any]:
    answer = interrupt({"question": "approve order?", "order_id": state.order_id, "amount": state.amount})
    return {"approved": answer == "approve", "log": [f"reviewed: {answer}"]}


def charge(state: OrderState) -> dict[str, Any]:
    if not state.approved:
        return {"log": ["not charged"]}
    charge_id = charge_card(state.order_id, state.amount)
    # the CV probe: a receipt line the provider did not send, persisted as None
    return {"charge_id": charge_id, "receipt": [f"charged {state.amount}", None], "log": ["charged"]}


def build_graph(checkpointer: Any) -> Any:
    builder = StateGraph(OrderState)
    builder.add_node("prepare", prepare)
    builder.add_node("review", review)
    builder.add_node("charge", charge)
    builder.add_edge(START, "prepare")
    builder.add_edge("prepare", "review")
    builder.add_edge("review", "charge")
    builder.add_edge("charge", END)
    return builder.compile(checkpointer=checkpointer)
