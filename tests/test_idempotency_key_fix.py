"""Where the RA101/RA103 idempotency-key fix is offered and where it must not be: a key shared by
two different payments (a loop, two calls of one API) or built from what a re-run computes anew
(an LLM reply) would be wrong, so the fix is withheld or leaves those parts out."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from conftest import scan_tree, write_tree

from resume_audit.config.settings import Config

HEADER = """
import sqlite3

import stripe
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import StateGraph

"""
FOOTER = """

builder = StateGraph(dict)
builder.add_node("pay", pay)
builder.set_entry_point("pay")
graph = builder.compile(checkpointer=SqliteSaver(sqlite3.connect("payments.db", check_same_thread=False)))
"""


def _fix_of(tmp_path: Path, body: str):
    write_tree(tmp_path, {"graph.py": HEADER + textwrap.dedent(body).strip("\n") + FOOTER})
    result = scan_tree(tmp_path, Config(select=["RA103"]))
    assert result.findings
    [autofix] = {f.autofix for f in result.findings}  # every finding of the file alike
    return autofix


def _key(autofix) -> str:
    [edit] = [e for e in autofix.edits if "idempotency_key=" in e.replacement]
    return edit.replacement


@pytest.mark.parametrize(
    "body,why",
    [
        (
            """
     def pay(state):
         for item in state["items"]:
             stripe.Charge.create(amount=item["cents"], currency="eur")
         return {}
     """,
            "in a loop every iteration would send the same key",
        ),
        (
            """
     def pay(state):
         stripe.Charge.create(amount=state["a"], currency="eur")
         stripe.Charge.create(amount=state["b"], currency="eur")
         return {}
     """,
            "two calls of one API in one node",
        ),
        (
            """
     def pay(state, **extra):
         options = {"currency": "eur"}
         stripe.Charge.create(amount=state["a"], **options)
         return {}
     """,
            "**kwargs might hold a key already",
        ),
        (
            """
     def pay(state, cents=100):
         stripe.Charge.create(amount=cents, currency="eur")
         return {}
     """,
            "a required config cannot follow a parameter with a default",
        ),
        (
            """
     def charge(cents):
         stripe.Charge.create(amount=cents, currency="eur")

     def pay(state):
         charge(state["cents"])
         return {}
     """,
            "through a helper: the key belongs in the helper, which other callers share",
        ),
    ],
)
def test_no_fix_where_a_key_would_be_wrong(tmp_path: Path, body: str, why: str) -> None:
    assert _fix_of(tmp_path, body) is None, why


def test_what_a_re_run_computes_anew_stays_out_of_the_key(tmp_path: Path) -> None:
    autofix = _fix_of(
        tmp_path,
        """
        def pay(state, config):
            total = state["cents"] + state["tip"]
            memo = llm.invoke(state["order"]).content
            stripe.Charge.create(amount=total, currency="eur", description=memo, customer=state.get("customer"))
            return {}
        """,
    )
    assert autofix is not None and autofix.safety.value == "unsafe"
    key = _key(autofix)
    # the thread, the node, the API; total (from state), the literal and the customer; not memo
    assert (
        'config["configurable"]["thread_id"], "pay", "stripe.Charge.create", "amount", total, "currency", "eur", '
        '"customer", state.get("customer")' in key
    )
    assert "memo" not in key and "description" not in key
    # the node already takes config: no parameter is added
    assert not any(e.replacement.startswith(", config") for e in autofix.edits)


def test_a_module_that_binds_config_or_hashlib_otherwise_gets_no_fix(tmp_path: Path) -> None:
    assert (
        _fix_of(
            tmp_path,
            """
        config = {"region": "eu"}

        def pay(state):
            stripe.Charge.create(amount=state["cents"], currency="eur")
            return {}
        """,
        )
        is None
    )
    assert (
        _fix_of(
            tmp_path,
            """
        hashlib = None

        def pay(state, config):
            stripe.Charge.create(amount=state["cents"], currency="eur")
            return {}
        """,
        )
        is None
    )
