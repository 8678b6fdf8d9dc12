"""``[tool.resume-audit]`` configuration, merged with command-line flags.

Configuration lives in the scanned project's ``pyproject.toml``: each file
takes the nearest one above it that has the section, so the packages of a
monorepo keep their own settings (:mod:`resume_audit.config.tree`; ``--config``
forces one for every file). Flags on the command line override every one. Bad configuration stops the run with exit code
2 and a message naming the key and the file: a typo in ``ignore`` must not
silently turn a rule off.

Example::

    [tool.resume-audit]
    select = ["RA1", "RA201"]          # ids or id prefixes; default: all
    ignore = ["RA301"]
    exclude = ["migrations/", "scripts/one_off.py"]   # gitignore syntax, relative to this file's folder
    fail-on = "error"                  # error | warning | note | never (scan-wide)
    respect-gitignore = true           # skip what .gitignore ignores (scan-wide)
    force-exclude = false              # exclude even files named on the command line (scan-wide)
    fail-on-unused-suppressions = true # exit 1 when a suppression comment is unused (scan-wide; default: report only)
    effect-sinks = ["myapp.billing.charge", "myapp.notify.*"]
    safe-calls = ["myapp.audit.log_event"]
    safe-urls = ["*/rpc/search", "https://internal.example.com/query*"]   # POSTs that only read
    read-only-tools = ["get_*", "list_*", "search_*", "read_*", "lookup_*"]   # MCP / LangChain tool names

    [tool.resume-audit.per-path-ignores]
    "tests/*" = ["RA101", "RA103"]
"""

from __future__ import annotations

import fnmatch
import sys
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Iterable

from resume_audit.findings import Severity

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


class ConfigError(Exception):
    """Invalid configuration: the CLI prints it and exits with code 2."""


FAIL_ON_CHOICES = ("error", "warning", "note", "never")

#: tool names that only read, by convention (MCP servers and LangChain toolkits name them so)
DEFAULT_READ_ONLY_TOOLS = ("get_*", "list_*", "search_*", "read_*")


@dataclass
class Config:
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    per_path_ignores: dict[str, list[str]] = field(default_factory=dict)
    effect_sinks: list[str] = field(default_factory=list)
    safe_calls: list[str] = field(default_factory=list)
    #: URL globs of endpoints that only read although called with POST (RPC-style search APIs)
    safe_urls: list[str] = field(default_factory=list)
    #: tool-name globs of MCP / LangChain tools that only read
    read_only_tools: list[str] = field(default_factory=lambda: list(DEFAULT_READ_ONLY_TOOLS))
    fail_on: str = "warning"
    #: skip what ``.gitignore`` files (and ``.git/info/exclude``) ignore; scan-wide, from the root config
    respect_gitignore: bool = True
    #: apply ``exclude`` and ``.gitignore`` to paths named on the command line too; scan-wide
    force_exclude: bool = False
    #: exit 1 when a ``# resume-audit: ignore`` comment suppresses nothing or names an unknown rule
    fail_on_unused_suppressions: bool = False
    #: environment variables ``crash-sweep`` and ``audit`` pass to the program beside the allow-list (by name)
    pass_env: list[str] = field(default_factory=list)
    #: the pyproject.toml the settings came from, if any
    source: Path | None = None

    @property
    def base_dir(self) -> Path | None:
        return self.source.parent if self.source is not None else None

    def rule_enabled(self, rule_id: str) -> bool:
        if self.select is not None and not any(rule_id.startswith(s) for s in self.select):
            return False
        return not any(rule_id.startswith(i) for i in self.ignore)

    def ignored_for_path(self, rule_id: str, relpath: str) -> bool:
        for pattern, ids in self.per_path_ignores.items():
            if fnmatch.fnmatchcase(relpath, pattern) and any(rule_id.startswith(i) for i in ids):
                return True
        return False

    def fail_threshold(self) -> Severity | None:
        return None if self.fail_on == "never" else Severity(self.fail_on)

    def fingerprint(self) -> str:
        """A stable text of everything that changes results, for the cache key. The folder the
        file sits in is part of it: ``per-path-ignores`` patterns are relative to it."""
        return repr(
            (
                str(self.base_dir.resolve()) if self.base_dir is not None else None,
                self.select,
                sorted(self.ignore),
                sorted(self.exclude),
                sorted((k, sorted(v)) for k, v in self.per_path_ignores.items()),
                self.effect_sinks,
                self.safe_calls,
                self.safe_urls,
                self.read_only_tools,
            )
        )


class KeyKind(str, Enum):
    """The TOML type a key takes."""

    LIST = "list of strings"
    ARRAY = "list of values"
    TABLE = "table"
    STR = "string"
    BOOL = "boolean"
    ANY = "any TOML value"


