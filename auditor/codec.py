"""JSON <-> dataclass: the one codec for data that crosses a process or file boundary.

A child's ``result.json``, a shard file, a cell's witness, a cache entry, a
report's findings and an audit shard's records are written as JSON and read
back as typed dataclasses, so no reader of them indexes a string-keyed dict: a
field a writer forgot is a ``TypeError`` at the boundary, not a silent ``None``
three modules later. The decoder follows the dataclass's own annotations
(nested dataclasses, ``list``/``tuple``/``dict`` of them, ``X | None``, enums,
``str`` subclasses such as a cell kind); values annotated ``Any`` stay as JSON
gave them.

A class whose wire shape is not its fields' -- a finding lays its span out
flat, a shard carries a format marker -- says so itself by defining both
``to_data()`` and a classmethod ``from_data(data)`` (:class:`Shaped`); the
codec calls them wherever such a value is met, so each type has one shape
everywhere it is written. :func:`encode_fields` is the plain field-by-field
encoding, for those hooks to build on.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from functools import lru_cache
from typing import Any, Protocol, TypeVar, Union, get_args, get_origin, get_type_hints

T = TypeVar("T")


class DecodeError(ValueError):
    """JSON that does not have the shape of the dataclass it is read as."""


@lru_cache(maxsize=None)
def _hints(cls: Any) -> dict[str, Any]:
    # each class in the MRO is resolved in its own module's namespace (get_type_hints' default)
    return get_type_hints(cls)


class Shaped(Protocol):
    """A type that defines its own wire shape (see the module docstring)."""

    def to_data(self) -> Any: ...

    @classmethod
    def from_data(cls, data: Any) -> Any: ...


def _shaped(cls: type) -> bool:
    return callable(getattr(cls, "to_data", None)) and callable(getattr(cls, "from_data", None))


def encode(value: Any) -> Any:
    """A dataclass (or container of them) as JSON-native data; fields equal to their ``omit`` default are left out."""
    if isinstance(value, type):
        return value
    if _shaped(type(value)):
        return value.to_data()
    if dataclasses.is_dataclass(value):
        return encode_fields(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(encode(v) for v in value)
    return value


def encode_fields(value: Any) -> dict[str, Any]:
    """A dataclass instance field by field (its own ``to_data`` hook aside), omitting ``omit_default`` fields
    that hold their default."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(value):
        v = getattr(value, f.name)
        if f.metadata.get("omit_default") and v == _default(f):
            continue
        out[f.name] = encode(v)
    return out


def decode(cls: Any, data: Any) -> Any:
    """``data`` (JSON-native) as an instance of the annotated type ``cls``."""
    if cls is Any or cls is object:
        return data
    origin = get_origin(cls)
    if origin in (Union, types.UnionType):
        args = get_args(cls)
        if data is None and type(None) in args:
            return None
        last: Exception | None = None
        for arg in args:
            if arg is type(None):
                continue
            try:
                return decode(arg, data)
            except (DecodeError, TypeError, ValueError) as exc:
                last = exc
        raise DecodeError(f"{data!r} matches none of {cls}: {last}")
    if origin in (list, typing.List):
        (item,) = get_args(cls) or (Any,)
        return [decode(item, v) for v in _seq(data, cls)]
    if origin in (tuple, typing.Tuple):
        args = get_args(cls)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(decode(args[0], v) for v in _seq(data, cls))
        seq = _seq(data, cls)
        if args and len(args) != len(seq):
            raise DecodeError(f"{data!r} is not a {cls}")
        return tuple(decode(a, v) for a, v in zip(args, seq)) if args else tuple(seq)
    if origin in (frozenset, set):
        (item,) = get_args(cls) or (Any,)
        return origin(decode(item, v) for v in _seq(data, cls))
    if origin in (dict, typing.Dict):
        key, val = get_args(cls) or (Any, Any)
        if not isinstance(data, dict):
            raise DecodeError(f"{data!r} is not a {cls}")
        return {decode(key, k): decode(val, v) for k, v in data.items()}
    if isinstance(cls, type) and _shaped(cls):
        return getattr(cls, "from_data")(data)
    if isinstance(cls, type) and dataclasses.is_dataclass(cls):
        return decode_fields(cls, data)
    if isinstance(cls, type) and issubclass(cls, enum.Enum):
        return cls(data)
    if isinstance(cls, type) and issubclass(cls, str) and cls is not str:
        if not isinstance(data, str):
            raise DecodeError(f"{data!r} is not a {cls.__name__}")
        return cls(data)
    if cls is float and isinstance(data, int) and not isinstance(data, bool):
        return float(data)
    if isinstance(cls, type) and cls in (str, int, float, bool) and not isinstance(data, cls):
        raise DecodeError(f"{data!r} is not a {cls.__name__}")
    return data


def decode_fields(cls: type[T], data: Any) -> T:
    """``data`` as the dataclass ``cls``, field by field (its own ``from_data`` hook aside)."""
    if not isinstance(data, dict):
        raise DecodeError(f"{data!r} is not a {cls.__name__}")
    dataclass_type: Any = cls
    hints = _hints(dataclass_type)
    names = {f.name for f in dataclasses.fields(dataclass_type) if f.init}
    unknown = set(data) - names
    if unknown:
        raise DecodeError(f"{cls.__name__} has no field(s) {sorted(unknown)}")
    return cls(**{k: decode(hints[k], v) for k, v in data.items()})


def _seq(data: Any, cls: Any) -> list[Any]:
    if not isinstance(data, (list, tuple)):
        raise DecodeError(f"{data!r} is not a {cls}")
    return list(data)


def omit_default(default: Any) -> Any:
    """A field left out of :func:`encode`'s output while it holds ``default`` (keeps JSON as it was).

    An empty ``list``/``dict``/``set`` default is given as a factory, one fresh object per instance."""
    if isinstance(default, (list, dict, set)):
        empty = type(default)
        if default:
            raise ValueError("a mutable omit_default must be empty")
        return dataclasses.field(default_factory=empty, metadata={"omit_default": True})
    return dataclasses.field(default=default, metadata={"omit_default": True})


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    return f.default_factory() if f.default_factory is not dataclasses.MISSING else dataclasses.MISSING
