"""A checkpointed LangGraph agent that charges a card, then asks a human."""

from typing import TypedDict

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from agent.payments import charge_card


class State(TypedDict):
    amount: int
    approved: bool


def charge(state: State) -> dict:
    charge_card(state["amount"])
    answer = interrupt({"question": "ship it?"})
    return {"approved": bool(answer)}


builder = StateGraph(State)
builder.add_node("charge", charge)
builder.add_edge(START, "charge")
builder.add_edge("charge", END)
graph = builder.compile(checkpointer=SqliteSaver.from_conn_string("state.db"))


def run(thread_id: str) -> None:
    graph.invoke({"amount": 5}, {"configurable": {"thread_id": thread_id}}, durability="exit")
