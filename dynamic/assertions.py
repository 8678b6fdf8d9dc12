"""Assertions over a :class:`~resume_audit.dynamic.report.SweepReport`, for a team's own test suite.

``report.assert_exactly_once()`` and ``report.assert_conformant("FD", "CO")``
raise :class:`ResumeContractError` -- an ``AssertionError``, so pytest counts a
broken contract as a test failure -- whose message is the minimal witness of
each violation, laid out the way pytest lays out a failed comparison: what
happened (kill point or probe, resume path), then ``- expected`` / ``+ observed``
lines for the counts or values that differ::

    resume contract broken by fixtures/dynamic/langgraph/order_approval.py:build_graph: exactly-once

    RA701 [EO] an effect fired again after a crash and a resume
      at fixtures/dynamic/langgraph/order_approval.py:40, node `charge`
      kill point:  resume 1: after effect order_approval.charge_card in node charge
      resumed by:  invoke(None) from the durable checkpoint
      effect:      order_approval.charge_card  1 -> 2
      - 1 call   (uninterrupted run)
      + 2 calls  (after the crash and the resume)

A sweep that could not check a property -- the uninterrupted run did not
complete, or a cell the property depends on ended in an error -- fails too:
a contract that was never exercised must not pass silently.
"""

from __future__ import annotations

import textwrap
from typing import Iterable, Protocol, Sequence

from resume_audit.dynamic.catalog import all_dynamic_rules, dynamic_rule
from resume_audit.dynamic.cells import ERROR, Cell, CellKind
from resume_audit.dynamic.probes import registry
from resume_audit.findings import PROPERTIES, Finding, Notification

__all__ = [
    "EXACTLY_ONCE_RULES",
    "ResumeContractError",
    "SweepIncomplete",
    "assert_conformant",
    "assert_exactly_once",
    "violations",
]

#: the dynamic findings that mean "an effect fired more than once": crash path, stray resume, concurrent resumes
EXACTLY_ONCE_RULES: tuple[str, ...] = ("RA701", "RA704", "RA705")

_WIDTH = 100


class SweptReport(Protocol):
    """What the assertions read of a sweep's report (:class:`~resume_audit.dynamic.report.SweepReport`)."""

    @property
    def target(self) -> str: ...

    @property
    def backend(self) -> str: ...

    @property
    def framework(self) -> str: ...

    @property
    def versions(self) -> dict[str, str]: ...

    @property
    def complete(self) -> bool: ...

    @property
    def cells(self) -> Sequence[Cell]: ...

    @property
    def findings(self) -> Sequence[Finding]: ...

    @property
    def notifications(self) -> Sequence[Notification]: ...


def rule_cells() -> dict[str, tuple[CellKind, ...]]:
    """The cells each rule is decided from -- the kinds of the probes that raise it (an error in one of
    them means the rule was not checked)."""
    out: dict[str, tuple[CellKind, ...]] = {}
    for probe in registry():
        for rule in probe.rules:
            out[rule] = (*out.get(rule, ()), *probe.kinds)
    return out


def headline(rule_id: str) -> str:
    """The first line of a finding's witness block: what the rule's violation means."""
    rule = dynamic_rule(rule_id)
    return rule.headline if rule is not None else rule_id


class ResumeContractError(AssertionError):
    """A sweep found the resume contract broken (or could not check it).

    ``str(error)`` is the readable witness; ``findings`` are the offending
    :class:`~resume_audit.findings.Finding` objects (empty when the contract could
    not be checked), ``report`` the whole :class:`SweepReport`.
    """

    def __init__(
        self,
        message: str,
        *,
        report: SweptReport | None = None,
        findings: Iterable[Finding] = (),
        checked: Iterable[str] = (),
    ) -> None:
        super().__init__(message)
        self.report = report
        self.findings: list[Finding] = list(findings)
        #: the rule ids the assertion was about
        self.checked: tuple[str, ...] = tuple(checked)


class SweepIncomplete(ResumeContractError):
    """The sweep could not decide: the uninterrupted run did not complete, or a needed cell ended in an error."""


# ``resume_audit.ResumeContractError`` is the public name; pytest prints it in the failure's last line.
ResumeContractError.__module__ = "resume_audit"
SweepIncomplete.__module__ = "resume_audit"


# -- selecting what to check --------------------------------------------------------------------
def rules_for(selectors: Iterable[str]) -> tuple[str, ...]:
    """Dynamic rule ids for contract properties (``"EO"``, ``"FD"``, ...) and/or rule ids (``"RA703"``).

    No selectors means every property. Unknown names raise ``ValueError``.
    """
    wanted: set[str] = set()
    selectors = [s.strip().upper() for s in selectors]
    if not selectors:
        return tuple(r.id for r in all_dynamic_rules())
    for sel in selectors:
        if sel in PROPERTIES:
            wanted.update(r.id for r in all_dynamic_rules() if sel in r.properties)
        elif dynamic_rule(sel) is not None:
            wanted.add(sel)
        else:
            raise ValueError(
                f"unknown contract property or dynamic rule {sel!r}; use one of {', '.join(PROPERTIES)} or RA701..RA708"
            )
    return tuple(sorted(wanted))


