"""Static findings judged by the sweeps: confirmed, not reproduced, not exercised -- and what only the sweep saw.

A static finding is matched to the sweeps of the entry points that run its
code. A finding inside a unit (an effect in a node) belongs to every swept
program with a unit whose definition contains its line; a finding at a caller
(a route that resumes without a claim) belongs to the programs its module
imports. It is then:

- **confirmed** when one of those sweeps raised a dynamic finding its rule is
  reproduced by (``Rule.confirmed_by``) on the same unit -- or, for a caller,
  anywhere in the program -- and carries that witness;
- **not reproduced** when the sweep reached the finding's line (its effect
  call was recorded there) *and* a probe that could show the hazard ran (a
  crash cell, a concurrent resume, ...) and the contract held (a key the
  static stage could not see, a branch that is guarded after all);
- **not exercised** otherwise, with the reason: no sweep ran it, the unit ran
  but never reached the line, or every cell of the probe that could show it
  was not applicable (no pause point to resume concurrently).

Dynamic findings no static finding accounts for are reported as
**dynamic-only**, one result per hazard (rule, line, unit) however many entry
points reached it -- and a framework property the program cannot trigger
(RA703: LangGraph serving a fork the first answer, in a program that never
runs at a ``checkpoint_id``, :mod:`.forks`) is a note of the run, not a result.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from resume_audit.audit.entrypoints import EntryPoint
from resume_audit.audit.forks import ForkSite
from resume_audit.audit.plan import effect_of
from resume_audit.audit.sinks import imported_modules
from resume_audit.discovery.modulenames import module_name_for
from resume_audit.discovery.walk import display_path
from resume_audit.dynamic.cells import ERROR, FAIL, NOT_APPLICABLE, PASS
from resume_audit.dynamic.probes import registry
from resume_audit.findings import Confirmation, Finding, FlowStep, Notification, NotificationKind, Span

if TYPE_CHECKING:
    from resume_audit.dynamic.report import SweepReport


@dataclass
class SweptEntry:
    """One entry point and what sweeping it gave."""

    entry: EntryPoint
    #: the sweep's report; None when it could not run (``why`` says why)
    report: "SweepReport | None" = None
    why: str = ""
    seconds: float = 0.0
    #: the answers the sweep used at its interrupts
    answers: tuple[object, ...] = ()
    #: dealt to another shard (``--shard``): its findings are judged there
    elsewhere: bool = False

    @property
    def ran(self) -> bool:
        return self.report is not None and self.report.complete


def _absolute(path: str, base: Path) -> Path:
    p = Path(path)
    return (p if p.is_absolute() else base / p).resolve()


def _units_at(swept: SweptEntry, file: Path, line: int) -> list[str]:
    """Units of the swept program whose definition contains ``file:line``."""
    nodes = swept.report.nodes if swept.report is not None else {}
    return [
        name
        for name, loc in nodes.items()
        if Path(loc.file).resolve() == file and loc.start_line <= line <= loc.end_line
    ]


@dataclass
class Judged:
    """Every finding with its confirmation, and what the run's summary says besides."""

    findings: list[Finding]
    notes: list[Notification] = field(default_factory=list)


#: framework properties the sweep's probes show on any program, reported only where the program can trigger them
FORK_ONLY = ("RA703",)


def judge(
    static: list[Finding],
    swept: list[SweptEntry],
    confirmed_by: dict[str, tuple[str, ...]],
    root: Path,
    forks: Sequence[ForkSite] = (),
) -> Judged:
    """Every static finding with its confirmation, then the dynamic-only findings (one per hazard, and only
    the ones the program can trigger: ``forks`` are where it runs at a ``checkpoint_id``)."""
    used: set[tuple[int, int]] = set()  # (sweep index, dynamic finding index) that confirmed something
    out: list[Finding] = []
    for f in static:
        out.append(_judge_one(f, swept, confirmed_by.get(f.rule_id, ()), root, used))
    found: list[tuple[str, Finding]] = []
    for i, s in enumerate(swept):
        report = s.report
        if report is None:
            continue
        base = Path(report.cwd)
        found += [
            (s.entry.target, _relocated(d, base, root)) for j, d in enumerate(report.findings) if (i, j) not in used
        ]
    notes: list[Notification] = []
    if not forks:
        unforked = [(t, d) for t, d in found if d.rule_id in FORK_ONLY]
        found = [(t, d) for t, d in found if d.rule_id not in FORK_ONLY]
        if unforked:
            notes.append(_fork_note(unforked))
    return Judged(out + _one_per_hazard(found), notes)


