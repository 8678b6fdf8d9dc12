"""``resume-audit audit`` on a generated project of N LangGraph graphs, as a ratio against hand-written sweeps.

The project: N graphs (default 5) of 4-6 nodes each -- an intake, a review
node that posts to a webhook and parks at ``interrupt()``, a few pure steps, a
payout through an unkeyed HTTP helper -- each in its own module of one
package, with one effects module. The static stage finds an RA101 and an RA103
in every graph; the audit has to find the factories, plan each sweep (effects
from the findings, input from the TypedDict, the approving answer by dry
runs) and sweep them.

Baseline, measured in the same run: the N sweeps a user would write by hand
(``crash_sweep`` with the effects, input and answer given), one after another.
The ratio is what the audit's planning and the static scan cost on top.

Goal (issue 15): 5 graphs of 4-6 nodes audit in under 3 minutes on a two-core
machine. Run: ``python benchmarks/bench_audit.py [--graphs 5] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

EFFECTS = """
import requests


def notify(text: str) -> None:
    requests.post("https://hooks.example/desk", json={"text": text}, timeout=5)


def pay_out(claim: str, amount: int) -> str:
    return requests.post("https://pay.example/v1/payouts", json={"claim": claim, "amount": amount}, timeout=5).json()["id"]
"""

GRAPH = """
from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from .effects import notify, pay_out


class Claim(TypedDict, total=False):
    claim_id: str
    amount: int
    decision: str
    steps: int


def intake(state: Claim) -> dict:
    return {{"steps": 1}}


def review(state: Claim) -> dict:
    notify(f"claim {{state['claim_id']}} needs a decision")
    return {{"decision": interrupt({{"claim": state["claim_id"]}})}}

{extra_nodes}

def payout(state: Claim) -> dict:
    if state.get("decision") == "approve":
        pay_out(state["claim_id"], state["amount"])
    return {{}}


def build_graph(checkpointer=None):
    builder = StateGraph(Claim)
    builder.add_node("intake", intake)
    builder.add_node("review", review)
{add_steps}    builder.add_node("payout", payout)
    names = ["intake", "review", {extra_names} "payout"]
    builder.add_edge(START, names[0])
    for a, b in zip(names, names[1:]):
        builder.add_edge(a, b)
    builder.add_edge(names[-1], END)
    return builder.compile(checkpointer=checkpointer)
"""

STEP = """
def step_{n}(state: Claim) -> dict:
    return {{"steps": state.get("steps", 0) + 1}}
"""


def make_project(root: Path, graphs: int) -> list[str]:
    pkg = root / "claims"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "effects.py").write_text(EFFECTS)
    targets = []
    for g in range(graphs):
        extra = g % 3  # 4, 5 or 6 nodes
        nodes = "".join(STEP.format(n=n) for n in range(extra))
        names = "".join(f'"step_{n}", ' for n in range(extra))
        steps = "".join(f'    builder.add_node("step_{n}", step_{n})\n' for n in range(extra))
        (pkg / f"desk_{g}.py").write_text(
            textwrap.dedent(GRAPH.format(extra_nodes=nodes, extra_names=names, add_steps=steps))
        )
        targets.append(f"claims.desk_{g}:build_graph")
    return targets


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", type=int, default=5)
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ra-bench-audit-") as tmp:
        root = Path(tmp)
        targets = make_project(root, args.graphs)
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        # baseline: the hand-written sweeps (one warm-up sweep first, as the audit's own first child warms the server)
        script = textwrap.dedent(f"""
            import json, sys, time
            from resume_audit.dynamic import crash_sweep
            targets = {targets!r}
            kw = dict(effects=["claims.effects:notify", "claims.effects:pay_out"], stub=None,
                      input={{"claim_id": "c-1", "amount": 5}}, resume=["approve"], cwd={str(root)!r})
            crash_sweep(targets[0], cells=[], **kw)
            t = time.monotonic()
            found = sum(len(crash_sweep(t_, **kw).findings) for t_ in targets)
            print(json.dumps({{"seconds": time.monotonic() - t, "findings": found}}))
        """)
        t0 = time.monotonic()
        base = subprocess.run(
            [sys.executable, "-c", script], cwd=root, env=env, capture_output=True, text=True, check=True
        )
        baseline = json.loads(base.stdout.strip().splitlines()[-1])
        t1 = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "resume_audit", "audit", ".", "--format", "json", "--fail-on", "never"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
        )
        audit_s = time.monotonic() - t1
        if proc.returncode != 0:
            print(proc.stderr, file=sys.stderr)
            return 1
        data = json.loads(proc.stdout)
        swept = sum(1 for e in data["audit"]["entry_points"] if e["swept"])
        result = {
            "graphs": args.graphs,
            "swept": swept,
            "confirmations": data["audit"]["confirmations"],
            "audit_s": round(audit_s, 1),
            "hand_written_sweeps_s": round(baseline["seconds"], 1),
            "ratio": round(audit_s / baseline["seconds"], 2) if baseline["seconds"] else None,
            "goal_s": 180,
            "baseline_total_s": round(t1 - t0, 1),
        }
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"audit of {args.graphs} graphs: {result['audit_s']} s ({swept} swept, {result['confirmations']}); "
            f"hand-written sweeps of the same graphs: {result['hand_written_sweeps_s']} s; "
            f"ratio {result['ratio']}x; goal < {result['goal_s']} s"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
