"""The effect model: which calls change the world in a way a re-run repeats.

Every EO rule asks the same question -- "is this call a non-idempotent side
effect?" -- so the answer lives here, once. A call is an effect when its
qualified name matches the sink table (:mod:`resume_audit.analysis.effect_catalog`:
HTTP mutating verbs, payment SDKs, email, message publish, cloud-SDK writes,
SQL writes, file writes and deletes, subprocesses, SaaS SDKs) or a sink the user
listed in ``[tool.resume-audit] effect-sinks``, or has the shape of one
(:mod:`resume_audit.analysis.effect_shapes`), and it neither only reads
(:mod:`resume_audit.analysis.effect_reads`) nor is keyed by an idempotency key
(:mod:`resume_audit.analysis.keys`; documented in docs/effects.md). SQL that is
idempotent by construction (``INSERT ... ON CONFLICT DO NOTHING``, ``INSERT OR
IGNORE``, ``INSERT IGNORE``) is no write at all.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from typing import Iterable

import libcst as cst

from resume_audit.analysis.effect_catalog import MCP_ADAPTER_CONSEQUENCE, SinkSpec, any_receiver_specs, sink_specs
from resume_audit.analysis.effect_kinds import KIND_CONSEQUENCES, Effect
from resume_audit.analysis.effect_reads import (
    MODEL_ENDPOINT,
    SET_ENDPOINT,
    commit_of_upserts_only,
    local_read_command,
    url_text,
)
from resume_audit.analysis.effect_shapes import google_chain_write, orm_session_commit
from resume_audit.analysis.keys import is_keyed
from resume_audit.analysis.queries import NameResolver
from resume_audit.facts.model import CallInfo, FunctionInfo, ModuleFacts
from resume_audit.facts.syntax import argument, string_value
from resume_audit.frameworks.langchain_tools import mcp_adapter_tool_run

__all__ = ["BUILTIN_SINKS", "KIND_CONSEQUENCES", "NAME_ONLY_SINKS", "Effect", "EffectModel", "SinkIndex", "SinkSpec"]

#: Built-in sinks, in the order they are tried: patterns are globs over resolved qualified names
#: (see :func:`_name_glob`: a whole ``*`` part spans dots, a ``*`` inside a part does not);
#: instance methods are written ``Type.method``.
BUILTIN_SINKS: tuple[SinkSpec, ...] = sink_specs()

#: Methods recognised by name alone, whatever the receiver: distinctive enough
#: that a match is an effect (``path.write_text``, ``channel.basic_publish``)
#: or checked by their arguments (``cursor.execute("INSERT ...")``).
NAME_ONLY_SINKS: tuple[SinkSpec, ...] = any_receiver_specs()


@functools.lru_cache(maxsize=None)
def _glob(pattern: str) -> re.Pattern[str]:
    return re.compile(fnmatch.translate(pattern))


@functools.lru_cache(maxsize=None)
def _name_glob(pattern: str) -> re.Pattern[str]:
    """A sink pattern over dotted names: a part that is only ``*`` (``slack_sdk.*.files_upload``) spans
    any number of parts, a ``*`` inside a part (``asyncio.create_subprocess_*``, ``os.exec*``) stays in
    it -- so ``proc.communicate()`` on what ``create_subprocess_exec`` returned, named
    ``asyncio.create_subprocess_exec.communicate``, is not the spawn again."""
    parts = []
    for part in pattern.split("."):
        if part == "*":
            parts.append(".*")
        else:
            parts.append("[^.]*".join(re.escape(piece) for piece in part.split("*")))
    return re.compile(r"\.".join(parts) + r"\Z")


class SinkIndex:
    """Sink patterns by the package a name must start with, so a call's names are matched against
    the few patterns of their own package (and the ones that may match any package) rather than
    all 300, in the order given: the first pattern that matches still wins. Each pattern is
    compiled when first tried (most never are in a scan)."""

    def __init__(self, specs: Iterable[SinkSpec]) -> None:
        by_top: dict[str, list[tuple[int, SinkSpec]]] = {}
        anywhere: list[tuple[int, SinkSpec]] = []
        for order, spec in enumerate(specs):
            top = spec.pattern.split(".", 1)[0]
            if any(ch in top for ch in "*?["):
                anywhere.append((order, spec))
            else:  # ``top.*.send`` matches only names whose first part is ``top``
                by_top.setdefault(top, []).append((order, spec))
        #: per package, its patterns and the ones that can match any package, merged in order once
        self._by_top = {
            top: [spec for _, spec in sorted([*own, *anywhere], key=lambda pair: pair[0])]
            for top, own in by_top.items()
        }
        self._anywhere = [spec for _, spec in anywhere]

    def matching(self, name: str) -> Iterable[SinkSpec]:
        """The specs whose pattern matches ``name``, in the order given."""
        tried = self._by_top.get(name.split(".", 1)[0], self._anywhere)
        return (spec for spec in tried if _name_glob(spec.pattern).match(name))


class EffectModel:
    """Classifies calls as effects; one instance per scan (it carries the user's sinks)."""

    def __init__(
        self,
        extra_sinks: Iterable[str] = (),
        safe_calls: Iterable[str] = (),
        *,
        safe_urls: Iterable[str] = (),
        read_only_tools: Iterable[str] = ("get_*", "list_*", "search_*", "read_*"),
    ) -> None:
        self._sinks = SinkIndex([*(SinkSpec(p, "configured") for p in extra_sinks), *BUILTIN_SINKS])
        self._name_only = {s.pattern: s for s in NAME_ONLY_SINKS}
        self._safe = [_glob(p) for p in safe_calls]
        self._safe_urls = [_glob(p) for p in safe_urls]
        self._read_only_tools = [_glob(p) for p in read_only_tools]

    def classify(self, call: CallInfo, module: ModuleFacts, resolver: NameResolver) -> Effect | None:
        """The effect ``call`` performs, or None (not an effect, or keyed by an idempotency key)."""
        found = self.classify_keyed(call, module, resolver)
        return found[0] if found is not None and not found[1] else None

    def classify_keyed(self, call: CallInfo, module: ModuleFacts, resolver: NameResolver) -> tuple[Effect, bool] | None:
        """The effect ``call`` performs and whether it is keyed by an idempotency key, or None (not an effect).

        The rules ask :meth:`classify` (a keyed call is no hazard); ``audit`` asks this, because a keyed
        call still changes the world: the sweep records and stubs it, and checks the key."""
        node = call.node
        names = resolver.call_names(node, call.function)
        if any(p.match(n) for p in self._safe for n in names):
            return None
        effect = (
            self._match(node, names) or google_chain_write(node, resolver, call.function) or orm_session_commit(call)
        )
        if effect is None and resolver.project is not None and isinstance(node.func, cst.Attribute):
            # langgraph ToolNodes / prebuilt agents over MCP adapter tools (the project traces the tools)
            runs = mcp_adapter_tool_run(node, call.function, module, resolver.project)
            if runs is not None:
                effect = Effect("mcp", f"{runs} ({module.code(node.func)})", MCP_ADAPTER_CONSEQUENCE)
        if effect is None:
            return None
        if effect.kind == "http" and self._reads_only(node, resolver, call.function):
            return None
        if effect.kind == "sql" and commit_of_upserts_only(call):
            return None
        if effect.kind == "subprocess" and local_read_command(node, resolver, call.function):
            return None
        if effect.kind == "mcp" and self.tool_reads_only(string_value(argument(node, 0, "name"))):
            return None
        return effect, is_keyed(node, resolver, call.function)

    def tool_reads_only(self, name: str | None) -> bool:
        """A tool whose name says it only reads (``get_*``, ``list_*``, ... or configured)."""
        return name is not None and any(p.match(name) for p in self._read_only_tools)

    def _reads_only(self, node: cst.Call, resolver: NameResolver, scope: FunctionInfo | None) -> bool:
        """A POST that is a model call (embeddings, completions) or to a URL configured as a read."""
        url = url_text(argument(node, 0, "url"), resolver, scope)
        if url is None:
            return False
        if MODEL_ENDPOINT.search(url) or SET_ENDPOINT.search(url):
            return True
        return any(p.match(url) for p in self._safe_urls)

    def _match(self, node: cst.Call, names: set[str]) -> Effect | None:
        for name in sorted(names):
            for spec in self._sinks.matching(name):
                if spec.when is None or spec.when(node):
                    return Effect(spec.kind, name, spec.consequence)
        if isinstance(node.func, cst.Attribute):
            named = self._name_only.get(node.func.attr.value)
            if named is not None and (named.when is None or named.when(node)):
                return Effect(named.kind, f".{node.func.attr.value}()", named.consequence)
        return None