def _fork_note(unforked: list[tuple[str, Finding]]) -> Notification:
    places = sorted({f"{d.span.path}:{d.span.start_line}" for _t, d in unforked})
    return Notification(
        NotificationKind.INFO,
        f"RA703 (stock LangGraph serves a second answer at the same interrupt checkpoint the first, #6663) showed at "
        f"{len(places)} pause point(s) ({', '.join(places)}) but is not reported: nothing in this program runs, resumes "
        f"or updates a thread at a checkpoint_id, so it cannot fork there; it would matter once it does (time travel, "
        f"an answer changed after the fact)",
    )


def _one_per_hazard(found: list[tuple[str, Finding]]) -> list[Finding]:
    """One dynamic-only result per (rule, place, unit), listing every entry point whose sweep saw it: a graph
    reachable from a factory and from the app that compiles it is one program, not two hazards."""
    groups: dict[tuple[str, str, int, str], list[tuple[str, Finding]]] = {}
    for target, d in found:
        groups.setdefault((d.rule_id, d.span.path, d.span.start_line, d.scope), []).append((target, d))
    out = []
    for group in groups.values():
        group.sort(key=lambda td: (td[0], td[1].message))
        targets = list(dict.fromkeys(t for t, _d in group))
        first = group[0][1]
        note = f"found by sweeping {', '.join(targets)}; no static finding is at this place"
        if len(group) > 1:
            note += f" ({len(group)} dynamic findings of this hazard, shown once)"
        witness = {**first.witness, "entry_points": targets} if len(targets) > 1 else first.witness
        out.append(
            dataclasses.replace(first, confirmation=Confirmation.DYNAMIC_ONLY, confirmation_note=note, witness=witness)
        )
    return out


def _relocated(d: Finding, base: Path, root: Path) -> Finding:
    """A dynamic finding with its paths shown as the audit shows paths (relative to its root)."""

    def span(s: Span) -> Span:
        return dataclasses.replace(s, path=display_path(_absolute(s.path, base), root)) if s.path != "<unknown>" else s

    return dataclasses.replace(
        d,
        span=span(d.span),
        related=tuple(dataclasses.replace(r, span=span(r.span)) for r in d.related),
        flows=tuple(tuple(FlowStep(span(step.span), step.message) for step in flow) for flow in d.flows),
    )


def _judge_one(
    f: Finding, swept: list[SweptEntry], rules: tuple[str, ...], root: Path, used: set[tuple[int, int]]
) -> Finding:
    if not rules:
        return dataclasses.replace(
            f,
            confirmation=Confirmation.NOT_EXERCISED,
            confirmation_note=f"no probe of the sweep can reproduce {f.rule_id}: it is a static finding only",
        )
    file = _absolute(f.span.path, root)
    line = f.span.start_line
    holders = [(i, s, _units_at(s, file, line)) for i, s in enumerate(swept) if s.ran]
    in_unit = [(i, s, units) for i, s, units in holders if units]
    in_unit_units = {u for _i, _s, units in in_unit for u in units}
    if in_unit:
        candidates = in_unit
    else:  # a caller: the programs its module imports
        imported = imported_modules(file)
        candidates = [(i, s, []) for i, s in enumerate(swept) if s.ran and s.entry.module in imported]
    if not candidates:
        return _unexercised(f, swept, file)
    confirming: list[tuple[SweptEntry, Finding, Path]] = []
    for i, s, units in candidates:
        report = s.report
        assert report is not None  # candidates ran
        base = Path(report.cwd)
        for j, d in enumerate(report.findings):
            if d.rule_id not in rules:
                continue
            if units and d.scope not in units and not _flow_touches(d, base, file, line):
                continue
            used.add((i, j))  # every dynamic finding this hazard explains is accounted for by it
            confirming.append((s, d, base))
    if confirming:
        # the dynamic finding on the very unit first, then one whose effect is this finding's effect
        effect = effect_of(f, root)
        shown = effect[0].replace(":", ".") if effect else ""
        confirming.sort(
            key=lambda c: (not (in_unit and c[1].scope in in_unit_units), c[1].witness.get("effect") != shown)
        )
        s, d, base = confirming[0]
        moved = _relocated(d, base, root)
        note = f"{d.rule_id} when {s.entry.target} was swept: {_first_sentence(d.message)}"
        if len(confirming) > 1:
            note += f" ({len(confirming) - 1} more dynamic finding(s) of the same hazard)"
        return dataclasses.replace(
            f,
            confirmation=Confirmation.CONFIRMED,
            confirmation_note=note,
            witness={**d.witness, "confirmed_by": d.rule_id, "target": s.entry.target},
            flows=f.flows + moved.flows,
        )
    i, s, units = candidates[0]
    report = s.report
    assert report is not None
    unreached = _unreached(f, report, units, root, file)
    if unreached:
        answers = ", ".join(repr(a) for a in s.answers) or "none"
        return dataclasses.replace(
            f,
            confirmation=Confirmation.NOT_EXERCISED,
            confirmation_note=(
                f"sweeping {s.entry.target}: the uninterrupted run {unreached} with its input and "
                f"answers ({answers}); set input/resume in "
                f'[tool.resume-audit.audit."{s.entry.target}"]'
            ),
        )
    unprobed = _unprobed(report, rules)
    if unprobed:
        return dataclasses.replace(
            f,
            confirmation=Confirmation.NOT_EXERCISED,
            confirmation_note=f"sweeping {s.entry.target}: {unprobed}, so the sweep could not show {'/'.join(rules)}",
        )
    cells, dry = report.cells, report.dry_run
    kinds = sorted({str(c.kind) for c in cells if c is not dry and c.verdict not in (NOT_APPLICABLE, ERROR)})
    where = f"`{units[0]}`" if units else "the program"
    return dataclasses.replace(
        f,
        confirmation=Confirmation.NOT_REPRODUCED,
        confirmation_note=(
            f"swept {s.entry.target} ({len(cells)} cells: {', '.join(kinds)}): {where} ran under every "
            f"probe and no {'/'.join(rules) or 'dynamic'} finding came of it"
        ),
    )


