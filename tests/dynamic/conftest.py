"""Fixtures for the dynamic-stage tests (helpers live in ``dyn_helpers``)."""

from __future__ import annotations

import pytest

from dyn_helpers import reachable_pg_dsn, run_sweep


@pytest.fixture(scope="session")
def sweep():
    return run_sweep


@pytest.fixture(scope="session")
def pg_dsn() -> str:
    return reachable_pg_dsn()
