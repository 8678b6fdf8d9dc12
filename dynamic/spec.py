"""What the parent tells a child process to do (picklable, no user objects)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .adapters.base import StoreSettings
from .effects import NO_STUB, EffectSpec
from .target import TargetSpec

#: child roles, each a function in :mod:`auditor.dynamic.child`
ROLES = ("dry", "crash", "recover", "fork", "setup", "racer")


@dataclass(frozen=True)
class RunSpec:
    """The user's graph and protocol: the same for every child of a sweep."""

    target: TargetSpec
    effects: tuple[EffectSpec, ...]
    input: Any
    resume: tuple[Any, ...]
    fork_resume: Any
    config: dict[str, Any]
    stub: Any = NO_STUB
    allow_network: bool = False
    #: the framework the parent expects (sniffed from the target's source, or given); None: detect in the child
    framework: str | None = None
    #: per-effect stub values, ("module:function", value), overriding ``stub`` for that effect
    stubs: tuple[tuple[str, Any], ...] = ()
    #: ``--stub-llm``: the script's data (``LlmScript.to_data()``); None: chat models run as they are
    llm_script: dict[str, Any] | None = None
    #: address-space limit of every child in MB (RLIMIT_AS); 0: none
    memory_limit_mb: int = 0


@dataclass(frozen=True)
class ChildSpec:
    """One child process: a role, a cell directory, a store, and where to crash."""

    role: str
    run: RunSpec
    cell_dir: str
    workdir: str
    store: StoreSettings
    phase: str
    thread_id: str = "resume-audit"
    kill_at: str | None = None
    form: str | None = None  # fork probe: "bare" | "map"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ledger_path(self) -> str:
        return f"{self.cell_dir}/ledger.sqlite"

    @property
    def result_path(self) -> str:
        return f"{self.workdir}/result.json"