class KeyScope(str, Enum):
    """Which table's value applies: every file its own nearest table, or the scan's root table."""

    PER_FILE = "per file"
    SCAN_WIDE = "scan-wide"
    PER_TARGET = "per entry point"  # the sub-tables of [tool.resume-audit.audit]


@dataclass(frozen=True)
class ConfigKey:
    """One key of ``[tool.resume-audit]``: the validator reads its kind, and the configuration
    reference (``docs/reference/configuration.md``, rendered by :mod:`resume_audit.catalog.reference`)
    every field, so a key cannot be accepted without being documented."""

    name: str
    kind: KeyKind
    scope: KeyScope
    default: str
    help: str


#: every key ``[tool.resume-audit]`` accepts, in the order the reference lists them
CONFIG_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(
        "select",
        KeyKind.LIST,
        KeyScope.PER_FILE,
        "every rule",
        "Rule ids or prefixes to run (`RA1` is RA101-RA199; `ALL` is every rule). An empty list is an error.",
    ),
    ConfigKey("ignore", KeyKind.LIST, KeyScope.PER_FILE, "none", "Rule ids or prefixes not to run."),
    ConfigKey(
        "exclude",
        KeyKind.LIST,
        KeyScope.PER_FILE,
        "none",
        "Paths to skip, gitignore syntax, relative to this file's folder (the table that applies to a "
        "folder decides what in it is skipped).",
    ),
    ConfigKey(
        "per-path-ignores",
        KeyKind.TABLE,
        KeyScope.PER_FILE,
        "none",
        "A table of glob (relative to this file's folder) to the rule ids or prefixes not reported there.",
    ),
    ConfigKey(
        "effect-sinks",
        KeyKind.LIST,
        KeyScope.PER_FILE,
        "none",
        "Qualified names or globs of your own functions that are effects (`myapp.billing.charge`, `myapp.notify.*`).",
    ),
    ConfigKey(
        "safe-calls",
        KeyKind.LIST,
        KeyScope.PER_FILE,
        "none",
        "Qualified names or globs of calls that are never effects, whatever the catalog says.",
    ),
    ConfigKey(
        "safe-urls",
        KeyKind.LIST,
        KeyScope.PER_FILE,
        "none",
        "URL globs of endpoints that only read although called with POST (RPC-style search APIs).",
    ),
    ConfigKey(
        "read-only-tools",
        KeyKind.LIST,
        KeyScope.PER_FILE,
        ", ".join(f"`{g}`" for g in DEFAULT_READ_ONLY_TOOLS),
        "Tool-name globs of MCP / LangChain tools that only read (setting it replaces the default).",
    ),
    ConfigKey(
        "fail-on",
        KeyKind.STR,
        KeyScope.SCAN_WIDE,
        "`warning`",
        f"Exit 1 when a finding is at or above this severity: {', '.join(FAIL_ON_CHOICES)}.",
    ),
    ConfigKey(
        "respect-gitignore",
        KeyKind.BOOL,
        KeyScope.SCAN_WIDE,
        "`true`",
        "Skip what `.gitignore` files and `.git/info/exclude` ignore.",
    ),
    ConfigKey(
        "force-exclude",
        KeyKind.BOOL,
        KeyScope.SCAN_WIDE,
        "`false`",
        "Apply `exclude` and `.gitignore` to files named on the command line too (as pre-commit needs).",
    ),
    ConfigKey(
        "fail-on-unused-suppressions",
        KeyKind.BOOL,
        KeyScope.SCAN_WIDE,
        "`false`",
        "Exit 1 when a `# resume-audit: ignore` comment suppresses nothing or names an unknown rule id.",
    ),
    ConfigKey(
        "pass-env",
        KeyKind.LIST,
        KeyScope.SCAN_WIDE,
        "none",
        "Environment variables the sweep's children get beside the allow-list (`resume-audit audit`, "
        "`crash-sweep`; docs/sandbox.md). Secrets stay out unless named here.",
    ),
    ConfigKey(
        "audit",
        KeyKind.TABLE,
        KeyScope.SCAN_WIDE,
        "none",
        "Per-entry-point sweep settings of `resume-audit audit`, one sub-table per target "
        "(read and checked by `resume_audit.audit.plan`; keys below).",
    ),
)

