"""What a rule is: metadata, documentation, examples, and a ``check``.

Each rule module defines one :class:`Rule` subclass carrying everything a
user sees -- id, contract property, severity, the one-line summary, the
runtime consequence, the fix, what it deliberately does not flag -- and its
own VALID and INVALID examples (Fixit's model). The test suite runs every
example; ``resume-audit explain`` and ``docs/rules/RAxxx.md`` are rendered
from the same fields, so code, docs and tests cannot drift apart.

In an INVALID example, each line that must produce a finding ends with the
marker comment ``# expect: RAxxx``. An example may be a single module or a
mapping of file paths to sources (for cross-module cases).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Iterable, Mapping

import libcst as cst

from resume_audit.analysis.idempotency import replays_harmlessly
from resume_audit.findings import Autofix, Edit, Finding, FixSafety, FlowStep, Related, Severity, Span
from resume_audit.reading.prefilter import Trigger

__all__ = ["Example", "FixExample", "Rule", "RuleContext", "Trigger"]

if TYPE_CHECKING:
    from resume_audit.analysis.configs import ConfigEvaluator
    from resume_audit.analysis.effects import Effect, EffectModel
    from resume_audit.analysis.project import Project
    from resume_audit.analysis.queries import Reached
    from resume_audit.analysis.resolve import Resolver
    from resume_audit.facts.model import CallInfo, ModuleFacts


@dataclass(frozen=True)
class Example:
    """A runnable example: source of one module, or ``{"pkg/mod.py": source, ...}``."""

    code: str | Mapping[str, str]
    note: str = ""

    def files(self) -> dict[str, str]:
        if isinstance(self.code, str):
            return {"example.py": textwrap.dedent(self.code).lstrip("\n")}
        return {path: textwrap.dedent(src).lstrip("\n") for path, src in self.code.items()}


@dataclass(frozen=True)
class FixExample:
    """A rule's fix, shown and tested: ``resume-audit fix`` (``unsafe`` with ``--unsafe-fixes``)
    turns ``before`` into exactly ``after``, and the rule finds nothing in ``after``."""

    before: str
    after: str
    note: str = ""
    unsafe: bool = False

    def before_text(self) -> str:
        return textwrap.dedent(self.before).lstrip("\n")

    def after_text(self) -> str:
        return textwrap.dedent(self.after).lstrip("\n")


class Rule:
    """Base class of every static rule. Subclasses set the ClassVars and implement ``check``."""

    id: ClassVar[str]
    name: ClassVar[str]
    properties: ClassVar[tuple[str, ...]]
    severity: ClassVar[Severity]
    frameworks: ClassVar[tuple[str, ...]]
    #: one line: SARIF shortDescription and `resume-audit rules`
    summary: ClassVar[str]
    #: what the rule finds (markdown): SARIF fullDescription
    description: ClassVar[str]
    #: why it breaks at runtime: framework behaviour, measured, with issue numbers (markdown)
    runtime: ClassVar[str]
    #: the concrete fix (markdown)
    fix: ClassVar[str]
    #: what it deliberately does not flag, and why (markdown)
    not_flagged: ClassVar[str] = ""
    #: the dynamic findings (RA7xx) that reproduce this hazard when ``audit`` sweeps the graph it lives in
    confirmed_by: ClassVar[tuple[str, ...]] = ()
    #: rule ids that take precedence when both fire at the same location
    yields_to: ClassVar[tuple[str, ...]] = ()
    #: text that makes a file worth parsing for this rule (the scan's pre-filter), besides an
    #: import of one of the rule's ``frameworks`` (which always is): a word, or a
    #: :class:`~resume_audit.reading.prefilter.Trigger` (several words, or bound to a framework the scan uses);
    #: the rule runs only on files holding one of these (see :mod:`resume_audit.reading.prefilter`)
    triggers: ClassVar[tuple["str | Trigger", ...]] = ()
    VALID: ClassVar[tuple[Example, ...]] = ()
    INVALID: ClassVar[tuple[Example, ...]] = ()
    #: the rule's automatic fix, before and after (empty: no mechanical repair; ``no_autofix`` says why)
    FIXES: ClassVar[tuple[FixExample, ...]] = ()
    #: why there is no automatic fix (markdown), for a rule without ``FIXES``
    no_autofix: ClassVar[str] = ""

    def check(self, ctx: "RuleContext") -> Iterable[Finding]:  # pragma: no cover - abstract
        raise NotImplementedError


@dataclass
class RuleContext:
    """What a rule sees while checking one module of the project."""

    rule: Rule
    module: "ModuleFacts"
    project: "Project"
    effects: "EffectModel"
    configs: "ConfigEvaluator"
    _findings: list[Finding] = field(default_factory=list)

    @property
    def resolver(self) -> "Resolver":
        return self.project.resolver(self.module)

    # -- spans --------------------------------------------------------------
    def span(self, node: cst.CSTNode, module: "ModuleFacts | None" = None) -> Span:
        return (module or self.module).span(node)

    # -- effects --------------------------------------------------------------
    def effect_reached(self, call: "CallInfo", module: "ModuleFacts | None" = None) -> "Reached[Effect] | None":
        """The effect ``call`` performs, directly or through project helpers (with the path)."""
        m = module or self.module
        effects = self.effects
        project = self.project

        def classify(c: "CallInfo", mod: "ModuleFacts") -> "Effect | None":
            # a re-run that rewrites the same file or upserts the same row duplicates nothing
            hit = effects.classify(c, mod, project.resolver(mod))
            return None if hit is None or replays_harmlessly(c.node, hit) else hit

        return project.reach("effect", classify, call, m)

    def reached_related(
        self, reached: "Reached[object]", what: str
    ) -> tuple[tuple[Related, ...], tuple[FlowStep, ...]]:
        """Related locations and a code flow for a path through helpers: node -> helper -> sink."""
        related: list[Related] = []
        steps: list[FlowStep] = []
        for i, (call, mod) in enumerate(zip(reached.calls, reached.modules)):
            span = self.span(call.node, mod)
            if i == len(reached.calls) - 1:
                msg = what
            else:
                nxt = reached.calls[i + 1]
                fn = nxt.function
                msg = f"calls {fn.qualname if fn else 'helper'}()"
            steps.append(FlowStep(span, msg))
            if i > 0:
                related.append(Related(span, msg))
        return tuple(related), tuple(steps)

    # -- findings -------------------------------------------------------------
    def finding(
        self,
        node: cst.CSTNode,
        message: str,
        *,
        related: Iterable[Related] = (),
        flows: Iterable[tuple[FlowStep, ...]] = (),
        fix: str | None = None,
        module: "ModuleFacts | None" = None,
        severity: Severity | None = None,
        autofix: Autofix | None = None,
    ) -> Finding:
        """A finding at ``node`` (in ``module``, default the module being checked: a rule
        checking where a graph is compiled may report in the module defining its node).
        ``severity`` lowers (or raises) the rule's level for this finding, with the reason
        in the message (a host runtime that mitigates the hazard, say)."""
        where = module or self.module
        fn = where.enclosing_function(node)
        scope = fn.qualname if fn is not None else "<module>"
        return Finding(
            rule_id=self.rule.id,
            severity=severity or self.rule.severity,
            properties=self.rule.properties,
            message=message,
            fix=fix or _first_paragraph(self.rule.fix),
            span=self.span(node, where),
            related=tuple(related),
            flows=tuple(f for f in flows if f),
            scope=scope,
            autofix=autofix,
        )

    def replace(self, node: cst.CSTNode, code: str, module: "ModuleFacts | None" = None) -> Edit:
        """An edit putting ``code`` where ``node`` is: only the node's own text changes, so the
        comments and formatting around it survive."""
        return Edit(self.span(node, module), code)

    def autofix(self, description: str, *edits: Edit, unsafe: bool = False) -> Autofix:
        return Autofix(description, FixSafety.UNSAFE if unsafe else FixSafety.SAFE, tuple(edits))

    def describe_call(self, call: cst.Call, module: "ModuleFacts | None" = None) -> str:
        """Short source text of a call for messages: ``stripe.Charge.create(...)``."""
        m = module or self.module
        return f"{m.code(call.func)}(...)"


def _first_paragraph(text: str) -> str:
    return textwrap.dedent(text).strip().split("\n\n")[0].replace("\n", " ")
