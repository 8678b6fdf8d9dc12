"""What a scan needs to know about the static rules before it analyses anything -- without
importing them.

A warm scan of an unchanged tree takes every result from the cache; what it still needs of the
rules is their ids (configuration, cache keys, unknown ids in suppression comments), their
pre-filter inputs (frameworks and trigger words) and, for the report, their names. Importing the
rule modules for that costs more than the rest of such a run: they import LibCST and the whole
analysis. So the first scan that imports the rules writes this metadata to the cache directory,
keyed by :func:`tool_fingerprint` (a hash of the package's source, rules included), and later
scans by the same code read it back. Any edit to the code changes the key: a stale snapshot is
never read, so results cannot depend on whether it was used. JSON, like the rest of the cache: it
must never be a way to run code.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from resume_audit.cache.jsonfile import write_json_atomically
from resume_audit.reading.prefilter import Trigger

SNAPSHOT_FORMAT = 1


@dataclass(frozen=True)
class RuleInfo:
    """One static rule as the scan's set-up and the reports see it (attribute names match
    :class:`resume_audit.rules.Rule`, so the pre-filter takes either)."""

    id: str
    name: str
    frameworks: tuple[str, ...]
    triggers: tuple[Trigger, ...]


def _package_dirs() -> list[Path]:
    """The folders whose source the fingerprint hashes: the package and the rules (a separate
    folder in a development checkout), found without importing the rules."""
    dirs = {Path(__file__).parent.parent}  # the package's own folder (this is catalog/ruleindex.py)
    spec = importlib.util.find_spec("resume_audit.rules")
    if spec is not None and spec.submodule_search_locations:
        dirs.add(Path(list(spec.submodule_search_locations)[0]))
    return sorted(dirs)


@functools.lru_cache(maxsize=1)
def tool_fingerprint() -> str:
    """Hash of the analysing code itself (the engine and the rules), so a cache written by an
    edited or upgraded checkout is never reused: the version string alone does not move
    between commits."""
    digest = hashlib.blake2b(digest_size=16)
    for package_dir in _package_dirs():
        for path in sorted(package_dir.rglob("*.py")):
            digest.update(path.as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _from_class(rule: Any) -> RuleInfo:
    return RuleInfo(
        rule.id,
        rule.name,
        tuple(rule.frameworks),
        tuple(t if isinstance(t, Trigger) else Trigger((t,)) for t in rule.triggers),
    )


def _imported() -> tuple[RuleInfo, ...]:
    from resume_audit.rules import all_rules

    return tuple(_from_class(r) for r in all_rules())


def _snapshot_path(cache_dir: Path) -> Path:
    # JSON, but not named ``*.json``: those are the result cache's entries (and the file table)
    return cache_dir / f"rules-{tool_fingerprint()}.snapshot"


def _read(path: Path) -> tuple[RuleInfo, ...] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("format") != SNAPSHOT_FORMAT:
            return None
        return tuple(
            RuleInfo(
                str(r["id"]),
                str(r["name"]),
                tuple(str(f) for f in r["frameworks"]),
                tuple(
                    Trigger(tuple(str(w) for w in words), None if framework is None else str(framework))
                    for words, framework in r["triggers"]
                ),
            )
            for r in data["rules"]
        )
    except (OSError, ValueError, TypeError, KeyError):  # absent or damaged: import the rules instead
        return None


def _write(path: Path, rules: tuple[RuleInfo, ...]) -> None:
    data = {
        "format": SNAPSHOT_FORMAT,
        "rules": [
            {
                "id": r.id,
                "name": r.name,
                "frameworks": list(r.frameworks),
                "triggers": [[list(t.words), t.framework] for t in r.triggers],
            }
            for r in rules
        ],
    }
    with contextlib.suppress(OSError):  # an unwritable cache: the next scan imports the rules again
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomically(path, data)


_known: tuple[RuleInfo, ...] | None = None


def static_rules(cache_dir: Path | None = None) -> tuple[RuleInfo, ...]:
    """Every static rule, sorted by id: from the rule classes when they are imported already (or
    there is no cache directory), else from the snapshot in ``cache_dir`` -- written there from the
    classes when missing. Remembered for the rest of the process (the code cannot change under it)."""
    global _known
    if _known is not None:
        return _known
    if cache_dir is None or "resume_audit.rules" in sys.modules:
        _known = _imported()
        if cache_dir is not None and not _snapshot_path(cache_dir).exists():
            _write(_snapshot_path(cache_dir), _known)
        return _known
    path = _snapshot_path(cache_dir)
    found = _read(path)
    if found is None:
        found = _imported()
        _write(path, found)
    _known = found
    return _known


def rule_ids(cache_dir: Path | None = None) -> list[str]:
    """Every static rule id, sorted."""
    return [r.id for r in static_rules(cache_dir)]


def rule_name(rule_id: str) -> str | None:
    """The name of a static rule (None: not a static rule id), for a report."""
    for r in static_rules():
        if r.id == rule_id:
            return r.name
    return None
