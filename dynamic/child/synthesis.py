"""An example input for a graph nobody wrote one for, from its input schema.

``audit`` sweeps graphs with no hand-written arguments. The child asks the
graph for its input JSON schema (LangGraph's ``get_input_jsonschema()``) and
builds one value from it: every property (required or not) gets a plain value
of its type -- a string shaped by its name (``email``, ``url``, ``id``), 1,
1.0, ``True``, an empty list, the first enum member, the first non-null
branch of a union, a nested object built the same way. The result is the same
on every call, so every child of a sweep runs the same protocol.
"""

from __future__ import annotations

from typing import Any

_MAX_DEPTH = 6


def example_from_schema(schema: dict[str, Any]) -> Any:
    """One deterministic value that validates against the JSON schema ``schema`` (for the schemas graphs declare)."""
    return _example(schema, schema.get("$defs") or schema.get("definitions") or {}, "", 0)


def _example(node: Any, defs: dict[str, Any], name: str, depth: int) -> Any:
    if not isinstance(node, dict) or depth > _MAX_DEPTH:
        return None
    ref = node.get("$ref")
    if isinstance(ref, str):
        return _example(defs.get(ref.rsplit("/", 1)[-1], {}), defs, name, depth + 1)
    if "const" in node:
        return node["const"]
    if "default" in node and node["default"] is not None:
        return node["default"]
    if isinstance(node.get("enum"), list) and node["enum"]:
        return node["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        branches = node.get(key)
        if isinstance(branches, list) and branches:
            useful = [b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")] or branches
            return _example(useful[0], defs, name, depth + 1)
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "object" or (kind is None and "properties" in node):
        props = node.get("properties") or {}
        return {key: _example(sub, defs, key, depth + 1) for key, sub in props.items()}
    if kind == "array":
        return []
    if kind == "string":
        return _string_for(name, node.get("format"))
    if kind == "integer":
        return max(1, int(node.get("minimum", 1)))
    if kind == "number":
        return float(max(1, node.get("minimum", 1)))
    if kind == "boolean":
        return True
    return None


def _string_for(name: str, fmt: Any) -> str:
    lowered = name.lower()
    if fmt == "email" or "email" in lowered:
        return "customer@example.com"
    if fmt in ("uri", "url") or "url" in lowered:
        return "https://example.com/item/1"
    if fmt == "date-time":
        return "2026-01-01T00:00:00Z"
    if fmt == "date":
        return "2026-01-01"
    if lowered == "id" or lowered.endswith("_id") or lowered.endswith("id"):
        return f"{lowered or 'id'}-1"
    return f"example {name}".strip() if name else "example"


def example_from_type(tp: Any, name: str = "", depth: int = 0) -> Any:
    """The same kind of value from a Python annotation (TypedDict, dataclass, pydantic model, Optional, Literal...):
    for schemas pydantic cannot turn into JSON schema (``typing.TypedDict`` before Python 3.12)."""
    import dataclasses
    import typing

    if depth > _MAX_DEPTH:
        return None
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        return example_from_type(args[0], name, depth + 1)
    if origin is typing.Literal:
        return args[0] if args else None
    if origin is typing.Union or type(tp).__name__ == "UnionType":
        useful = [a for a in args if a is not type(None)]
        return example_from_type(useful[0], name, depth + 1) if useful else None
    if origin in (list, tuple, set, frozenset) or tp in (list, tuple, set, frozenset):
        return []
    if origin is dict or tp is dict:
        return {}
    if tp is bool:
        return True
    if tp is int:
        return 1
    if tp is float:
        return 1.0
    if tp is str:
        return _string_for(name, None)
    hints: dict[str, Any] = {}
    if isinstance(tp, type) and (typing.is_typeddict(tp) or dataclasses.is_dataclass(tp)):
        try:
            hints = typing.get_type_hints(tp, include_extras=True)
        except Exception:
            hints = dict(getattr(tp, "__annotations__", {}))
        return {key: example_from_type(sub, key, depth + 1) for key, sub in hints.items()}
    fields = getattr(tp, "model_fields", None)  # a pydantic model
    if isinstance(fields, dict):
        return {key: example_from_type(f.annotation, key, depth + 1) for key, f in fields.items()}
    return None
