"""``SweepRequest``: every option of one crash sweep, in one place.

The CLI, the Python API (``crash_sweep``), the pytest plugin, conformance and
``audit`` all build one of these, so an option added here reaches all of them
and their defaults cannot drift apart again.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from resume_audit.dynamic.effect_spec import NO_STUB


@dataclass(frozen=True)
class Shard:
    """``K/N``: this run sweeps the K-th of N deterministic slices of the cells (1-based)."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> "Shard":
        try:
            k, n = (int(part) for part in text.split("/"))
        except ValueError:
            raise ValueError(f"--shard {text!r}: expected K/N, e.g. 2/4") from None
        if n < 1 or not 1 <= k <= n:
            raise ValueError(f"--shard {text!r}: K must be between 1 and N")
        return cls(k, n)

    def takes(self, position: int) -> bool:
        """Whether the cell job at ``position`` in the sweep's stable job order belongs to this shard."""
        return position % self.count == self.index - 1

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def to_data(self) -> str:
        return str(self)

    @classmethod
    def from_data(cls, data: str) -> "Shard":
        return cls.parse(data)


@dataclass(frozen=True)
class SweepRequest:
    """What to sweep and how. Field docs are the options' docs."""

    #: ``path/to/file.py:attr`` or ``package.module:attr``
    target: str
    #: ``module:function`` (or a LangChain tool object's name) whose calls the ledger records
    effects: tuple[str, ...] = ()
    #: the graph input
    input: Any = field(default_factory=dict)
    #: one answer per dynamic interrupt, in order (static breakpoints take none)
    resume: tuple[Any, ...] = ()
    #: the fork probe's alternative answer (default: derived from each gate's answer)
    fork_resume: Any = None
    #: extra ``configurable`` keys
    config: Mapping[str, Any] | None = None
    backend: str = "sqlite"
    dsn: str | None = None
    racers: int = 2
    #: seconds per child process, counted from its start
    timeout: float = 60.0
    #: replace every effect by a recorder returning this value (``NO_STUB``: run the real function)
    stub: Any = NO_STUB
    #: one stub value per effect (or read), ``{"tools:charge_card": {"id": "ch_1"}}``
    stubs: Mapping[str, Any] | None = None
    #: ``module:function`` calls stubbed (typed, or by ``stubs``) but not counted as effects: a search, a lookup
    stub_reads: tuple[str, ...] = ()
    #: environment variables set in every child before the program is imported (a setting it reads at import)
    env: Mapping[str, str] | None = None
    #: ``--stub-llm``: a script file, ``"plain"``, or a parsed ``LlmScript`` / its data
    stub_llm: Any = None
    allow_network: bool = False
    #: environment variables the children get besides the allow-list (``--pass-env NAME``), by name
    pass_env: Collection[str] = ()
    #: refuse to run the program when the kernel cannot confine its network and writes here
    require_confinement: bool = False
    keep_artifacts: bool = False
    #: restrict the probes (see ``CELL_KINDS``); the uninterrupted run always runs
    cells: Collection[str] | None = None
    framework: str | None = None
    crash_modes: Collection[str] = ("sigkill",)
    #: a LangGraph ``package.module:factory`` returning the user's own saver
    saver: str | None = None
    #: address-space limit of every child process, in MB (0: none); a graph exceeding it gets MemoryError
    memory_limit: int = 4096
    #: sweep one deterministic slice of the cells (``merge`` joins the slices)
    shard: Shard | None = None
    #: sweep as if run from this directory (default: the current one)
    cwd: str | None = None
    #: keyword arguments a factory target is called with, beside the sweep's checkpointer (``audit`` passes
    #: the literal ones the project's own callers pass, e.g. ``interrupt_before=["approve"]``)
    factory_kwargs: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:  # accept lists where tuples are kept (callers pass JSON-ish values)
        object.__setattr__(self, "effects", tuple(self.effects))
        object.__setattr__(self, "stub_reads", tuple(self.stub_reads))
        object.__setattr__(self, "resume", tuple(self.resume))
        object.__setattr__(self, "crash_modes", tuple(self.crash_modes))
        object.__setattr__(self, "pass_env", tuple(self.pass_env))
        if isinstance(self.shard, str):
            object.__setattr__(self, "shard", Shard.parse(self.shard))
