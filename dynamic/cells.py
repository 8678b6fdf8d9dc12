"""The sweep's cells: what each one runs, and the verdict it reaches.

A cell is one question with one answer -- "after this kill point, does the
resumed run match the uninterrupted one?", "is a second answer at the
interrupt checkpoint served?" -- decided only from the external ledger and the
children's reports, never from framework internals. Each verdict names the
dynamic rule(s) it violates; :mod:`auditor.dynamic.build` turns those into
findings.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .killpoints import DURABLE_KINDS, Event
from .ledger import Ledger
from .runner import ChildRun
from .values import derive_fork_value, short

PASS, FAIL, NOT_REACHED, ERROR, NOT_APPLICABLE = "pass", "fail", "not reached", "error", "n/a"


@dataclass
class Hit:
    """One rule violated by one cell, with what the finding needs."""

    rule: str
    node: str | None  # where the finding is located
    subject: str  # what is duplicated/diverged (groups findings): an effect, a node, a field
    message: str
    #: code-flow steps kill point -> resume -> duplicate: (node, message) or (node, message, "file:line")
    flow: tuple[tuple, ...] = ()
    witness: dict[str, Any] = field(default_factory=dict)


@dataclass
class Cell:
    kind: str  # dry-run | crash | parked | write-order | fork | stray | concurrent | validity
    name: str
    verdict: str
    detail: str = ""
    effects: dict[str, tuple[int, int]] = field(default_factory=dict)  # effect -> (expected, observed)
    nodes: dict[str, tuple[int, int]] = field(default_factory=dict)  # node -> (expected, observed) runs
    final_state_match: bool | None = None
    resumed: str | None = None
    hits: list[Hit] = field(default_factory=list)
    witness: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0  # not part of the stable output

    @property
    def rules(self) -> tuple[str, ...]:
        return tuple(sorted({h.rule for h in self.hits}))

    def stable(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "verdict": self.verdict,
            "rules": list(self.rules),
            "detail": self.detail,
            "effects": {k: {"expected": e, "observed": o} for k, (e, o) in sorted(self.effects.items())},
            "node_runs": {k: {"expected": e, "observed": o} for k, (e, o) in sorted(self.nodes.items())},
            "final_state_match": self.final_state_match,
            "resumed": self.resumed,
            "witness": self.witness,
        }


@dataclass
class Reference:
    """The uninterrupted run every other cell is compared with."""

    effects: Counter  # fired per effect over the whole protocol
    effects_by_leg: dict[int, Counter]
    nodes: Counter
    final_state: Any
    final_step: int | None
    parks: list[dict[str, Any]]
    events: list[Event]
    resume: tuple[Any, ...]
    #: the resume plane the program configures (``Session.describe()["plane"]``) when it promises durable state
    declared_plane: str | None = None
    #: checkpoints the uninterrupted run left
    checkpoints: int = 0

    @classmethod
    def from_dry(cls, result: dict[str, Any], ledger: Ledger, resume: tuple[Any, ...]) -> "Reference":
        rows = [r for r in ledger.effects(phases=["run"]) if r.fired]
        by_leg: dict[int, Counter] = {}
        for r in rows:
            by_leg.setdefault(r.leg if r.leg is not None else 0, Counter())[r.effect] += 1
        return cls(
            effects=Counter(r.effect for r in rows),
            effects_by_leg=by_leg,
            nodes=ledger.node_counts(phases=["run"]),
            final_state=result.get("final_state"),
            final_step=result.get("final_step"),
            parks=result.get("parks", []),
            events=[Event.from_dict(e) for e in result.get("events", [])],
            resume=resume,
            declared_plane=(result.get("describe") or {}).get("plane") if (result.get("describe") or {}).get("durable") else None,
            checkpoints=int(result.get("checkpoints") or 0),
        )

    @property
    def writes_nothing(self) -> bool:
        """The program configures a durable plane, yet its uninterrupted run persisted nothing."""
        return self.declared_plane is not None and self.checkpoints == 0 and not any(e.kind in DURABLE_KINDS for e in self.events)

    def durable_before(self, name: str) -> bool:
        """Whether the uninterrupted run had persisted a checkpoint before event ``name``."""
        for event in self.events:
            if event.name == name:
                return False
            if event.kind in DURABLE_KINDS:
                return True
        return False


@dataclass(frozen=True)
class Gate:
    """One pause point of the protocol, as the uninterrupted run met it: the probes run at each.

    ``index`` counts every park in order (dynamic ``interrupt()`` and static
    breakpoints alike); ``value_index`` is the ``--resume`` value that answers
    it (a breakpoint takes none).
    """

    index: int
    node: str | None
    kind: str = "interrupt"  # "interrupt" | "before" | "after" (static breakpoints)
    value_index: int = 0
    fork_value: Any = None
    #: the protocol's only gate: cell names stay as short as they always were
    alone: bool = True

    @property
    def breakpoint(self) -> bool:
        return self.kind != "interrupt"

    def describe(self) -> str:
        if self.kind == "interrupt":
            return f"interrupt() in `{self.node}`"
        return f"static breakpoint interrupt_{self.kind} at `{self.node}`"

    @property
    def suffix(self) -> str:
        return "" if self.alone else f" at gate {self.index} ({self.describe()})"

    @classmethod
    def first(cls) -> "Gate":
        return cls(0, None)

    @classmethod
    def of_protocol(cls, parks: list[dict[str, Any]], resume: tuple[Any, ...], fork_resume: Any) -> list["Gate"]:
        seen: dict[int, dict[str, Any]] = {}
        for park in parks:
            seen.setdefault(int(park["index"]), park)
        gates = []
        for index, park in sorted(seen.items()):
            kind = park.get("kind", "interrupt")
            vi = int(park.get("value_index", 0))
            fork = None
            if kind == "interrupt":
                fork = fork_resume if fork_resume is not None else (derive_fork_value(resume[vi]) if vi < len(resume) else None)
            gates.append(cls(index, park.get("node"), kind, vi, fork, alone=len(seen) == 1))
        return gates


def concurrent_name(k: int, gate: Gate) -> str:
    return f"{k} concurrent resumes of one parked interrupt{gate.suffix}"


def _pairs(expected: Counter, observed: Counter) -> dict[str, tuple[int, int]]:
    return {k: (expected.get(k, 0), observed.get(k, 0)) for k in sorted(set(expected) | set(observed))}


def failure_text(run: ChildRun) -> str:
    """Why a child did not complete its role, in one line."""
    return " ".join(_failure_text(run).split())


def _failure_text(run: ChildRun) -> str:
    if run.result is None:
        return run.failure() or "no result"
    r = run.result
    if r.get("target_error"):
        return f"target did not load: {r['target_error']}"
    if r.get("protocol_error"):
        return r["protocol_error"]
    err = r.get("error")
    if err:
        where = f" at {err['where']}" if err.get("where") else ""
        if err.get("kind") == "exit":
            return f"the graph called {err['message']}{where}"
        limit = run.spec.run.memory_limit_mb
        if err.get("type") == "MemoryError" and limit:
            return (f"the graph ran out of memory under the sweep's limit of {limit} MB per process{where} "
                    "(--memory-limit; 0 lifts it)")
        return f"the graph raised {err.get('type')}: {err.get('message')}{where}"
    return "incomplete"


def completed(run: ChildRun) -> bool:
    return run.result is not None and bool(run.result.get("ok"))


# -- the interrupt path -----------------------------------------------------------------
def judge_interrupt_path(ledger: Ledger, ref: Reference) -> Cell:
    """EO on the interrupt path: answering a park must not re-fire what the parked unit did before it parked.

    Read from the uninterrupted run alone: an effect that the parked unit fired
    before the park (leg k) and fires again when the answer arrives (leg k+1)
    means the unit re-ran from its start -- LangGraph's node re-entry over an
    effect before ``interrupt()`` (RA101), LlamaIndex's ``wait_for_event`` step
    re-run (RA102) -- in process, with no crash at all.
    """
    cell = Cell(kind="interrupt", name="answering a park re-runs the parked unit's completed effects", verdict=PASS)
    if not ref.parks:
        cell.verdict = NOT_APPLICABLE
        cell.detail = "the program never parks"
        return cell
    rows = [r for r in ledger.effects(phases=["run"]) if r.fired]
    replays = []
    for park in ref.parks:
        leg = park["index"]
        node = park.get("node")
        before = Counter(r.effect for r in rows if r.leg == leg and r.node == node)
        after_rows = [r for r in rows if r.leg == leg + 1 and r.node == node and r.effect in before]
        after = Counter(r.effect for r in after_rows)
        for effect, n in sorted(after.items()):
            replays.append((park, node, effect, before[effect], n, next(r for r in after_rows if r.effect == effect)))
    cell.effects = {k: (v, v) for k, v in sorted(ref.effects.items())}
    for park, node, effect, n_before, n_after, row in replays:
        cell.hits.append(
            Hit(
                "RA701",
                node,
                f"replay:{effect}",
                f"Answering park {park['index']} re-ran `{node}` from its start: {effect} fired {n_before} time"
                f"{'s' if n_before != 1 else ''} before the park and {n_after} more after the answer arrived "
                f"(in one process, no crash) -- {n_before} -> {n_before + n_after}.",
                ((node, f"{effect} fired before the park", row.site), (node, f"park {park['index']} answered"),
                 (node, f"{effect} fired again: {n_before} -> {n_before + n_after}", row.site)),
                {"park": park["index"], "effect": effect, "before_park": n_before, "after_answer": n_after},
            )
        )
    cell.verdict = FAIL if cell.hits else PASS
    cell.detail = ("; ".join(f"{e} {b} -> {b + a} in `{n}`" for _p, n, e, b, a, _r in replays) if replays
                   else "no effect of a parked unit fired again after its answer")
    cell.witness = {"replays": [{"park": p["index"], "node": n, "effect": e, "before": b, "after": a}
                                for p, n, e, b, a, _r in replays]}
    return cell


# -- crash and recovery -----------------------------------------------------------------
def judge_recovery(
    kind: str,
    point: Event,
    crash: ChildRun,
    recover: ChildRun | None,
    ledger: Ledger,
    ref: Reference,
) -> Cell:
    """Verdict of a crash (or crash-while-parked) cell from its two children."""
    cell = Cell(kind=kind, name=point.name if crash.spec.extra.get("crash_mode", "sigkill") == "sigkill"
                else f"{point.name} [raised]", verdict=PASS)
    cell.seconds = crash.seconds + (recover.seconds if recover else 0.0)
    if not crash.crashed:
        if crash.result is not None and crash.result.get("ok") and crash.result.get("reached") is False:
            cell.verdict = NOT_REACHED
            cell.detail = "the kill point did not occur in this run (the executor took another order); nothing to judge"
        else:
            cell.verdict = ERROR
            cell.detail = f"the run to the kill point did not get there: {failure_text(crash)}"
        return cell
    if recover is None:
        cell.verdict = ERROR
        cell.detail = "no recovery was attempted"
        return cell
    observed = ledger.fired_counts(phases=["crash", "recover"])
    cell.effects = _pairs(ref.effects, observed)
    cell.nodes = _pairs(ref.nodes, ledger.node_counts(phases=["crash", "recover"]))
    kill_desc = point.name
    how_killed = "SIGKILLed" if crash.killed_itself else "raised an exception"
    if not completed(recover):
        why = failure_text(recover)
        cell.verdict = FAIL
        cell.resumed = "failed"
        cell.detail = f"the fresh interpreter could not resume: {why}"
        cell.hits.append(
            Hit(
                "RA708",
                point.node,
                "resume-failed",
                f"After a crash {kill_desc.split(': ', 1)[-1]} ({kill_desc.split(':', 1)[0]}), resuming the thread in a "
                f"fresh interpreter did not complete: {why}.",
                ((point.node, f"process {how_killed} {kill_desc}"), (None, f"fresh interpreter: resume failed: {why}")),
                {"kill_point": kill_desc, "error": why},
            )
        )
        return cell
    r = recover.result or {}
    cell.resumed = r.get("how")
    cell.final_state_match = r.get("final_state") == ref.final_state
    rec_rows = ledger.effects(phases=["recover"])
    crash_rows = ledger.effects(phases=["crash"])
    kill_site = crash_rows[-1].site if point.kind == "effect" and crash_rows else None
    first_recovered = next(iter(ledger.node_runs(phases=["recover"])), None)
    resume_node = first_recovered.node if first_recovered else None
    durable = r.get("durable", {})
    parked_lost = kind == "parked" and not durable.get("interrupts")
    progress_lost = not durable.get("exists") and ref.durable_before(point.name)
    nothing_written = not durable.get("exists") and ref.writes_nothing
    if parked_lost or progress_lost or nothing_written:
        if nothing_written and not (parked_lost or progress_lost):
            text = (f"The program configures {ref.declared_plane}, yet its uninterrupted run wrote no checkpoint: after a "
                    f"crash {kill_desc.split(': ', 1)[-1]}, the documented restore had nothing to restore and the only "
                    f"way on was {r.get('how')}.")
        elif parked_lost:
            text = (f"The process died while the run was parked ({kill_desc.split(': ', 1)[-1]}); a fresh interpreter "
                    f"found no pending interrupt on the thread: the park was lost and the only way on was "
                    f"{r.get('how')}.")
        else:
            text = (f"After a crash {kill_desc.split(': ', 1)[-1]}, a fresh interpreter found none of the checkpoints "
                    f"written before the crash: {r.get('how')}.")
        cell.hits.append(
            Hit(
                "RA708",
                point.node,
                "park-lost" if parked_lost else ("progress-lost" if progress_lost else "nothing-persisted"),
                text,
                ((point.node, f"process {how_killed} {kill_desc}"), (resume_node, f"fresh interpreter: {r.get('how')}")),
                {"kill_point": kill_desc, "durable": durable, "resumed": r.get("how")},
            )
        )
    for effect, (exp, obs) in cell.effects.items():
        if obs > exp:
            dup = next((e for e in rec_rows if e.effect == effect and e.fired), None)
            dup_node = dup.node if dup else None
            cell.hits.append(
                Hit(
                    "RA701",
                    dup_node,
                    f"effect:{effect}",
                    f"Crash {kill_desc.split(': ', 1)[-1]} ({kill_desc.split(':', 1)[0]}), then a resume in a fresh "
                    f"interpreter ({r.get('how')}): {effect} fired {obs} times; the uninterrupted run fires it {exp} "
                    f"time{'s' if exp != 1 else ''}. Node `{dup_node}` ran again from its start"
                    + (" because its write was not durable when the process died." if not r.get("reran_completed") else "."),
                    (
                        (point.node, f"process {how_killed} {kill_desc}", kill_site),
                        (resume_node, f"fresh interpreter: {r.get('how')}"),
                        (dup_node, f"{effect} fired again: {obs} calls, uninterrupted run {exp}", dup.site if dup else None),
                    ),
                    {"kill_point": kill_desc, "effect": effect, "expected": exp, "observed": obs, "resumed": r.get("how")},
                )
            )
    for node, step in r.get("reran_completed", []):
        # a durably completed unit running again is the completed prefix re-run: PC (its effects, if
        # any, are counted by the RA701 hits above)
        cell.hits.append(
            Hit(
                "RA702",
                node,
                f"rerun:{node}",
                f"Crash {kill_desc.split(': ', 1)[-1]}, then a resume in a fresh interpreter: node `{node}` "
                f"(step {step}) ran again although its write was already durable.",
                ((point.node, f"process {how_killed} {kill_desc}"), (node, f"completed node {node} re-ran at step {step}")),
                {"kill_point": kill_desc, "node": node, "step": step},
            )
        )
    diverged = []
    if not cell.final_state_match:
        diverged.append(f"final state {short(r.get('final_state'), 120)} instead of {short(ref.final_state, 120)}")
    if r.get("final_step") != ref.final_step:
        diverged.append(f"{r.get('final_step')} supersteps instead of {ref.final_step}")
    missing = [f"{e} fired {o} times instead of {x}" for e, (x, o) in cell.effects.items() if o < x]
    diverged.extend(missing)
    if diverged:
        cell.hits.append(
            Hit(
                "RA702",
                resume_node or point.node,
                "diverged",
                f"Crash {kill_desc.split(': ', 1)[-1]}, then a resume in a fresh interpreter ({r.get('how')}): the "
                f"resumed run differs from the uninterrupted one: {'; '.join(diverged)}.",
                ((point.node, f"process {how_killed} {kill_desc}"), (resume_node, f"fresh interpreter: {r.get('how')}")),
                {"kill_point": kill_desc, "differences": diverged},
            )
        )
    cell.verdict = FAIL if cell.hits else PASS
    bits = [f"resumed by {r.get('how')}"]
    if r.get("reran_completed"):
        bits.append("re-ran completed " + ", ".join(f"{n}@{s}" for n, s in r["reran_completed"]))
    cell.detail = "; ".join(bits)
    cell.witness = {"kill_point": kill_desc, "durable_at_crash": durable}
    return cell


def judge_write_order(natural: Cell | None, deferred: Cell, point: Event | None = None) -> Cell:
    """RD: recovery under the deferred order must equal recovery under the natural order."""
    cell = Cell(kind="write-order", name=deferred.name, verdict=PASS, effects=deferred.effects, nodes=deferred.nodes,
                final_state_match=deferred.final_state_match, resumed=deferred.resumed, seconds=deferred.seconds)
    if deferred.verdict in (NOT_REACHED, ERROR) or natural is None or natural.verdict in (NOT_REACHED, ERROR):
        cell.verdict = deferred.verdict if deferred.verdict in (NOT_REACHED, ERROR) else NOT_APPLICABLE
        cell.detail = deferred.detail or "no natural-order cell to compare with"
        return cell

    def signature(c: Cell) -> tuple:
        return (tuple(sorted(c.effects.items())), tuple(sorted(c.nodes.items())), c.final_state_match, c.rules)

    cell.witness = {"natural": {"effects": natural.effects, "rules": list(natural.rules), "resumed": natural.resumed},
                    "deferred": {"effects": deferred.effects, "rules": list(deferred.rules), "resumed": deferred.resumed}}
    diffs = []
    material = False  # a difference anyone outside the graph can see
    for e in sorted(set(natural.effects) | set(deferred.effects)):
        a, b = natural.effects.get(e, (0, 0))[1], deferred.effects.get(e, (0, 0))[1]
        if a != b:
            diffs.append(f"{e}: {a} vs {b}")
            material = True
    node_diffs = []
    for n in sorted(set(natural.nodes) | set(deferred.nodes)):
        a, b = natural.nodes.get(n, (0, 0))[1], deferred.nodes.get(n, (0, 0))[1]
        if a != b:
            node_diffs.append(f"runs of {n}: {a} vs {b}")
    diffs.extend(node_diffs)
    if natural.final_state_match != deferred.final_state_match:
        diffs.append("final state differs")
        material = True
    if natural.rules != deferred.rules:
        diffs.append(f"verdicts {list(natural.rules) or ['pass']} vs {list(deferred.rules) or ['pass']}")
        material = True
    if signature(natural) != signature(deferred) and not material:
        # a pure node ran once more under one order: same effects, same final state, same
        # verdicts -- nothing a user can observe, so no finding (and nothing to silence)
        cell.detail = "recovery equivalent under both durable orders (same effects and final state); " + "; ".join(node_diffs)
        return cell
    if signature(natural) != signature(deferred):
        cell.verdict = FAIL
        node = next((h.node for h in deferred.hits + natural.hits if h.node), point.node if point else None)
        cell.hits.append(
            Hit(
                "RA707",
                node,
                "write-order",
                f"Recovery after a crash {deferred.name.split(': ', 1)[-1]} depends on the durable order of writes: "
                f"natural order vs each put_writes deferred past the next put gives {'; '.join(diffs)}.",
                ((node, f"process SIGKILLed {deferred.name} under both write orders"), (node, "recoveries differ")),
                {"kill_point": deferred.name, "differences": diffs},
            )
        )
        cell.detail = "; ".join(diffs)
    else:
        cell.detail = "recovery identical under both durable orders"
    return cell


# -- probes ------------------------------------------------------------------------------
FORK_FORM_NAMES = {
    "bare": "bare Command(resume=v)",
    "map": "interrupt-id map Command(resume={id: v})",
    "restore": "two restores of the park's durable state",
}

def judge_fork(form: str, run: ChildRun, ledger: Ledger, gate: Gate | None = None) -> Cell:
    gate = gate or Gate.first()
    name = "fork probe (" + FORK_FORM_NAMES.get(form, form) + ")" + gate.suffix
    cell = Cell(kind="fork", name=name, verdict=PASS, seconds=run.seconds)
    if not completed(run):
        cell.verdict = ERROR
        cell.detail = failure_text(run)
        return cell
    r = run.result or {}
    if not r.get("applicable"):
        cell.verdict = NOT_APPLICABLE
        cell.detail = r.get("why") or "the graph never parks at an interrupt"
        return cell
    node = r.get("node")
    branches = r.get("branches", [])
    served = []
    for n, branch in enumerate(branches, start=1):
        every = ledger.served(phases=[f"fork-{n}"])
        rows = [v for _phase, _leg, nd, v in every if nd == node or node is None] or [v for *_x, v in every]
        served.append(rows[0] if rows else None)
    sent = [b.get("sent") for b in branches]
    at = ("(thread_id, checkpoint_id) of the interrupt checkpoint" if form in ("bare", "map")
          else "the durable state saved at the park, restored twice")
    cell.witness = {"sent": sent, "served": served, "at": at, "form": form}
    if not gate.alone:
        cell.witness["gate"] = {"index": gate.index, "node": gate.node, "kind": gate.kind}
    fired = {f"fork-{n}": dict(ledger.fired_counts(phases=[f"fork-{n}"])) for n in (1, 2)}
    cell.witness["effects_per_branch"] = fired
    errors = [b.get("error") for b in branches if b.get("error")]
    if errors:
        cell.verdict = ERROR
        cell.detail = "; ".join(errors)
        return cell
    def fork_hit(outcome: str, last_step: str) -> Hit:
        return Hit(
            "RA703",
            node,
            f"fork:{form}",
            f"Two resumes at the same park{gate.suffix} ({FORK_FORM_NAMES.get(form, form)}): the first sent "
            f"{short(sent[0])} and was served {short(served[0])}; the second sent {short(sent[1])} {outcome}",
            ((node, f"resume 1 at the interrupt checkpoint with {short(sent[0])}"),
             (node, f"resume 2 at the same checkpoint with {short(sent[1])}"),
             (node, last_step)),
            {"sent": sent, "served": served, "form": form},
        )

    if len(served) == 2 and served[1] == sent[0] and sent[0] != sent[1]:
        cell.verdict = FAIL
        cell.hits.append(fork_hit(f"and was served {short(served[1])} -- the first value. A fork of this approval "
                                  "silently replays the first answer.", f"interrupt() returned {short(served[1])}"))
        cell.detail = f"sent {short(sent[0])} then {short(sent[1])}; served {short(served[0])} then {short(served[1])}"
    elif len(served) == 2 and served[0] == sent[0] and served[1] is None and sent[0] != sent[1]:
        # the first branch shows interrupt() is observed; the second never reached it (a subgraph
        # whose own checkpoint already holds the first answer's outcome, for one)
        cell.verdict = FAIL
        cell.hits.append(fork_hit("and interrupt() never ran -- the answer was silently dropped and the branch "
                                  "carries the first answer's outcome.",
                                  "interrupt() was not called again: the second answer reached nothing"))
        cell.detail = f"sent {short(sent[0])} then {short(sent[1])}; served {short(served[0])}, then nothing"
    elif len(served) == 2 and served[1] == sent[1]:
        cell.detail = f"each resume served its own value ({short(sent[0])}, {short(sent[1])})"
    else:
        cell.verdict = ERROR
        cell.detail = f"could not observe the served values (served {served!r})"
    return cell


def judge_stray(dry: dict[str, Any], ledger: Ledger, ref: Reference, name: str = "stray resume after completion") -> Cell:
    """CO sequential: one more delivery of the documented resume after the run completed must be inert."""
    cell = Cell(kind="stray", name=name, verdict=PASS)
    stray = dry.get("stray")
    if not stray:
        cell.verdict = NOT_APPLICABLE
        cell.detail = dry.get("stray_na") or "the graph never parks at an interrupt"
        return cell
    delivery = (dry.get("describe") or {}).get("stray") or f"stray Command(resume={short(stray.get('sent'))})"
    fired = ledger.fired_counts(phases=["stray"])
    cell.effects = {e: (0, fired.get(e, 0)) for e in sorted(set(ref.effects) | set(fired))}
    cell.final_state_match = not stray.get("state_changed")
    cell.witness = {"sent": stray.get("sent"), "raised": stray.get("error"), "checkpoints_added": stray.get("checkpoints_added"),
                    "fired": dict(fired)}
    node = ref.parks[-1]["node"] if ref.parks else None
    if node is None:
        node = next((r.node for r in ledger.effects(phases=["stray"]) if r.fired and r.node), None)
    if sum(fired.values()) or stray.get("state_changed"):
        cell.verdict = FAIL
        what = []
        if sum(fired.values()):
            what.append(", ".join(f"{e} fired {n} time{'s' if n != 1 else ''}" for e, n in sorted(fired.items())))
        if stray.get("state_changed"):
            what.append(f"the state changed to {short(stray.get('state_after'), 120)}")
        cell.hits.append(
            Hit(
                "RA704",
                node,
                "stray",
                f"A {delivery} delivered after the run completed was not inert: {'; '.join(what)}.",
                ((node, "run completed"), (node, delivery), (node, "; ".join(what))),
                {"sent": stray.get("sent"), "fired": dict(fired), "state_changed": stray.get("state_changed")},
            )
        )
        cell.detail = "; ".join(what)
    else:
        how = "raised " + stray["error"] if stray.get("error") else "returned the old result"
        cell.detail = f"inert: {how}, nothing fired, state unchanged, {stray.get('checkpoints_added')} checkpoint(s) added"
    return cell


def judge_concurrent(k: int, setup: ChildRun, racers: list[ChildRun], ledger: Ledger, ref: Reference,
                     gate: Gate | None = None) -> Cell:
    gate = gate or Gate.first()
    cell = Cell(kind="concurrent", name=concurrent_name(k, gate), verdict=PASS,
                seconds=setup.seconds + max((r.seconds for r in racers), default=0.0))
    if not completed(setup):
        cell.verdict = ERROR
        cell.detail = f"could not park the run: {failure_text(setup)}"
        return cell
    if not (setup.result or {}).get("parked"):
        cell.verdict = NOT_APPLICABLE
        cell.detail = "the graph never parks at an interrupt"
        return cell
    if not (setup.result or {}).get("shared"):
        cell.verdict = NOT_APPLICABLE
        cell.detail = "the graph does not persist through the sweep's store, so separate processes share no park to race on"
        return cell
    expected = ref.effects_by_leg.get(gate.index + 1, Counter())
    observed = ledger.fired_counts(phases=["race"])
    cell.effects = _pairs(expected, observed)
    node = (setup.result or {}).get("node")
    served = ledger.served(phases=["race"])
    if not any(s[2] == node for s in served):  # the answer is consumed by another unit than the one that parked
        node = served[0][2] if served else node
    consumed = len([s for s in served if s[2] == node])
    failures = [failure_text(r) for r in racers if not completed(r)]
    errors: list[str] = [error for r in racers if completed(r) and (error := (r.result or {}).get("error"))]
    if gate.breakpoint:  # a static breakpoint serves no value: each racer that ran the gated node consumed it
        consumed = len({r.pid for r in ledger.node_runs(phases=["race"]) if r.node == node}) if node else 0
    cell.witness = {"racers": k, "consumed": consumed, "served": [s[3] for s in served if s[2] == node],
                    "racer_errors": sorted(errors), "racer_failures": sorted(failures)}
    if not gate.alone:
        cell.witness["gate"] = {"index": gate.index, "node": gate.node, "kind": gate.kind}
    if failures:
        cell.verdict = ERROR
        cell.detail = "; ".join(sorted(set(failures)))
        return cell
    extra = {e: (x, o) for e, (x, o) in cell.effects.items() if o > x}
    if extra:
        cell.verdict = FAIL
        gated_row = next((r for r in ledger.effects(phases=["race"]) if r.fired and r.effect in extra), None)
        gated = gated_row.node if gated_row else node
        what = ", ".join(f"{e} fired {o} times (one resume fires it {x})" for e, (x, o) in sorted(extra.items()))
        cell.hits.append(
            Hit(
                "RA705",
                gated,
                f"concurrent:{','.join(sorted(extra))}",
                f"{k} processes resumed the same {'pause' if gate.breakpoint else 'parked interrupt'} "
                f"({gate.describe() if gate.breakpoint else f'node `{node}`'}{'' if gate.alone else f', gate {gate.index}'}) "
                f"from a barrier on one durable store: "
                f"{what}; the {'pause was passed' if gate.breakpoint else 'interrupt was consumed'} {consumed} times, "
                f"{'no racer raised' if not errors else 'errors: ' + '; '.join(sorted(errors))}.",
                ((node, f"{k} resumes released together"), (node, f"interrupt consumed {consumed} times"),
                 (gated, what, gated_row.site if gated_row else None)),
                {"racers": k, "consumed": consumed, "effects": {e: {"expected": x, "observed": o} for e, (x, o) in extra.items()}},
            )
        )
        cell.detail = what
    else:
        race_rows = ledger.effects(phases=["race"])
        deduplicated = any(not r.fired and r.key for r in race_rows)
        if not expected:
            how = " (the resumed leg fires no recorded effect, so there was nothing to duplicate)"
        elif consumed > 1 and deduplicated:
            how = " (CO-c: consumed more than once, repeated effects were skipped by their key)"
        elif consumed > 1:
            how = " (consumed more than once, yet no recorded effect fired twice)"
        else:
            how = ""
        cell.detail = f"gated effects fired as once; interrupt consumed {consumed} time{'s' if consumed != 1 else ''}{how}"
    return cell


def judge_validity(sources: list[tuple[str, dict[str, Any] | None]], dry_ok: bool, schema: str | None) -> Cell:
    cell = Cell(kind="validity", name="checkpoint schema validity", verdict=PASS)
    if schema is None:
        cell.verdict = NOT_APPLICABLE
        cell.detail = "the graph declares no state schema"
        return cell
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for origin, result in sources:
        for inv in (result or {}).get("invalid", []) or []:
            for writer in inv.get("writers", ["unknown"]):
                key = (inv["field"], writer)
                if key not in seen:
                    seen[key] = {**inv, "writer": writer, "seen_in": origin}
    for (fld, writer), inv in sorted(seen.items()):
        node = writer if writer not in ("input", "unknown", "state update") else None
        cell.hits.append(
            Hit(
                "RA706",
                node,
                f"field:{fld}",
                f"A checkpoint persisted at step {inv.get('step')} holds `{fld}` = {short(inv.get('value'))}, which fails the "
                f"{schema} state schema ({inv.get('error')}); written by {'node `' + writer + '`' if node else writer}"
                + (" -- persisted silently: nothing raised." if dry_ok else "."),
                ((node, f"{writer} wrote {fld} = {short(inv.get('value'))}"), (node, f"checkpoint at step {inv.get('step')} persisted it")),
                {"field": fld, "value": inv.get("value"), "error": inv.get("error"), "step": inv.get("step"), "writer": writer,
                 "silent": dry_ok},
            )
        )
    cell.verdict = FAIL if cell.hits else PASS
    cell.detail = (
        f"{len(cell.hits)} invalid field value(s) persisted" if cell.hits else f"every persisted checkpoint validates against the {schema} schema"
    )
    return cell