_KEYS = {key.name: key.kind for key in CONFIG_KEYS}


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above ``start`` that has a [tool.resume-audit] table."""
    start = start.resolve()
    directory = start if start.is_dir() else start.parent
    for candidate_dir in (directory, *directory.parents):
        candidate = candidate_dir / "pyproject.toml"
        if has_table(candidate):
            return candidate
    return None


def has_table(candidate: Path) -> bool:
    """Whether ``candidate`` is a pyproject.toml with a [tool.resume-audit] table. One that
    cannot be read is an error, not "no table": its settings would silently not apply."""
    if not candidate.is_file():
        return False
    try:
        data = tomllib.loads(candidate.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        raise ConfigError(f"{candidate}: cannot read TOML: {exc}") from exc
    tool = data.get("tool")
    return isinstance(tool, dict) and "resume-audit" in tool


def load_config(pyproject: Path | None, known_rule_ids: Iterable[str]) -> Config:
    """Read and validate ``[tool.resume-audit]`` from ``pyproject`` (or defaults when None)."""
    if pyproject is None:
        return Config()
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"{pyproject}: file not found") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        raise ConfigError(f"{pyproject}: cannot read TOML: {exc}") from exc
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{pyproject}: `tool` must be a table ([tool.resume-audit] lives under it)")
    table = tool.get("resume-audit", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: [tool.resume-audit] must be a table")
    return config_from_table(table, pyproject, known_rule_ids)


def config_from_table(table: dict[str, Any], source: Path | None, known_rule_ids: Iterable[str]) -> Config:
    where = str(source) if source else "configuration"
    known = set(known_rule_ids)
    for key, value in table.items():
        kind = _KEYS.get(key)
        if kind is None:
            raise ConfigError(f"{where}: unknown key tool.resume-audit.{key} (known: {', '.join(sorted(_KEYS))})")
        if kind is KeyKind.LIST and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise ConfigError(f"{where}: tool.resume-audit.{key} must be a list of strings, got {value!r}")
        if kind is KeyKind.STR and not isinstance(value, str):
            raise ConfigError(f"{where}: tool.resume-audit.{key} must be a string, got {value!r}")
        if kind is KeyKind.BOOL and not isinstance(value, bool):
            raise ConfigError(f"{where}: tool.resume-audit.{key} must be true or false, got {value!r}")
        if kind is KeyKind.TABLE and not isinstance(value, dict):
            raise ConfigError(f"{where}: tool.resume-audit.{key} must be a table, got {value!r}")
    cfg = Config(source=source)
    if "select" in table:
        cfg.select = validate_rule_ids(table["select"], known, f"{where}: tool.resume-audit.select")
    if "ignore" in table:
        cfg.ignore = validate_rule_ids(table["ignore"], known, f"{where}: tool.resume-audit.ignore")
    # gitignore patterns, relative to the file's folder (Config.base_dir): kept as written
    cfg.exclude = list(table.get("exclude", []))
    cfg.respect_gitignore = bool(table.get("respect-gitignore", True))
    cfg.force_exclude = bool(table.get("force-exclude", False))
    cfg.effect_sinks = list(table.get("effect-sinks", []))
    cfg.safe_calls = list(table.get("safe-calls", []))
    cfg.safe_urls = list(table.get("safe-urls", []))
    cfg.pass_env = list(table.get("pass-env", []))
    if "read-only-tools" in table:
        cfg.read_only_tools = list(table["read-only-tools"])
    if "fail-on" in table:
        cfg.fail_on = validate_fail_on(table["fail-on"], f"{where}: tool.resume-audit.fail-on")
    cfg.fail_on_unused_suppressions = table.get("fail-on-unused-suppressions", False)
    for pattern, ids in table.get("per-path-ignores", {}).items():
        if not (isinstance(ids, list) and all(isinstance(i, str) for i in ids)):
            raise ConfigError(f"{where}: tool.resume-audit.per-path-ignores.{pattern!r} must be a list of rule ids")
        cfg.per_path_ignores[pattern] = validate_rule_ids(ids, known, f"{where}: tool.resume-audit.per-path-ignores")
    return cfg


def validate_rule_ids(values: Iterable[str], known: set[str], where: str) -> list[str]:
    """Rule ids or prefixes (``RA1`` selects RA101-RA199); an unknown one is an error."""
    out: list[str] = []
    for raw in values:
        value = raw.strip().upper()
        if not value:
            continue
        if value == "ALL":
            out.append("RA")
            continue
        if not any(k.startswith(value) for k in known):
            raise ConfigError(f"{where}: unknown rule id {raw!r}")
        out.append(value)
    if select_like(where) and not out:
        raise ConfigError(
            f"{where}: selects no rule (an empty list would run nothing and pass); leave it out to run every rule"
        )
    return out


def select_like(where: str) -> bool:
    """Whether the option ``where`` chooses rules to run (empty is then an error, not "none")."""
    return where.endswith("select") or where.endswith("--select")


def validate_fail_on(value: str, where: str) -> str:
    if value not in FAIL_ON_CHOICES:
        raise ConfigError(f"{where}: must be one of {', '.join(FAIL_ON_CHOICES)}, got {value!r}")
    return value
