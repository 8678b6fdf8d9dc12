"""Where a sweep's cells live and how their children are started.

One :class:`Workbench` per sweep: it hands out a numbered directory per cell
(its store, its ledger, one working directory per child), the store settings
for the chosen backend, and starts children through the fork server. Probes
run every child through it, so a cancelled sweep starts nothing new.
"""

from __future__ import annotations

import os
import re
import secrets
import threading
from typing import Any

from resume_audit.dynamic.adapters import REGISTRY, adapter_for, installed
from resume_audit.dynamic.adapters.base import StoreSettings
from resume_audit.dynamic.killpoints import Event
from resume_audit.dynamic.parent.runner import ChildRun, run_child, run_racers
from resume_audit.dynamic.spec import ChildSpec, RunSpec


class SweepCancelled(Exception):
    """Raised in cell workers once the sweep has been abandoned."""


def preload_for(framework: str | None) -> list[str]:
    """Modules the fork server imports: the framework's, or every installed framework's when unknown."""
    if framework is not None:
        return adapter_for(framework).preload_modules()
    out: list[str] = []
    for name in REGISTRY:
        if installed(name):
            out.extend(adapter_for(name).preload_modules())
    return out


class Workbench:
    """State of one sweep: where cells live, how children are started."""

    def __init__(self, run: RunSpec, backend: str, dsn: str | None, timeout: float, root: str) -> None:
        self.run = run
        self.backend = backend
        self.dsn = dsn
        self.timeout = timeout
        self.root = root
        self.token = secrets.token_hex(4)
        self.schemas: list[str] = []
        self.preload = preload_for(run.framework)
        self._n = 0
        self._lock = threading.Lock()
        #: set when the sweep is abandoned (Ctrl-C): no further child is started
        self.cancelled = threading.Event()

    def cell_dir(self, label: str) -> str:
        with self._lock:
            self._n += 1
            n = self._n
        slug = re.sub(r"[^A-Za-z0-9]+", "-", label).strip("-")[:60]
        path = os.path.join(self.root, f"{n:03d}-{slug}")
        os.makedirs(path, exist_ok=True)
        return path

    def store(self, cell_dir: str, write_order: str = "natural") -> StoreSettings:
        directory = os.path.join(cell_dir, "store")
        if self.backend == "sqlite":
            return StoreSettings("sqlite", os.path.join(cell_dir, "checkpoints.sqlite"), None, write_order, directory)
        if self.backend == "postgres":
            schema = f"ra_{self.token}_{os.path.basename(cell_dir)[:3]}"
            self.schemas.append(schema)
            return StoreSettings("postgres", self.dsn or "", schema, write_order, directory)
        if self.backend == "custom":
            return StoreSettings("custom", self.dsn or "", None, write_order, directory)
        return StoreSettings("memory", "", None, write_order, directory)

    def spec(self, role: str, cell_dir: str, store: StoreSettings, phase: str, n: int, **kw: Any) -> ChildSpec:
        return ChildSpec(
            role=role,
            run=self.run,
            cell_dir=cell_dir,
            workdir=os.path.join(cell_dir, f"p{n}-{role}"),
            store=store,
            phase=phase,
            **kw,
        )

    def child(self, spec: ChildSpec) -> ChildRun:
        if self.cancelled.is_set():
            raise SweepCancelled()
        return run_child(spec, self.preload, self.timeout)

    def racers(self, specs: list[ChildSpec]) -> list[ChildRun]:
        if self.cancelled.is_set():
            raise SweepCancelled()
        return run_racers(specs, self.preload, self.timeout)

    def crash_and_recover(
        self, label: str, point: Event, write_order: str = "natural", mode: str = "sigkill", stray: bool = False
    ) -> tuple[ChildRun, ChildRun | None, str]:
        """Crash at ``point`` (SIGKILL or an injected exception), then -- if it crashed -- recover in a fresh interpreter.

        With ``stray`` the recovering process then delivers the restore once
        more (the stray probe of frameworks without parks).
        """
        cell_dir = self.cell_dir(label)
        store = self.store(cell_dir, write_order)
        crash = self.child(self.spec("crash", cell_dir, store, "crash", 1, kill_at=point.name, crash_mode=mode))
        recover = None
        if crash.crashed:
            recover = self.child(self.spec("recover", cell_dir, store, "recover", 2, stray=stray))
        return crash, recover, cell_dir

    def drop_schemas(self) -> None:
        if not self.schemas or not self.dsn:
            return
        try:
            import psycopg

            with psycopg.connect(self.dsn, autocommit=True, connect_timeout=10) as conn:
                for schema in sorted(set(self.schemas)):
                    conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        except Exception:
            pass
