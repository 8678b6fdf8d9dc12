"""The same ground truth against a real PostgreSQL server (PostgresSaver 3.2.0)."""

from __future__ import annotations

from dyn_helpers import cell, cells, pg_dsn, rules, run_sweep  # noqa: F401 (fixtures)

ORDER = dict(effects=["order_approval:charge_card"], input={"order_id": 7}, resume=["approve"])
EFFECT = "order_approval.charge_card"


def test_order_approval_on_postgres(pg_dsn):
    report = run_sweep(
        "order_approval.py:build_graph",
        backend="postgres",
        dsn=pg_dsn,
        cells=["crash", "parked", "fork", "stray", "concurrent"],
        **ORDER,
    )
    assert report.backend == "postgres" and report.complete
    effect_cell = cell(report, "crash", f"resume 1: after effect {EFFECT} in node charge")
    assert effect_cell.verdict == "fail" and effect_cell.effects[EFFECT] == (1, 2)
    others = [c for c in cells(report, "crash") + cells(report, "parked") if c is not effect_cell]
    assert len(others) == 12 and all(c.verdict == "pass" for c in others)
    assert all(c.witness.served == ["approve", "approve"] for c in cells(report, "fork"))
    assert cell(report, "stray", "stray").verdict == "pass"
    two = cell(report, "concurrent", "2 concurrent")
    assert two.verdict == "fail" and two.effects[EFFECT] == (1, 2)
    assert rules(report) == ["RA701", "RA703", "RA703", "RA705"]


def test_cell_schemas_are_dropped(pg_dsn):
    import psycopg

    run_sweep("order_approval.py:build_graph", backend="postgres", dsn=pg_dsn, cells=["fork"], **ORDER)
    with psycopg.connect(pg_dsn) as conn:
        left = conn.execute(
            "SELECT count(*) FROM information_schema.schemata WHERE schema_name LIKE 'ra\\_%'"
        ).fetchone()[0]
    assert left == 0
