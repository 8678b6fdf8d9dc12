"""The effect ledger: an on-disk SQLite file, separate from the checkpointer database.

It is the sweep's oracle, external to framework state: every call of a listed
effect, every node execution and every value ``interrupt()`` served is one
autocommitted INSERT, durable before the call returns. A kill is always
triggered after the INSERT, so the ledger holds at least every effect that
fired before the process died -- a duplicate read from it is a floor, never an
artefact of a lost record.

Durability: WAL with ``synchronous=NORMAL``. A committed row survives the
death of the process that wrote it (the failure the sweep injects); it is not
fsynced against power loss, which the sweep does not model.

One ledger is shared by every process of one cell (the crashed run, its fresh
recovery, the k racers), each tagging its rows with a ``phase``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

_SCHEMA = """
CREATE TABLE IF NOT EXISTS effects (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    phase TEXT NOT NULL, leg INTEGER, effect TEXT NOT NULL, node TEXT, step INTEGER,
    task TEXT, pid INTEGER NOT NULL, key TEXT, fired INTEGER NOT NULL, site TEXT
);
CREATE TABLE IF NOT EXISTS effect_keys (
    effect TEXT NOT NULL, key TEXT NOT NULL, PRIMARY KEY (effect, key)
);
CREATE TABLE IF NOT EXISTS node_runs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    phase TEXT NOT NULL, leg INTEGER, node TEXT NOT NULL, step INTEGER, task TEXT,
    pid INTEGER NOT NULL, attempt INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS served (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    phase TEXT NOT NULL, leg INTEGER, node TEXT, step INTEGER, pid INTEGER NOT NULL, value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS notes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    phase TEXT NOT NULL, pid INTEGER NOT NULL, kind TEXT NOT NULL, detail TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS interrupts (
    id TEXT PRIMARY KEY, idx INTEGER NOT NULL
);
"""


@dataclass(frozen=True)
class EffectRow:
    phase: str
    leg: int | None
    effect: str
    node: str | None
    step: int | None
    pid: int
    key: str | None
    fired: bool
    site: str | None = None  # "file:line" of the call in the user's code


@dataclass(frozen=True)
class NodeRun:
    phase: str
    leg: int | None
    node: str
    step: int | None
    task: str | None
    pid: int
    attempt: int


class Ledger:
    """Append-only record of what a cell's processes did; safe across threads and processes."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)
        self._conn.execute("PRAGMA busy_timeout = 60000")
        self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute("PRAGMA synchronous = NORMAL")
        with self._lock:
            self._conn.executescript(_SCHEMA)
        self.phase = "run"
        self.leg: int | None = None
        self.pid = os.getpid()

    # -- writes (each one autocommitted INSERT) ---------------------------------
    def record_effect(
        self,
        effect: str,
        node: str | None,
        step: int | None,
        task: str | None,
        key: str | None,
        site: str | None = None,
    ) -> bool:
        """Record one effect call; return whether it *fired*.

        A call keyed by an idempotency key the ledger has already seen for this
        effect is recorded but does not count as a firing: the provider
        deduplicates it, which is exactly what the key is for.
        """
        with self._lock:
            fired = True
            if key is not None:
                cur = self._conn.execute("INSERT OR IGNORE INTO effect_keys (effect, key) VALUES (?, ?)", (effect, key))
                fired = cur.rowcount == 1
            self._conn.execute(
                "INSERT INTO effects (phase, leg, effect, node, step, task, pid, key, fired, site) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (self.phase, self.leg, effect, node, step, task, self.pid, key, int(fired), site),
            )
        return fired

    def record_node_run(self, node: str, step: int | None, task: str | None, attempt: int) -> None:
        with self._lock:
            self._conn.execute(
                "INSERT INTO node_runs (phase, leg, node, step, task, pid, attempt) VALUES (?,?,?,?,?,?,?)",
                (self.phase, self.leg, node, step, task, self.pid, attempt),
            )

    def record_served(self, node: str | None, step: int | None, value_json: str) -> None:
        with self._lock:
            self._conn.execute(
                "INSERT INTO served (phase, leg, node, step, pid, value) VALUES (?,?,?,?,?,?)",
                (self.phase, self.leg, node, step, self.pid, value_json),
            )

    def note(self, kind: str, detail: str) -> None:
        with self._lock:
            self._conn.execute(
                "INSERT INTO notes (phase, pid, kind, detail) VALUES (?,?,?,?)", (self.phase, self.pid, kind, detail)
            )

    def interrupt_index(self, interrupt_id: str) -> int:
        """The protocol position of an interrupt: the index of the ``--resume`` value that answers it.

        Interrupt ids are stable for one task of one checkpoint, so a fresh
        process recovering a crashed run recognises an interrupt the crashed
        process already saw and answers it with the same value; an unseen one
        is the next in the protocol.
        """
        with self._lock:
            row = self._conn.execute("SELECT idx FROM interrupts WHERE id = ?", (interrupt_id,)).fetchone()
            if row is not None:
                return int(row[0])
            (count,) = self._conn.execute("SELECT COUNT(*) FROM interrupts").fetchone()
            self._conn.execute("INSERT INTO interrupts (id, idx) VALUES (?, ?)", (interrupt_id, count))
            return int(count)

    def value_index(self, interrupt_id: str) -> int:
        """The index of the ``--resume`` value answering the known interrupt ``interrupt_id``.

        Static breakpoints (ids starting ``breakpoint:``) are gates too, but
        are continued without a value, so they take no place among the values.
        """
        with self._lock:
            (count,) = self._conn.execute(
                "SELECT COUNT(*) FROM interrupts WHERE idx < (SELECT idx FROM interrupts WHERE id = ?) "
                "AND id NOT LIKE 'breakpoint:%'",
                (interrupt_id,),
            ).fetchone()
            return int(count)

    def reset_interrupts(self) -> None:
        """Forget interrupt positions: a run restarted from its input answers from the first value again."""
        with self._lock:
            self._conn.execute("DELETE FROM interrupts")

    # -- reads ------------------------------------------------------------------
    def effects(self, phases: Iterable[str] | None = None) -> list[EffectRow]:
        rows = self._select(
            "SELECT phase, leg, effect, node, step, pid, key, fired, site FROM effects ORDER BY seq", phases
        )
        return [EffectRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], bool(r[7]), r[8]) for r in rows]

    def node_runs(self, phases: Iterable[str] | None = None) -> list[NodeRun]:
        rows = self._select("SELECT phase, leg, node, step, task, pid, attempt FROM node_runs ORDER BY seq", phases)
        return [NodeRun(*r) for r in rows]

    def served(self, phases: Iterable[str] | None = None) -> list[tuple[str, int | None, str | None, Any]]:
        rows = self._select("SELECT phase, leg, node, value FROM served ORDER BY seq", phases)
        return [(r[0], r[1], r[2], json.loads(r[3])) for r in rows]

    def notes(self) -> list[tuple[str, str, str]]:
        with self._lock:
            return [tuple(r) for r in self._conn.execute("SELECT phase, kind, detail FROM notes ORDER BY seq")]

    def fired_counts(self, phases: Iterable[str] | None = None) -> Counter[str]:
        return Counter(e.effect for e in self.effects(phases) if e.fired)

    def call_counts(self, phases: Iterable[str] | None = None) -> Counter[str]:
        return Counter(e.effect for e in self.effects(phases))

    def node_counts(self, phases: Iterable[str] | None = None) -> Counter[str]:
        return Counter(r.node for r in self.node_runs(phases))

    def _select(self, sql: str, phases: Iterable[str] | None) -> list[tuple[Any, ...]]:
        with self._lock:
            rows = list(self._conn.execute(sql))
        if phases is None:
            return rows
        wanted = set(phases)
        return [r for r in rows if r[0] in wanted]

    def close(self) -> None:
        with self._lock:
            self._conn.close()


@contextlib.contextmanager
def cell_ledger(cell_dir: str) -> Iterator[Ledger]:
    """The ledger every child of a cell wrote to (``<cell_dir>/ledger.sqlite``), open for judging."""
    ledger = Ledger(os.path.join(cell_dir, "ledger.sqlite"))
    try:
        yield ledger
    finally:
        ledger.close()
