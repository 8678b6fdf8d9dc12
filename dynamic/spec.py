"""What the parent tells a child process to do (picklable, no user objects)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from resume_audit.dynamic.adapters.base import StoreSettings
from resume_audit.dynamic.confinement import ConfinementPolicy
from resume_audit.dynamic.effect_spec import NO_STUB, EffectSpec
from resume_audit.dynamic.environment import ChildEnvironment
from resume_audit.dynamic.target import TargetSpec

if TYPE_CHECKING:
    from resume_audit.dynamic.child.context import Context

#: ``input`` of a sweep nobody wrote an input for: each child builds one from the program's input
#: schema (:mod:`resume_audit.dynamic.child.synthesis`), the same in every child
AUTO_INPUT: Any = type(
    "AutoInput", (), {"__repr__": lambda self: "AUTO_INPUT", "__reduce__": lambda self: "AUTO_INPUT"}
)()


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
    #: keyword arguments a factory target is called with (``SweepRequest.factory_kwargs``)
    factory_kwargs: tuple[tuple[str, Any], ...] = ()
    #: ``stub-reads``: calls stubbed like effects but never recorded (no ledger row, no kill point)
    reads: tuple[EffectSpec, ...] = ()
    #: environment variables the program needs at import (``env`` in the audit table), set before it loads
    env: tuple[tuple[str, str], ...] = ()
    #: the child's whole environment (an allow-list, see :mod:`resume_audit.dynamic.environment`)
    environment: ChildEnvironment = ChildEnvironment()
    #: the kernel layers every child tries, and whether it must have them (``--require-confinement``)
    confinement: ConfinementPolicy = ConfinementPolicy()


@dataclass(frozen=True)
class ChildSpec:
    """One child process: a role, a cell directory, a store, and where to crash."""

    #: what the child is for, in its directory's name and its result: a built-in role
    #: (:data:`resume_audit.dynamic.child.roles.ROLES`) unless ``role_entry`` is given
    role: str
    run: RunSpec
    cell_dir: str
    workdir: str
    store: StoreSettings
    phase: str
    thread_id: str = "resume-audit"
    kill_at: str | None = None
    form: str | None = None  # fork probe: "bare" | "map"
    #: crash: "sigkill" (the process kills itself at ``kill_at``) or "exception" (raises there)
    crash_mode: str = "sigkill"
    #: recover: deliver the restore once more after it completed (the stray probe without parks)
    stray: bool = False
    #: fork, setup, racer: the pause point probed (its index among every park of the protocol)
    gate: int = 0
    #: setup, racer: the ``--resume`` value answering that gate, or a breakpoint continued with ``invoke(None)``
    value_index: int = 0
    breakpoint: bool = False
    #: fork: the second answer (None: the run's ``fork_resume``)
    fork_value: Any = None
    #: a probe's own role: the module-level function the child runs with its context (it reaches the
    #: child by reference, so a probe brings its child's code in its own module)
    role_entry: Callable[[Context], None] | None = None

    @property
    def ledger_path(self) -> str:
        return f"{self.cell_dir}/ledger.sqlite"

    @property
    def program_dir(self) -> str:
        """The program's working directory, shared by every process of the cell: a restarted worker
        runs where the crashed one ran, so a file it wrote by a relative path (a SQLite saver's
        ``checkpoints.sqlite``, a JSON state file) is there for the next one -- and for a racer."""
        return f"{self.cell_dir}/cwd"

    @property
    def result_path(self) -> str:
        return f"{self.workdir}/result.json"
