"""The scan's pre-filter: which files are worth parsing, and which rules run on each.

Parsing is most of a scan's cost, so a file is parsed only when its bytes hold
something a rule can act on: an import of a framework the rule knows, a marker
of such a framework (a LangGraph run config in a controller that imports no
langgraph), or one of the rule's :class:`Trigger` s. A trigger mirrors the
rule's own site condition as closely as plain text allows -- every word of it
must appear in the file, and a trigger that only matters for one framework (a
CrewAI Flow's state restored by hand) counts only when some file of the scan
uses that framework. A rule then runs only on the candidates that hold its own
trigger or use its framework, never on every file another rule let in:
``thread_id`` in a threading module must not send a LangGraph rule tracing
through a whole library.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Iterable, Mapping, Protocol, Sequence

from resume_audit.frameworks import registry

#: import names of each framework a rule can declare (``Rule.frameworks``), by id and by alias: derived
#: from the framework registry (:mod:`resume_audit.frameworks.registry`)
FRAMEWORK_PACKAGES: Mapping[str, tuple[str, ...]] = registry.Table(lambda fw: fw.import_names, aliases=True)


@dataclass(frozen=True)
class Trigger:
    """Text that makes a file worth checking for a rule: all of ``words`` appear in it, and --
    when ``framework`` is set -- some file of the scan imports that framework."""

    words: tuple[str, ...]
    framework: str | None = None

    def __post_init__(self) -> None:
        if not self.words:
            raise ValueError("a trigger needs at least one word")


#: text that shows a file drives a framework without importing it: the controller that runs a
#: graph it gets from another module (``from app.graph import graph``) builds LangGraph's run
#: config, and a CrewAI driver kicks a Flow off. A file holding a marker is that framework's code
#: for every rule (corpus: a FastAPI controller whose get_state gates a resume imports no langgraph)
FRAMEWORK_MARKERS: dict[str, tuple[Trigger, ...]] = {
    "langgraph": (Trigger(("thread_id", "configurable")),),
    "crewai": (Trigger(("kickoff(",)),),
}


def _as_trigger(value: "str | Trigger") -> Trigger:
    return value if isinstance(value, Trigger) else Trigger((value,))


def _packages(framework: str) -> tuple[str, ...]:
    return tuple(FRAMEWORK_PACKAGES.get(framework, (framework,)))


def import_words(packages: Iterable[str]) -> tuple[str, ...]:
    """``import P`` and ``from P`` for each package: the text of a module that imports one."""
    return tuple(w for p in packages for w in (f"import {p}", f"from {p}"))


def _import_phrases(package: str) -> tuple[bytes, bytes]:
    importing, from_ = import_words((package,))
    return importing.encode(), from_.encode()


class RuleTriggers(Protocol):
    """What the pre-filter reads of a rule: a rule class, or its
    :class:`~resume_audit.catalog.ruleindex.RuleInfo` (a scan reads files before it imports any rule)."""

    @property
    def id(self) -> str: ...

    @property
    def frameworks(self) -> tuple[str, ...]: ...

    @property
    def triggers(self) -> "tuple[str | Trigger, ...]": ...


@dataclass(frozen=True)
class FileMatch:
    """What the pre-filter saw in one file's bytes."""

    #: frameworks the file imports (by the text of the import) or holds a marker of
    frameworks: frozenset[str]
    #: indexes (into :attr:`Prefilter.triggers`) of the triggers whose words all appear
    triggers: frozenset[int]

    @property
    def empty(self) -> bool:
        return not self.frameworks and not self.triggers


NO_MATCH = FileMatch(frozenset(), frozenset())


