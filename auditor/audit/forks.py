"""Does the program ever fork a thread? Asked of the static model, so RA703 is reported only where it can happen.

RA703 (a second answer at the same interrupt checkpoint is served the first) is
stock LangGraph behaviour (#6663): every graph with an ``interrupt()`` shows it
when the sweep's fork probe resumes one checkpoint twice. It hurts a program
only if the program itself resumes or runs at a ``checkpoint_id`` -- time
travel, "let the human change the answer", a fork endpoint. That is read off
the code: a run call (``invoke``/``stream``/...) or ``update_state`` whose
config carries ``checkpoint_id`` (inline, through a variable or helper, or a
state snapshot's ``.config``), as :mod:`resume_audit.analysis.configs` evaluates
it for RA201. Nothing is imported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from resume_audit.analysis.configs import ConfigEvaluator
from resume_audit.audit.modules import Modules
from resume_audit.discovery.walk import SourcePath
from resume_audit.facts.syntax import argument
from resume_audit.frameworks.langgraph.names import RUN_METHODS

if TYPE_CHECKING:
    from resume_audit.engine.scan import Analyzer

#: calls that act on the checkpoint their config names: a run from it, or a new branch written on it
_FORKING_METHODS = RUN_METHODS | frozenset({"update_state", "aupdate_state"})


@dataclass(frozen=True)
class ForkSite:
    """A call of the program's that addresses a ``checkpoint_id``: where a fork can happen."""

    path: str
    line: int
    call: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line} ({self.call})"


def fork_sites(analyzer: Analyzer, sources: Sequence[SourcePath], modules: Modules) -> list[ForkSite]:
    """Every call in the project that runs, resumes or updates a thread at a ``checkpoint_id``."""
    evaluator = ConfigEvaluator(analyzer.project)
    out: list[ForkSite] = []
    for display, facts, info, method in modules.method_calls(
        [(sp.path, sp.display) for sp in sources], _FORKING_METHODS
    ):
        config = argument(info.node, 0 if method in ("update_state", "aupdate_state") else 1, "config")
        if config is None:
            continue
        try:
            shape = evaluator.shape(config, info.function, facts)
        except Exception:  # one odd config must not cost the audit
            continue
        if "checkpoint_id" in shape.keys:
            out.append(ForkSite(display, facts.line(info.node), f".{method}(...)"))
    return out
