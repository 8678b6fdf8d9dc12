"""Metadata of the dynamic findings RA701..RA708.

The SARIF reporter, ``resume-audit explain`` and the docs read rule metadata
through the same attributes whether a rule is a static :class:`resume_audit.rules.Rule`
class or one of these descriptors (``id, name, properties, severity,
frameworks, summary, description, runtime, fix``), so a SARIF run can mix
static and dynamic results under one rule table. Dynamic findings are
observations, not patterns, so the descriptors carry no code examples.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from resume_audit.findings import Severity


@dataclass(frozen=True)
class DynamicRule:
    """One dynamic finding id. Attribute names match :class:`resume_audit.rules.Rule`."""

    id: str
    name: str
    properties: tuple[str, ...]
    severity: Severity
    summary: str
    description: str
    runtime: str
    fix: str
    frameworks: tuple[str, ...] = ("langgraph",)
    not_flagged: str = ""
    #: dynamic rules have no static examples; present so doc renderers can treat both kinds alike
    VALID: ClassVar[tuple] = ()
    INVALID: ClassVar[tuple] = ()
    origin: ClassVar[str] = "dynamic"

    def documentation(self) -> str:
        from resume_audit.catalog.docs import render_rule

        return render_rule(self)


RA701 = DynamicRule(
    id="RA701",
    name="crash-duplicate-effect",
    properties=("EO",),
    severity=Severity.ERROR,
    summary="After a crash and a resume, an effect fired more often than in the uninterrupted run, or a completed node ran again.",
    description="""
The crash sweep killed the graph's process (SIGKILL, synchronised with a named
event: a checkpointer `put`/`put_writes` returning, or an effect's ledger
record) and resumed the thread in a fresh interpreter. The external effect
ledger then counted more calls of a listed effect than the uninterrupted run
makes, or a node whose output was already durable ran again.
""",
    runtime="""
LangGraph checkpoints a node's output only after the node returns. A process
that dies after the node's side effect but before its write is durable leaves
no trace of the effect in the checkpoint, so the resumed run executes the node
again from its first line and the effect fires twice (measured on langgraph
1.2.24: 1 -> 2). The default `durability="async"` writes through a background
executor, so the next node can start -- and fire its own effect -- before the
previous write is on disk, which widens the window.
""",
    fix="""
Make the effect idempotent: pass an idempotency key derived from the thread and
node (`idempotency_key=f"{thread_id}:{node}"`) to the provider, or record the
effect durably (keyed the same way) before performing it and skip it when the
record exists. `durability="sync"` narrows the window between nodes but cannot
close the one inside a node.
""",
)

RA702 = DynamicRule(
    id="RA702",
    name="resume-diverges",
    properties=("PC",),
    severity=Severity.ERROR,
    summary="The resumed run re-ran its durably completed prefix, or its final state or step lineage differs from the uninterrupted run.",
    description="""
After a kill and a resume in a fresh interpreter, a unit (node, flow method)
whose completion was already durable ran again -- the resume re-ran the
completed prefix or rebuilt state from initial values -- or the run completed
with a final state, a number of supersteps, or a set of effects that differs
from the uninterrupted run (it skipped work).
""",
    runtime="""
A resume is supposed to continue the recorded run. When recovery re-executes
completed steps whose outputs accumulate (a reducer appending to a list, a
counter) or starts over from the input, the final state records the crash --
or the run silently skips work that the uninterrupted run does.
""",
    fix="""
Make node outputs replay-safe (overwrite instead of append, or key appended
items by the step that produced them), resume with `invoke(None, config)` or
the pending interrupt's `Command(resume=...)` on the same `thread_id` instead
of re-invoking with the input, and keep the checkpointer durable.
""",
)

RA703 = DynamicRule(
    id="RA703",
    name="fork-served-first-value",
    properties=("FD", "FI"),
    severity=Severity.ERROR,
    summary="A second resume at the same interrupt checkpoint with a new value was served the first value (LangGraph #6663).",
    description="""
The fork probe parked the graph at an `interrupt()`, took the interrupt
checkpoint's id, and resumed twice at `(thread_id, checkpoint_id)` with two
different values, in the bare `Command(resume=v)` form and in the interrupt-id
map form. The second resume's `interrupt()` returned the first value.
""",
    runtime="""
LangGraph stores the resume value as a pending write on the interrupt
checkpoint and, on a later invocation addressed to that checkpoint, serves the
recorded value instead of the new one: the second answer is silently replaced
by the first (measured on langgraph 1.2.24, `InMemorySaver` and `SqliteSaver`,
both invocation forms). The wire has no way to say "this is a fork, not a
retry", so a branch-creating time-travel resume behaves as a replay.
""",
    fix="""
Do not re-answer an interrupt by addressing its checkpoint: fork explicitly
with `graph.update_state(config_at_checkpoint, values)` to create a new branch
checkpoint and resume from that, or use a checkpointer wrapper that drops the
recorded `__resume__` writes when the config names a `checkpoint_id` (e.g.
`remit.wrap(...)` from `remit-contract`).
""",
)

RA704 = DynamicRule(
    id="RA704",
    name="stray-resume-not-inert",
    properties=("CO",),
    severity=Severity.ERROR,
    summary="A stray resume after completion fired an effect or changed state (CO-e).",
    description="""