class Prefilter:
    """One per scan (and per worker): built from the active rules."""

    def __init__(self, rules: Sequence[RuleTriggers]) -> None:
        self.rules = tuple(rules)
        triggers: list[Trigger] = []
        self._rule_triggers: dict[str, tuple[int, ...]] = {}
        for rule in self.rules:
            own = []
            for t in map(_as_trigger, rule.triggers):
                if t not in triggers:
                    triggers.append(t)
                own.append(triggers.index(t))
            self._rule_triggers[rule.id] = tuple(own)
        self.triggers: tuple[Trigger, ...] = tuple(triggers)
        self.frameworks = tuple(
            sorted({f for rule in self.rules for f in rule.frameworks} | {t.framework for t in triggers if t.framework})
        )
        self._imports = {f: tuple((p.encode(), _import_phrases(p)) for p in _packages(f)) for f in self.frameworks}
        #: every framework's import phrases (``import P``, ``from P``): a caller that searched a
        #: file for them hands :meth:`match` the ones it holds instead of having them searched again
        self.import_phrases: tuple[str, ...] = import_words(p for f in self.frameworks for p in _packages(f))
        self._phrases_of = {f: frozenset(import_words(_packages(f))) for f in self.frameworks}
        self._markers = {
            f: tuple(tuple(w.encode() for w in t.words) for t in FRAMEWORK_MARKERS.get(f, ())) for f in self.frameworks
        }
        self._trigger_words = tuple(tuple(w.encode() for w in t.words) for t in triggers)

    def _uses(self, framework: str, raw: bytes, imported: frozenset[str] | None) -> bool:
        # ``import P`` and ``from P`` both hold ``P``: one search for the package rules out both
        # in the files that never name it (nearly all of a big tree), each a pass over the file
        if imported is not None:
            by_import = not self._phrases_of[framework].isdisjoint(imported)
        else:
            by_import = any(
                package in raw and any(w in raw for w in words) for package, words in self._imports[framework]
            )
        return by_import or any(all(w in raw for w in marker) for marker in self._markers[framework])

    def match(self, raw: bytes, imported: frozenset[str] | None = None) -> FileMatch:
        """The frameworks ``raw`` uses and the triggers it holds (plain byte searches).
        ``imported``: which of :attr:`import_phrases` ``raw`` holds, when the caller has searched
        for them (the scan's readers find them with the import phrases every scan asks about
        anyway, by one pass over each ``import`` and ``from``); None: searched here."""
        frameworks = frozenset(f for f in self.frameworks if self._uses(f, raw, imported))
        hit = frozenset(i for i, words in enumerate(self._trigger_words) if all(w in raw for w in words))
        return FileMatch(frameworks, hit) if frameworks or hit else NO_MATCH

    def _trigger_counts(self, index: int, in_scan: frozenset[str]) -> bool:
        framework = self.triggers[index].framework
        return framework is None or framework in in_scan

    def is_candidate(self, match: FileMatch, in_scan: frozenset[str]) -> bool:
        """Worth parsing: it uses a framework some rule knows, or holds a trigger that counts
        in this scan (``in_scan``: the frameworks any file of the scan uses)."""
        return bool(match.frameworks) or any(self._trigger_counts(i, in_scan) for i in match.triggers)

    def is_candidate_for(self, rules: Sequence[RuleTriggers], match: FileMatch, in_scan: frozenset[str]) -> bool:
        """:meth:`is_candidate` as the pre-filter of only ``rules`` (some of this one's) would
        answer, from this one's ``match``: a scan whose packages run different rules reads each
        file once, with every package's rules, yet parses a file only for its own."""
        own = [i for rule in rules for i in self._rule_triggers.get(rule.id, ())]
        frameworks = {f for rule in rules for f in rule.frameworks} | {
            f for f in (self.triggers[i].framework for i in own) if f
        }
        return bool(match.frameworks & frameworks) or any(
            i in match.triggers and self._trigger_counts(i, in_scan) for i in own
        )

    def applies(self, rule: RuleTriggers, match: FileMatch, in_scan: frozenset[str]) -> bool:
        """Does ``rule`` run on a file with ``match``?"""
        if match.frameworks & set(rule.frameworks):
            return True
        return any(
            i in match.triggers and self._trigger_counts(i, in_scan) for i in self._rule_triggers.get(rule.id, ())
        )


def frameworks_in_scan(matches: Iterable[FileMatch]) -> frozenset[str]:
    """Every framework some file of the scan uses."""
    out: set[str] = set()
    for m in matches:
        out |= m.frameworks
    return frozenset(out)


@functools.lru_cache(maxsize=32)
def prefilter_for(rules: tuple[RuleTriggers, ...]) -> Prefilter:
    return Prefilter(rules)
