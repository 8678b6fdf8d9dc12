"""A synthetic monorepo for scan benchmarks: N files, a given share of them agent code.

Plain modules look like ordinary application code (classes, functions,
imports, comprehensions, string formatting, try/except); agent modules are
LangGraph graphs with nodes that reach effects through helpers in the plain
modules, interrupts, resumes with configs -- the shapes the rules look at.
Deterministic for a given seed.
"""

from __future__ import annotations

import random
from pathlib import Path

PLAIN = '''"""Module {name}: part of service {svc}."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

from {pkg}.{dep} import helper_{dep_i}

log = logging.getLogger(__name__)


@dataclass
class Record{i}:
    key: str
    values: list[int] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def total(self) -> int:
        return sum(v for v in self.values if v > 0)

    def to_json(self) -> str:
        return json.dumps({{"key": self.key, "values": self.values, "meta": self.meta}})


def helper_{i}(items: list[dict[str, Any]], limit: int = 10) -> list[Record{i}]:
    out = []
    for item in items[:limit]:
        try:
            rec = Record{i}(key=str(item["id"]), values=[int(x) for x in item.get("v", [])])
        except (KeyError, ValueError) as exc:
            log.warning("skipping %s: %s", item, exc)
            continue
        if rec.total() > {i} % 7:
            out.append(rec)
    return sorted(out, key=lambda r: (r.total(), r.key))


def summarise_{i}(records: list[Record{i}]) -> dict[str, int]:
    counts: dict[str, int] = {{}}
    for r in records:
        counts[r.key[:2]] = counts.get(r.key[:2], 0) + r.total()
    return {{k: v for k, v in counts.items() if v}}


class Service{i}:
    def __init__(self, name: str) -> None:
        self.name = name
        self.cache: dict[str, list[Record{i}]] = {{}}

    def run(self, payload: list[dict[str, Any]]) -> dict[str, int]:
        records = helper_{i}(payload)
        self.cache[self.name] = records
        return summarise_{i}(records) | {{"dep": len(helper_{dep_i}([]))}}
'''

NOTIFY = '''"""Outbound notifications."""

import requests
import stripe


def charge(customer: str, cents: int) -> str:
    return stripe.PaymentIntent.create(customer=customer, amount=cents, currency="eur").id


def notify(url: str, payload: dict) -> None:
    requests.post(url, json=payload, timeout=5)
'''

AGENT = '''"""Agent {i}: approval flow."""

import sqlite3
from typing import TypedDict

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from {pkg}.notify import charge, notify
from {pkg}.{dep} import helper_{dep_i}


class State{i}(TypedDict):
    customer: str
    cents: int
    approved: bool


def prepare(state: State{i}) -> dict:
    rows = helper_{dep_i}([{{"id": state["customer"], "v": [state["cents"]]}}])
    notify("https://hooks.example.com/{i}", {{"rows": len(rows)}})
    answer = interrupt({{"charge": state["cents"]}})
    return {{"approved": answer == "yes"}}


def pay(state: State{i}) -> dict:
    if state["approved"]:
        charge(state["customer"], state["cents"])
    return {{}}


def build():
    builder = StateGraph(State{i})
    builder.add_node("prepare", prepare)
    builder.add_node("pay", pay)
    builder.add_edge(START, "prepare")
    builder.add_edge("prepare", "pay")
    builder.add_edge("pay", END)
    return builder.compile(checkpointer=SqliteSaver(sqlite3.connect("agent{i}.db", check_same_thread=False)))


def change_answer(graph, thread_id: str, checkpoint_id: str, answer: str):
    config = {{"configurable": {{"thread_id": thread_id, "checkpoint_id": checkpoint_id}}}}
    return graph.invoke(Command(resume=answer), config)
'''


def generate(root: Path, files: int = 5000, agent_share: float = 0.02, seed: int = 7) -> list[Path]:
    """Write the tree under ``root``; returns the agent (framework-using) files."""
    rng = random.Random(seed)
    per_package = 100
    agents: list[Path] = []
    n_agents = max(1, int(files * agent_share))
    agent_slots = set(rng.sample(range(files), n_agents))
    for i in range(files):
        pkg = f"svc{i // per_package:03d}"
        pkg_dir = root / pkg
        if not (pkg_dir / "__init__.py").exists():
            pkg_dir.mkdir(parents=True, exist_ok=True)
            (pkg_dir / "__init__.py").write_text("")
            (pkg_dir / "notify.py").write_text(NOTIFY)
        base = (i // per_package) * per_package
        dep_i = base + rng.randrange(per_package)
        if i in agent_slots:
            while dep_i in agent_slots:
                dep_i = base + (dep_i + 1 - base) % per_package
            path = pkg_dir / f"agent_{i}.py"
            path.write_text(AGENT.format(i=i, pkg=pkg, dep=f"mod_{dep_i}", dep_i=dep_i))
            agents.append(path)
        else:
            while dep_i in agent_slots:
                dep_i = base + (dep_i + 1 - base) % per_package
            path = pkg_dir / f"mod_{i}.py"
            path.write_text(PLAIN.format(i=i, name=f"mod_{i}", svc=pkg, pkg=pkg, dep=f"mod_{dep_i}", dep_i=dep_i))
    return agents
