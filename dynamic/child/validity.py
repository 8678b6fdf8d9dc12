"""Validating persisted state against the graph's declared state schema (CV, RA706).

Checkpoints are read straight from the saver, not through the framework's own
read path: LangGraph's ``get_state`` raises on a mid-graph invalid write but
returns a terminal one silently, and either way the invalid value *is* on
disk. Each present field is validated on its own against its annotation with
pydantic, because early checkpoints legitimately lack fields the schema
requires and reducer metadata (``Annotated[list[str], operator.add]``) is not
a type. Fields whose annotation pydantic cannot build a validator for are
skipped, never guessed.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass
from functools import lru_cache
from typing import Any


@dataclass(frozen=True)
class SchemaInfo:
    """What kind of schema a state is declared with, and its fields."""

    kind: str  # "pydantic" | "typeddict" | "dataclass" | "other"
    name: str
    fields: tuple[str, ...]


@dataclass(frozen=True)
class InvalidField:
    field: str
    error: str
    value: Any


def describe_schema(schema: Any) -> SchemaInfo:
    name = getattr(schema, "__qualname__", repr(schema))
    if _is_pydantic(schema):
        return SchemaInfo("pydantic", name, tuple(schema.model_fields))
    if dataclasses.is_dataclass(schema):
        return SchemaInfo("dataclass", name, tuple(f.name for f in dataclasses.fields(schema)))
    if typing.is_typeddict(schema):
        return SchemaInfo("typeddict", name, tuple(typing.get_type_hints(schema, include_extras=True)))
    return SchemaInfo("other", name, ())


def _is_pydantic(schema: Any) -> bool:
    return isinstance(schema, type) and hasattr(schema, "model_fields") and hasattr(schema, "model_validate")


@lru_cache(maxsize=256)
def _adapter(annotation: Any) -> Any:
    from pydantic import TypeAdapter

    try:
        return TypeAdapter(annotation)
    except Exception:  # pydantic cannot validate this type: skip it rather than guess
        return None


def _field_annotations(schema: Any) -> dict[str, Any]:
    if _is_pydantic(schema):
        out = {}
        for name, info in schema.model_fields.items():
            ann = info.annotation
            if info.metadata:
                args = (ann, *info.metadata)
                ann = typing.Annotated[args]
            out[name] = ann
        return out
    try:
        return typing.get_type_hints(schema, include_extras=True)
    except Exception:
        return {}


def validate_values(schema: Any, values: dict[str, Any]) -> list[InvalidField]:
    """Every present field of ``values`` that fails its annotation in ``schema``."""
    if schema is None or not isinstance(values, dict):
        return []
    problems: list[InvalidField] = []
    for name, annotation in _field_annotations(schema).items():
        if name not in values:
            continue
        try:
            adapter = _adapter(annotation)
        except TypeError:  # unhashable annotation object
            adapter = None
        if adapter is None:
            continue
        try:
            adapter.validate_python(values[name])
        except Exception as exc:  # pydantic.ValidationError, or a validator's own error
            problems.append(InvalidField(name, _first_line(exc, name), values[name]))
    return problems


def _first_line(exc: Exception, field: str) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
            loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first.get("loc", ()))
            return f"{field}{loc}: {first.get('msg')}"
        except Exception:
            pass
    return str(exc).splitlines()[0]
