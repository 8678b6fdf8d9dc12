"""Helpers and fixtures for the dynamic-stage tests (imported as ``dyn_helpers``; no conftest here, so
the name ``conftest`` keeps meaning ``tests/conftest.py`` for the static tests).

Every test here runs real LangGraph graphs in real child processes with real
SIGKILLs; nothing of LangGraph is mocked. Sweeps are expensive (seconds), so
one sweep per (fixture, arguments) is run once per session and shared.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from resume_audit.dynamic.cells import Cell
from resume_audit.dynamic.parent.sweep import crash_sweep
from resume_audit.dynamic.report import SweepReport

REPO = Path(__file__).resolve().parents[2]
FIXTURES = "fixtures/dynamic/langgraph"
PG_DSN_ENV = "RESUME_AUDIT_PG_DSN"
#: what .ci/postgres.sh starts; tried when the env var is unset
LOCAL_PG_DSN = "postgresql://resume_audit:resume_audit@127.0.0.1:54329/resume_audit"

_CACHE: dict[tuple[str, str], SweepReport] = {}

# One fork server per test session, warm with every installed framework: the first sweep decides what it
# preloads, and a CrewAI child forked from a LangGraph-only server would import crewai (and lancedb) itself.
from resume_audit.dynamic.parent.runner import context as _context  # noqa: E402
from resume_audit.dynamic.parent.workbench import preload_for as _preload_for  # noqa: E402

_context(_preload_for(None))


def run_sweep(target: str, **kwargs) -> SweepReport:
    """``crash_sweep`` on ``fixtures/dynamic/langgraph/<target>``, from the repository root, memoised."""
    key = (target, json.dumps(kwargs, sort_keys=True, default=repr))
    if key not in _CACHE:
        old = os.getcwd()
        os.chdir(REPO)
        try:
            _CACHE[key] = crash_sweep(f"{FIXTURES}/{target}", **kwargs)
        finally:
            os.chdir(old)
    return _CACHE[key]


def cells(report: SweepReport, kind: str) -> list[Cell]:
    return [c for c in report.cells if c.kind == kind]


def cell(report: SweepReport, kind: str, name_part: str) -> Cell:
    found = [c for c in report.cells if c.kind == kind and name_part in c.name]
    assert len(found) == 1, f"expected one {kind} cell matching {name_part!r}, got {[c.name for c in found]}"
    return found[0]


def assert_same_text(a: str, b: str) -> None:
    """Equal, or fail with a unified diff of the two (stable reports are long)."""
    if a != b:
        import difflib

        diff = "".join(difflib.unified_diff(a.splitlines(True), b.splitlines(True), "first", "second", n=2))
        raise AssertionError(f"stable reports differ:\n{diff[:6000]}")


def not_passing(report: SweepReport, *kinds: str) -> list[tuple]:
    """(kind, name, verdict, detail, effects, node runs) of every cell of ``kinds`` that did not pass."""
    return [
        (c.kind, c.name, c.verdict, c.detail, c.effects, c.nodes, c.witness)
        for c in report.cells
        if c.kind in kinds and c.verdict != "pass"
    ]


def rules(report: SweepReport) -> list[str]:
    return sorted(f.rule_id for f in report.findings)


def reachable_pg_dsn() -> str:
    """A reachable PostgreSQL DSN, or a visible skip."""
    dsn = os.environ.get(PG_DSN_ENV)
    try:
        import psycopg
    except ImportError:  # pragma: no cover - psycopg is a test dependency
        pytest.skip("psycopg is not installed")
    if dsn:
        psycopg.connect(dsn, connect_timeout=10).close()  # set but unreachable: fail, do not skip
        return dsn
    try:
        psycopg.connect(LOCAL_PG_DSN, connect_timeout=3).close()
    except Exception as exc:
        pytest.skip(f"no PostgreSQL server reachable and ${PG_DSN_ENV} is unset (run .ci/postgres.sh): {exc}")
    return LOCAL_PG_DSN


@pytest.fixture(scope="session")
def sweep():
    """``run_sweep`` as a fixture (import it into a test module to use it)."""
    return run_sweep


@pytest.fixture(scope="session")
def pg_dsn() -> str:
    return reachable_pg_dsn()


def direct(tmp_path: Path, *phases: tuple[str, ...], env: dict[str, str] | None = None) -> list[str]:
    """Ground truth without the sweep: run ``tests/dynamic/direct_probe.py`` once per phase (each a
    fresh interpreter, some ending in a real SIGKILL) against one on-disk SqliteSaver; the effect
    calls it wrote, in order.

    A phase ``("race", N, module, factory, effects[, json_value])`` starts N processes together that
    each resume the park (``Command(resume=value)``, or ``invoke(None)`` without a value), in lockstep
    at every write to the saver (so each reads the park before any stores progress). The values ``interrupt()`` returned are in ``served(tmp_path)``.
    """
    tmp_path.mkdir(parents=True, exist_ok=True)
    ledger, db = tmp_path / "calls.txt", tmp_path / "runs.db"
    base = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO / FIXTURES), os.environ.get("PYTHONPATH", "")]),
        **(env or {}),
    }
    probe = str(REPO / "tests" / "dynamic" / "direct_probe.py")
    for index, phase in enumerate(phases):
        if phase[0] == "race":
            n, module, factory, effects, *value = phase[1:]
            kind = "resume" if value else "recover"
            barrier = tmp_path / f"barrier-{index}"
            barrier.mkdir()
            start_env = {
                **base,
                "RA_PROBE_BARRIER": f"{barrier}:{int(n)}",
            }  # racers in lockstep: every one reads the park before any stores progress
            procs = [
                subprocess.Popen(
                    [sys.executable, probe, kind, module, factory, effects, str(ledger), str(db), "t-1", *value],
                    env=start_env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                for _ in range(int(n))
            ]
            for proc in procs:
                _out, err = proc.communicate(timeout=120)
                assert proc.returncode == 0, (phase, proc.returncode, err[-2000:])
            continue
        name, module, factory, effects, *rest = phase
        proc = subprocess.run(
            [sys.executable, probe, name, module, factory, effects, str(ledger), str(db), "t-1", *rest],
            env=base,
            capture_output=True,
            text=True,
            timeout=120,
        )
        killed = bool(rest[1:]) and rest[1] != ""
        assert proc.returncode == (-9 if killed else 0), (phase, proc.returncode, proc.stderr[-2000:])
    return ledger.read_text().split() if ledger.exists() else []


def served(tmp_path: Path) -> list:
    """The values ``interrupt()`` returned in ``direct``'s processes, in order."""
    path = tmp_path / "calls.txt.served"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
