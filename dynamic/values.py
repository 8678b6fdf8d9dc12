"""Turning run values into stable, comparable JSON.

Final states are compared across processes (the uninterrupted run against
every recovery) and written into the stable report, so they must serialise
the same way every time: pydantic models, dataclasses, enums, sets, messages
and arbitrary objects are all reduced to plain JSON with sorted keys.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
from typing import Any

_MAX_DEPTH = 40


def to_jsonable(value: Any, _depth: int = 0) -> Any:
    """A JSON-compatible, deterministic rendering of ``value``."""
    if _depth > _MAX_DEPTH:
        return "<too deep>"
    d = _depth + 1
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return repr(value)
        return value
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value, d)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, dict):
        return {str(k): to_jsonable(v, d) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v, d) for v in value]
    if isinstance(value, (set, frozenset)):
        items = [to_jsonable(v, d) for v in value]
        return sorted(items, key=lambda x: json.dumps(x, sort_keys=True))
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            data = dump(mode="json")
        except Exception:
            data = dump()
        # messages carry random ids; their content is what a comparison means
        if isinstance(data, dict) and "content" in data and "type" in data:
            data = {k: v for k, v in data.items() if k not in ("id",)}
        return to_jsonable(data, d)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable({f.name: getattr(value, f.name) for f in dataclasses.fields(value)}, d)
    return repr(value)


def canonical(value: Any) -> str:
    """Canonical JSON text of ``value`` (sorted keys, no whitespace variance)."""
    return json.dumps(to_jsonable(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def short(value: Any, limit: int = 80) -> str:
    """A one-line rendering for messages and tables."""
    text = json.dumps(to_jsonable(value), sort_keys=True, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def derive_fork_value(value: Any) -> Any:
    """The alternative answer the fork probe sends when the user gave none.

    It must differ from ``value`` and be of the same kind, so the graph takes
    the other branch where it can: a negated bool, a different string, ...
    """
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value + 1.0
    if isinstance(value, str):
        swaps = {
            "approve": "reject",
            "reject": "approve",
            "yes": "no",
            "no": "yes",
            "approved": "rejected",
            "rejected": "approved",
            "accept": "decline",
            "decline": "accept",
            "y": "n",
            "n": "y",
        }
        lowered = value.lower()
        if lowered in swaps:
            alt = swaps[lowered]
            return alt.upper() if value.isupper() else alt.capitalize() if value[:1].isupper() else alt
        return f"{value} (fork)"
    if value is None:
        return True
    if isinstance(value, dict):
        forked = dict(value)
        for k, v in forked.items():
            if isinstance(v, (bool, str, int, float)) and not isinstance(v, dict):
                forked[k] = derive_fork_value(v)
                return forked
        forked["resume_audit_fork"] = True
        return forked
    if isinstance(value, list):
        return [*value, "fork"]
    return {"resume_audit_fork": True}