After the run completed, the probe delivered one more `Command(resume=...)`
to the same thread -- a retried request, a duplicated queue message -- and the
effect ledger recorded a new effect or the thread's state changed.
""",
    runtime="""
A completed run has no interrupt left to consume. A resume delivered to it
must be inert; if it re-enters a gated node, the approved action happens
again without a new approval.
""",
    fix="""
Deduplicate resume deliveries (an idempotency key per human answer), check
that the thread is parked before resuming, and make the gated effect
idempotent.
""",
)

RA705 = DynamicRule(
    id="RA705",
    name="concurrent-double-consume",
    properties=("CO", "EO"),
    severity=Severity.ERROR,
    summary="k concurrent resumes of one parked interrupt fired the gated effect more than once (CO-c/CO-e).",
    description="""
k processes resumed the same parked interrupt on one durable store, released
together from a barrier. The effect ledger recorded the gated effect more often
than the single resume of the uninterrupted run fires it.
""",
    runtime="""
Consuming an interrupt is a read-decide-write with no compare-and-swap: every
resume that loads the parked checkpoint before another's consumption is
durable runs the gated node, each served its own value, with no error on any
side (measured on langgraph 1.2.24 with `SqliteSaver` and `PostgresSaver`).
The durable state afterwards records one branch: the duplicate is visible only
in an external effect record.
""",
    fix="""
Serialise resume delivery per thread (a lock or a unique claim on
`(thread_id, checkpoint_id)` in the shared store taken before invoking), e.g.
`remit.wrap(saver, conn, cross_process_gate=True)`, and make the gated effect
idempotent.
""",
)

RA706 = DynamicRule(
    id="RA706",
    name="invalid-checkpoint-persisted",
    properties=("CV",),
    severity=Severity.WARNING,
    summary="A persisted checkpoint holds state that fails the graph's state schema (LangGraph #6491 class).",
    description="""
Every checkpoint the sweep's runs persisted was validated against the graph's
state schema (pydantic model, TypedDict or dataclass). A field held a value
its annotation rejects; the finding names the node whose write produced it.
""",
    runtime="""
LangGraph validates pydantic state on input, not node outputs: an invalid
terminal write is persisted and nothing raises at `invoke`, `get_state` or
`get_state_history` (measured on langgraph 1.2.24). A mid-graph invalid write
is persisted too; then the next node never runs and the thread's own read APIs
raise `ValidationError`, while `saver.get_tuple` still returns the bad value.
""",
    fix="""
Validate node outputs before returning them (construct the state model, or a
pydantic model for the update) so the node raises before anything is
persisted, or wrap the checkpointer with a validating `put` that rejects
schema-invalid checkpoints.
""",
)

RA707 = DynamicRule(
    id="RA707",
    name="recovery-order-dependent",
    properties=("RD",),
    severity=Severity.ERROR,
    summary="Recovery differs between two legal durable orders of the same writes (LangGraph #8039 class).",
    description="""
The probe re-ran the crash cells under an adversarial but legal checkpointer
that defers each `put_writes` past the following `put`, killed the process at
the same named point, and resumed. The recovered run's effects, final state or
verdicts differ from recovery under the natural order. A pure node that runs
once more under one order (same effects, same final state) is shown in the
cell's detail but not reported: nothing outside the graph can tell.
""",
    runtime="""
Task writes and the superstep checkpoint are persisted by separate operations
through a background executor, with no barrier between them; which one reaches
disk first is a race. Recovery must decide the same way from either durable
state, or a crash outcome depends on thread scheduling.
""",
    fix="""
Order `put_writes` before the next `put` in custom savers (await the write
futures first), and make recovery a function of the durable log that does not
depend on which of the two landed first.
""",
)

RA708 = DynamicRule(
    id="RA708",
    name="resume-path-dead",
    properties=("LV",),
    severity=Severity.ERROR,
    summary="The documented resume path did not complete: an unrestorable checkpoint, a lost park, or an error on resume.",
    description="""
After a kill, the fresh interpreter could not continue the run through the
documented resume path (`invoke(None, config)` or `Command(resume=...)` on the
same thread): the resume raised, never completed, or the parked interrupt was
gone -- the run silently restarted from nothing.
""",
    runtime="""
Safety properties pass vacuously when nothing resumes. A checkpointer that
keeps parked runs in process memory (`InMemorySaver`), `durability="exit"`
under a crash, or a checkpoint the framework cannot load leaves a run that can
never continue: every parked approval dies with the process.
""",
    fix="""
Use a durable checkpointer (`SqliteSaver`, `PostgresSaver`) for graphs that
park or must survive a crash, keep the default durability, and surface resume
errors instead of starting the run afresh.
""",
)

DYNAMIC_RULES: tuple[DynamicRule, ...] = (RA701, RA702, RA703, RA704, RA705, RA706, RA707, RA708)


def all_dynamic_rules() -> tuple[DynamicRule, ...]:
    """Every dynamic rule descriptor, sorted by id."""
    return DYNAMIC_RULES


def dynamic_rule(rule_id: str) -> DynamicRule | None:
    for rule in DYNAMIC_RULES:
        if rule.id == rule_id.upper():
            return rule
    return None
