"""Dynamic-stage benchmarks, reported as ratios against a baseline measured in the same run.

(a) sweep time per kill point versus one fresh-interpreter run of the same graph
    (goal <= 1.5x). The baseline is what a naive sweep would pay per process:
    ``python -c`` importing the graph module and running the interrupt protocol
    once on a fresh SqliteSaver. The sweep is ``crash_sweep(cells=["crash"])``
    -- one crashed child and one fresh recovery child per kill point -- timed
    end to end and divided by its number of kill points. The first sweep warms
    the fork server and is reported separately.

(b) instrumented-saver overhead versus the stock ``SqliteSaver`` over N full
    interrupt protocols (invoke to park, resume to completion, fresh database
    each time; goal <= 5 %). Each configuration runs in its own interpreter so
    the sweep's process-wide patches cannot leak into the stock baseline, and
    configurations are interleaved across repeats so drift hits all alike:

    - ``stock``: ``SqliteSaver``;
    - ``saver``: the same saver with the sweep's instrumented class swapped in
      (operation naming, kill-point check; no kill);
    - ``child``: everything a sweep child installs -- instrumented saver, saver
      sequencer and node-start drain, node-run and served-value recording and
      the effect wrapper, all writing the on-disk ledger.

Run: ``python benchmarks/bench_dynamic.py [--protocols 200] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURE_DIR = REPO / "fixtures" / "dynamic" / "langgraph"
TARGET = "fixtures/dynamic/langgraph/order_approval.py:build_graph"

FRESH_RUN = textwrap.dedent(
    """
    import sqlite3, sys, tempfile, os
    sys.path.insert(0, {fixture_dir!r})
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.types import Command
    import order_approval
    db = os.path.join(tempfile.mkdtemp(), "cp.sqlite")
    graph = order_approval.build_graph(SqliteSaver(sqlite3.connect(db, check_same_thread=False)))
    cfg = {{"configurable": {{"thread_id": "t"}}}}
    graph.invoke({{"order_id": 7}}, cfg)
    graph.invoke(Command(resume="approve"), cfg)
    """
)

PROTOCOLS = textwrap.dedent(
    """
    import os, sqlite3, sys, tempfile, time
    sys.path.insert(0, {fixture_dir!r})
    mode, n = sys.argv[1], int(sys.argv[2])
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.types import Command
    import order_approval
    root = tempfile.mkdtemp()
    if mode != "stock":
        from resume_audit.dynamic.adapters.base import Instruments
        from resume_audit.frameworks.langgraph.adapter import LangGraphAdapter, SaverProbe, instrument_saver
        from resume_audit.dynamic.killpoints import EventLog
        from resume_audit.dynamic.ledger import Ledger
        ledger = Ledger(os.path.join(root, "ledger.sqlite"))
        adapter = LangGraphAdapter()
    if mode == "child":
        from resume_audit.dynamic.child.effects import EffectSpec, install_effects
        events = EventLog()
        instruments = Instruments(ledger, events)
        from resume_audit.dynamic.adapters.base import StoreSettings
        adapter.prepare_process(instruments, StoreSettings("sqlite", os.path.join(root, "cp.sqlite")))
        install_effects([EffectSpec("order_approval", "charge_card")], ledger, events, adapter.effect_context)
    def protocol(i):
        db = os.path.join(root, f"cp{{i}}.sqlite")
        if mode == "child":
            instruments.events = EventLog()
            session = adapter.open(order_approval.build_graph, _store(db), instruments, "t", {{}})
            session.start({{"order_id": 7}})
            [intr] = session.durable_state().interrupts
            session.answer([(intr, "approve")])
            session.close()
            return
        saver = SqliteSaver(sqlite3.connect(db, check_same_thread=False))
        if mode == "saver":
            probe = SaverProbe(Instruments(ledger, EventLog()), defer=False)
            instrument_saver(saver, probe)
        graph = order_approval.build_graph(saver)
        cfg = {{"configurable": {{"thread_id": "t"}}}}
        graph.invoke({{"order_id": 7}}, cfg)
        graph.invoke(Command(resume="approve"), cfg)
        saver.conn.close()
    def _store(db):
        from resume_audit.dynamic.adapters.base import StoreSettings
        return StoreSettings("sqlite", db)
    protocol(-1)  # warm-up, outside the timing
    t0 = time.perf_counter()
    for i in range(n):
        protocol(i)
    print(time.perf_counter() - t0)
    """
)


def fresh_interpreter_run(repeats: int) -> list[float]:
    """Wall time of ``python -c <one protocol>`` (one unmeasured warm-up run first, for the OS page cache)."""
    code = FRESH_RUN.format(fixture_dir=str(FIXTURE_DIR))
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)
        times.append(time.perf_counter() - t0)
    return times


def sweep_per_kill_point(repeats: int) -> tuple[float, list[float], int]:
    from resume_audit.dynamic.parent.sweep import crash_sweep

    args = dict(effects=["order_approval:charge_card"], input={"order_id": 7}, resume=["approve"], cells=["crash"])
    os.chdir(REPO)
    t0 = time.perf_counter()
    report = crash_sweep(TARGET, **args)
    cold = (time.perf_counter() - t0) / report.kill_points
    warm = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        report = crash_sweep(TARGET, **args)
        warm.append((time.perf_counter() - t0) / report.kill_points)
    return cold, warm, report.kill_points


def protocols(mode: str, n: int) -> float:
    code = PROTOCOLS.format(fixture_dir=str(FIXTURE_DIR))
    out = subprocess.run([sys.executable, "-c", code, mode, str(n)], cwd=REPO, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"protocol benchmark ({mode}) failed:\n{out.stderr}")
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--protocols", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    ns = parser.parse_args()

    fresh = fresh_interpreter_run(max(5, ns.repeats))
    cold, warm, points = sweep_per_kill_point(ns.repeats)
    fresh_med = statistics.median(fresh)
    warm_med = statistics.median(warm)

    timings: dict[str, list[float]] = {"stock": [], "saver": [], "child": []}
    for r in range(ns.repeats):
        order = ["stock", "saver", "child"] if r % 2 == 0 else ["child", "saver", "stock"]
        for mode in order:
            timings[mode].append(protocols(mode, ns.protocols))
    med = {m: statistics.median(v) for m, v in timings.items()}
    result = {
        "cpu_count": os.cpu_count(),
        "a_kill_points": points,
        "a_fresh_interpreter_run_s": round(fresh_med, 4),
        "a_fresh_interpreter_runs_s": [round(x, 4) for x in fresh],
        "a_sweep_per_kill_point_s": round(warm_med, 4),
        "a_sweep_per_kill_point_cold_s": round(cold, 4),
        "a_ratio": round(warm_med / fresh_med, 3),
        "a_ratio_cold": round(cold / fresh_med, 3),
        "b_protocols": ns.protocols,
        "b_stock_s": round(med["stock"], 4),
        "b_saver_s": round(med["saver"], 4),
        "b_child_s": round(med["child"], 4),
        "b_saver_overhead": round(med["saver"] / med["stock"] - 1, 4),
        "b_child_overhead": round(med["child"] / med["stock"] - 1, 4),
        "b_raw": {m: [round(x, 4) for x in v] for m, v in timings.items()},
    }
    if ns.json:
        print(json.dumps(result, indent=2))
        return
    print(
        f"(a) fresh-interpreter run of the graph: {fresh_med:.3f} s (median of {len(fresh)}: "
        f"{', '.join(f'{x:.2f}' for x in fresh)})"
    )
    print(
        f"    crash sweep: {points} kill points, {warm_med:.3f} s per kill point warm (median of {len(warm)}), "
        f"{cold:.3f} s cold (fork server start included)"
    )
    print(
        f"    ratio per kill point / fresh run: {result['a_ratio']:.2f}x warm, {result['a_ratio_cold']:.2f}x cold (goal <= 1.5x)"
    )
    print(
        f"(b) {ns.protocols} interrupt protocols, median of {ns.repeats}: stock {med['stock']:.3f} s, "
        f"instrumented saver {med['saver']:.3f} s ({result['b_saver_overhead']:+.1%}), "
        f"full child instrumentation {med['child']:.3f} s ({result['b_child_overhead']:+.1%}) (goal <= 5 %)"
    )


if __name__ == "__main__":
    main()