def _unreached(f: Finding, report: SweepReport, units: list[str], root: Path, file: Path) -> str | None:
    """Why the uninterrupted run did not reach the finding's code (None: it did, or nothing tells).

    The line counts, not only its unit: a node that ran but took the branch without the effect did not
    exercise it. The ledger sites every effect call at the user's line that made it."""
    dry = report.dry_run
    if not units or dry is None:
        return None
    if all(not dry.nodes.get(u, (0, 0))[1] for u in units):
        return f"never ran `{units[0]}`"
    found_effect = effect_of(f, root)
    effect_name = found_effect[0].replace(":", ".") if found_effect else None
    if effect_name is not None and not dry.effects.get(effect_name, (0, 0))[1]:
        return f"ran `{units[0]}` but never reached {effect_name}"
    if effect_name is None and _records_effects(f):
        return (
            f"ran `{units[0]}`, but the effect at line {f.span.start_line} is not one the sweep can record, so "
            f"whether it ran is unknown; name its function under `effects`"
        )
    lines = {(file, f.span.start_line + k) for k in range(f.span.end_line - f.span.start_line + 1)}
    lines |= {(_absolute(step.span.path, root), step.span.start_line) for flow in f.flows[:1] for step in flow}
    sites = {_site(site) for site in report.effect_sites}
    if effect_name is not None and sites and not lines & sites:
        return f"ran `{units[0]}` and fired {effect_name} elsewhere, but never reached line {f.span.start_line}"
    return None


def _records_effects(f: Finding) -> bool:
    """Whether the rule is about an effect the sweep counts (its confirmation is a duplicate of one)."""
    return bool(f.flows) or f.rule_id in ("RA101", "RA102", "RA103", "RA104", "RA105")


def _site(site: str) -> tuple[Path, int]:
    path, _sep, line = site.rpartition(":")
    return Path(path).resolve(), int(line) if line.isdigit() else 0


def _unprobed(report: SweepReport, rules: tuple[str, ...]) -> str | None:
    """Why no probe able to raise ``rules`` ran (None: one did): its cells were all not applicable, errors,
    or never planned -- a concurrent resume needs a pause point, a crash cell a kill point."""
    kinds = {kind for probe in registry() if set(probe.rules) & set(rules) for kind in probe.kinds}
    cells = [c for c in report.cells if c.kind in kinds]
    if any(c.verdict in (PASS, FAIL) for c in cells):
        return None
    if not cells:
        return f"no {'/'.join(sorted(kinds))} cell was planned"
    details = list(dict.fromkeys(c.detail for c in cells if c.detail))
    return f"no {'/'.join(sorted(kinds))} cell could run ({details[0] if details else cells[0].verdict})"


def _flow_touches(d: Finding, base: Path, file: Path, line: int) -> bool:
    return any(
        _absolute(step.span.path, base) == file and step.span.start_line == line for flow in d.flows for step in flow
    )


def _first_sentence(text: str) -> str:
    head, dot, _rest = text.partition(". ")
    return head + ("." if dot else "")


def _unexercised(f: Finding, swept: list[SweptEntry], file: Path) -> Finding:
    module, _ = module_name_for(file)
    here = [s for s in swept if s.entry.module == module]
    if here:
        reasons = "; ".join(f"{s.entry.target}: {s.why or 'the sweep did not complete'}" for s in here)
        note = f"not swept -- {reasons}"
    elif not swept:
        note = "no sweepable entry point was found in the audited paths"
    else:
        note = "no swept entry point runs this code (it is not a unit of a graph, flow or workflow the audit found)"
    return dataclasses.replace(f, confirmation=Confirmation.NOT_EXERCISED, confirmation_note=note)