def violations(report: SweptReport, rules: Iterable[str]) -> list[Finding]:
    """The report's findings of ``rules``, in the report's (stable) order."""
    ids = set(rules)
    return [f for f in report.findings if f.rule_id in ids]


# -- the assertions ------------------------------------------------------------------------------
def assert_exactly_once(report: SweptReport) -> None:
    """Fail unless no effect fired more than once: no RA701 (crash path), RA704 (stray resume), RA705 (concurrent resumes)."""
    __tracebackhide__ = True
    _check(
        report, EXACTLY_ONCE_RULES, "exactly-once (no effect fired twice: crash path, stray resume, concurrent resumes)"
    )


def assert_conformant(report: SweptReport, *properties: str) -> None:
    """Fail if any finding breaks one of ``properties`` (contract ids such as ``"FD"``, ``"CO"``, or
    dynamic rule ids such as ``"RA703"``); with none given, every property of the contract."""
    __tracebackhide__ = True
    rules = rules_for(properties)
    names = [p.strip().upper() for p in properties]
    what = ", ".join(f"{p} ({PROPERTIES[p]})" if p in PROPERTIES else p for p in names) or "the whole resume contract"
    _check(report, rules, what)


def _check(report: SweptReport, rules: tuple[str, ...], what: str) -> None:
    __tracebackhide__ = True
    found = violations(report, rules)
    if found:
        raise ResumeContractError(format_violations(report, found, what), report=report, findings=found, checked=rules)
    unchecked = _unchecked(report, rules)
    if unchecked:
        raise SweepIncomplete(format_unchecked(report, unchecked, what), report=report, checked=rules)


def _unchecked(report: SweptReport, rules: tuple[str, ...]) -> list[str]:
    """Why some of ``rules`` could not be decided: an incomplete sweep, or error cells they depend on."""
    if not report.complete:
        why = next((n.message for n in reversed(report.notifications)), "the uninterrupted run did not complete")
        return [why]
    cells_of = rule_cells()
    kinds = {k for r in rules for k in cells_of.get(r, ())}
    return [
        f"{c.kind} cell `{c.name}` ended in an error: {c.detail}"
        for c in report.cells
        if c.kind in kinds and c.verdict == ERROR
    ]


# -- formatting -----------------------------------------------------------------------------------
def format_violations(report: SweptReport, findings: list[Finding], what: str) -> str:
    """The failure message: a headline, then one witness block per finding."""
    n = len(findings)
    lines = [
        f"resume contract broken by {report.target}: {what}",
        f"{n} violation{'s' if n != 1 else ''} ({report.backend} backend, {_versions(report)})",
    ]
    fixes_shown: set[str] = set()
    for f in findings:
        lines.append("")
        lines.extend(format_finding(f, with_fix=f.rule_id not in fixes_shown))
        fixes_shown.add(f.rule_id)
    return "\n".join(lines)


def format_unchecked(report: SweptReport, reasons: list[str], what: str) -> str:
    lines = [f"resume contract not checked for {report.target}: {what}", ""]
    for r in reasons:
        lines.extend(_wrap(r, "  ", "  "))
    lines.append("")
    lines.append(
        "  A property that was never exercised does not pass; fix the run (or raise `timeout=`) and sweep again."
    )
    return "\n".join(lines)


def format_finding(f: Finding, *, with_fix: bool = True) -> list[str]:
    """One violation as an indented witness block (no reprs: counts, values and names only)."""
    w = f.witness or {}
    props = "/".join(f.properties)
    lines = [f"{f.rule_id} [{props}] {headline(f.rule_id)}"]
    where = f"{f.span.path}:{f.span.start_line}"
    lines.append(f"  at {where}" + (f", node `{f.scope}`" if f.scope else ""))
    # the probe's typed witness renders itself; without one, the finding's sentence says what happened
    body = f.evidence.lines() if f.evidence is not None else []
    lines.extend(body)
    also = w.get("also_at") or []
    if also:
        lines.append(
            f"  also at:     {len(also)} other cell{'s' if len(also) != 1 else ''}: "
            + "; ".join(also[:3])
            + (" ..." if len(also) > 3 else "")
        )
    if not body:  # no dedicated layout for this witness: the finding's own sentence says what happened
        lines.extend(_wrap(f.message, "  ", "  "))
    if with_fix:
        lines.extend(_wrap(f.fix, "  fix: ", "       "))
    return lines


def _wrap(text: str, first: str, rest: str) -> list[str]:
    return textwrap.wrap(
        " ".join(str(text).split()),
        width=_WIDTH,
        initial_indent=first,
        subsequent_indent=rest,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [first.rstrip()]


def _versions(report: SweptReport) -> str:
    """``langgraph 1.2.24``: the swept framework and its installed version, when the report knows it."""
    name = report.framework
    v = report.versions.get(name) or report.versions.get(name.replace("_", "-"))
    return f"{name} {v}" if v else name
