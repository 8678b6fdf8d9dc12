"""What ``audit`` sweeps each entry point with, decided without the user.

- **effects**: every effect the static stage found -- the function of the
  user's that performs it (``helpdesk.payments:issue_refund``), or the
  library call itself (``requests:post``) when a node makes it directly --
  is recorded by the ledger and stubbed (returning a value of the type the
  code expects, :mod:`resume_audit.dynamic.child.stub_values`), so nothing
  real fires; ``--live-effects`` lets them through;
- **model calls**: answered by the scripted fake chat model (``--stub-llm plain``);
- **input**: synthesised in the child from the graph's input schema;
- **interrupt answers**: a few usual answers are tried on the uninterrupted
  run, and the one that runs the most effects (the approving branch) is kept.

``[tool.resume-audit.audit."module:attr"]`` in ``pyproject.toml`` overrides
any of these (``input``, ``resume``, ``fork-resume``, ``config``, ``effects``,
``stubs``, ``stub-reads``, ``stub-llm``, ``env``, ``pass-env``, ``skip``); ``targets = ["module:attr", ...]`` in
``[tool.resume-audit.audit]`` names the entry points to sweep instead of the
ones discovery finds (as ``--target`` does).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import libcst as cst

from resume_audit.audit.entrypoints import EntryPoint
from resume_audit.audit.modules import Modules
from resume_audit.audit.sinks import imported_closure, library_effect
from resume_audit.audit.syntax import breadth_first_key, dotted
from resume_audit.config.settings import ConfigKey, KeyKind, KeyScope
from resume_audit.discovery.modulenames import module_name_for
from resume_audit.findings import Finding

if TYPE_CHECKING:
    from resume_audit.facts.collect import ModuleFacts

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10
    import tomli as tomllib

#: answers tried at each interrupt when the configuration gives none, in order
ANSWER_CANDIDATES: tuple[Any, ...] = ("approve", True, "yes", {"approved": True}, "ok")
#: how many parks a candidate answer list covers
MAX_PARKS = 8


#: every key of a ``[tool.resume-audit.audit."module:attr"]`` table (the configuration reference lists them)
TARGET_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(
        "input",
        KeyKind.ANY,
        KeyScope.PER_TARGET,
        "synthesised from the input schema",
        "The graph's input (any TOML value the entry point takes; a table for a state dict).",
    ),
    ConfigKey(
        "resume",
        KeyKind.ARRAY,
        KeyScope.PER_TARGET,
        "the answer whose trial run fires the most effects",
        "The answers to the interrupts, one per interrupt, in order.",
    ),
    ConfigKey(
        "fork-resume",
        KeyKind.ANY,
        KeyScope.PER_TARGET,
        "derived: a negated bool, a different string",
        "The second answer the fork probe (RA703) sends at the same park.",
    ),
    ConfigKey("config", KeyKind.TABLE, KeyScope.PER_TARGET, "none", "Extra `configurable` keys of every run."),
    ConfigKey(
        "effects",
        KeyKind.LIST,
        KeyScope.PER_TARGET,
        "the static findings' effects",
        "More effect functions (`module:function`) the ledger records and stubs.",
    ),
    ConfigKey(
        "stubs",
        KeyKind.TABLE,
        KeyScope.PER_TARGET,
        "none",
        "A table of effect (`module:function`) to the value its stub returns.",
    ),
    ConfigKey(
        "stub-llm",
        KeyKind.STR,
        KeyScope.PER_TARGET,
        "`plain`",
        "The scripted fake chat model's script (a YAML file), or `plain`.",
    ),
    ConfigKey(
        "skip",
        KeyKind.STR,
        KeyScope.PER_TARGET,
        "not skipped",
        "Do not sweep this entry point; the text is the reason the report shows.",
    ),
    ConfigKey(
        "stub-reads",
        KeyKind.LIST,
        KeyScope.PER_TARGET,
        "none",
        "Calls (`module:function`) stubbed like effects but never counted as effects (a search, a lookup).",
    ),
    ConfigKey(
        "env",
        KeyKind.TABLE,
        KeyScope.PER_TARGET,
        "none",
        "Environment variables the program reads at import (`DATABASE_URL`), set in the sweep's children.",
    ),
    ConfigKey(
        "pass-env",
        KeyKind.LIST,
        KeyScope.PER_TARGET,
        "none",
        "Environment variables of the sweep's own environment this entry point's children also get "
        "(beside the allow-list and the root table's `pass-env`; docs/sandbox.md).",
    ),
)


class AuditConfigError(ValueError):
    """A malformed ``[tool.resume-audit.audit]`` table (the CLI's exit code 2)."""


@dataclass(frozen=True)
class TargetConfig:
    """``[tool.resume-audit.audit."module:attr"]``: what the user fixed for one entry point."""

    input: Any = None
    resume: list[Any] | None = None
    fork_resume: Any = None
    config: dict[str, Any] = field(default_factory=dict)
    effects: list[str] = field(default_factory=list)
    stubs: dict[str, Any] = field(default_factory=dict)
    stub_llm: str | None = None
    skip: str = ""
    #: calls stubbed but not counted as effects (a search, a CRM lookup the sandbox would refuse)
    stub_reads: list[str] = field(default_factory=list)
    #: environment variables the program reads at import (``DATABASE_URL``), set in the sweep's children
    env: dict[str, str] = field(default_factory=dict)
    #: environment variables this entry point's children get beside the allow-list (docs/sandbox.md)
    pass_env: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class AuditConfig:
    """``[tool.resume-audit.audit]``: the entry points named to sweep, and each one's own table."""

    per_target: dict[str, TargetConfig] = field(default_factory=dict)
    #: ``targets = [...]``: sweep these instead of what discovery finds (empty: discover)
    targets: tuple[str, ...] = ()

    def get(self, target: str, default: TargetConfig) -> TargetConfig:
        return self.per_target.get(target, default)


def load_config(paths: list[Path]) -> AuditConfig:
    """The audit tables of the nearest ``pyproject.toml`` above the first path (none: empty)."""
    start = paths[0].resolve() if paths else Path.cwd()
    for folder in ([start] if start.is_dir() else []) + list(start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            try:
                data = tomllib.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise AuditConfigError(f"{candidate}: {exc}") from None
            tool = data.get("tool")
            ours = tool.get("resume-audit") if isinstance(tool, dict) else None
            table = ours.get("audit") if isinstance(ours, dict) else None
            if table is None:
                continue
            if not isinstance(table, dict):
                raise AuditConfigError(f"{candidate}: [tool.resume-audit.audit] must be a table of targets")
            named = table.get("targets", [])
            if not isinstance(named, list) or not all(isinstance(t, str) and ":" in t for t in named):
                raise AuditConfigError(
                    f'{candidate}: [tool.resume-audit.audit] targets must be a list of "module:attr"'
                )
            return AuditConfig(
                {
                    target: _target_config(candidate, target, value)
                    for target, value in table.items()
                    if target != "targets"
                },
                tuple(named),
            )
    return AuditConfig()


def _target_config(source: Path, target: str, value: Any) -> TargetConfig:
    where = f'{source}: [tool.resume-audit.audit."{target}"]'
    if not isinstance(value, dict):
        raise AuditConfigError(f"{where} must be a table")
    known = {key.name for key in TARGET_KEYS}
    unknown = sorted(set(value) - known)
    if unknown:
        raise AuditConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    resume = value.get("resume")
    if resume is not None and not isinstance(resume, list):
        raise AuditConfigError(f"{where}: resume must be a list of answers, one per interrupt")
    pass_env = value.get("pass-env", [])
    if not (isinstance(pass_env, list) and all(isinstance(n, str) for n in pass_env)):
        raise AuditConfigError(f"{where}: pass-env must be a list of variable names")
    return TargetConfig(
        value.get("input"),
        resume,
        value.get("fork-resume"),
        dict(value.get("config", {})),
        list(value.get("effects", [])),
        dict(value.get("stubs", {})),
        value.get("stub-llm"),
        str(value.get("skip", "")),
        list(value.get("stub-reads", [])),
        {str(k): str(v) for k, v in dict(value.get("env", {})).items()},
        list(pass_env),
    )


#: an effect as ``--effect`` names it, and the file defining it (None: a library call)
Effect = tuple[str, "Path | None"]


def effects_for(entry: EntryPoint, effects: list[Effect], cwd: Path, modules: Modules) -> list[str]:
    """The ``effects`` (flagged by a finding or seen by the effect model) this entry point's program loads,
    each named as it is importable from the entry point's root.

    A helper's module is named by its path below the root the entry point is
    swept from -- the name the program itself imports it by, namespace
    folders included (``email_approval.email_tool``).
    """
    root = Path(entry.root).resolve()
    entry_file = (cwd / entry.path) if not Path(entry.path).is_absolute() else Path(entry.path)
    loaded = imported_closure(entry_file, root, modules) if entry_file.is_file() else set()
    # only from the modules the program loads anyway (a module it never imports is not imported for it)
    out: list[str] = []
    for name, module_file in effects:
        if module_file is not None and loaded and module_file.resolve() not in loaded:
            continue
        if module_file is not None:
            resolved = module_file.resolve()
            if root not in resolved.parents:
                continue  # another project's helper: not importable beside this entry point
            parts = list(resolved.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            if parts and all(p.isidentifier() for p in parts):
                name = ".".join(parts) + ":" + name.partition(":")[2]
        if name not in out:
            out.append(name)
    return out


def effect_of(f: Finding, cwd: Path, modules: Modules | None = None) -> Effect | None:
    """The effect a finding's code flow ends in, as ``--effect`` names it (and the file defining it);
    ``modules``: the audit's parsed modules (else the file is parsed here)."""
    steps = f.flows[0] if f.flows else ()
    sink = steps[-1].span if steps else (f.span if not f.related else None)
    if sink is None:
        return None
    path = (cwd / sink.path) if not Path(sink.path).is_absolute() else Path(sink.path)
    facts = (modules or Modules()).facts(path, sink.path)
    if facts is None:
        return None
    line = sink.start_line
    enclosing = next(
        (
            s
            for s in facts.tree.body
            if isinstance(s, cst.FunctionDef) and facts.position(s)[0][0] <= line <= facts.position(s)[1][0]
        ),
        None,
    )
    module, _ = module_name_for(path)
    if enclosing is not None and len(steps) > 1 and enclosing.name.value != f.scope.split(".")[-1]:
        return f"{module}:{enclosing.name.value}", path  # the user's helper that performs the effect
    # the call on the sink's line that a breadth-first reading meets first (the outermost)
    on_line = [c.node for c in facts.all_calls if facts.line(c.node) == line]
    call = min(on_line, key=lambda n: breadth_first_key(facts, n)) if on_line else None
    library = _library_callee(call, facts) if call is not None else None
    return (library, None) if library else None


def _library_callee(call: cst.Call, facts: ModuleFacts) -> str | None:
    """``requests.post(...)`` -> ``requests:post`` when ``requests`` is a module the file imports
    (a module-level ``import``)."""
    func = call.func
    chain: list[str] = []
    while isinstance(func, cst.Attribute):
        chain.insert(0, func.attr.value)
        func = func.value
    if not isinstance(func, cst.Name) or not chain:
        return None
    imported = {}
    for statement in facts.tree.body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Import):
                for alias in small.names:
                    name = dotted(alias.name)
                    local = alias.asname.name if alias.asname is not None else None
                    if isinstance(local, cst.Name):
                        imported[local.value] = name
                    else:
                        imported[name.split(".")[0]] = name.split(".")[0]
    return library_effect(imported.get(func.value), chain)
