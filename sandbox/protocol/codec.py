"""JSON conversion for every protocol type: dataclasses, enums and tuples to plain JSON values and back.

Decoding is strict and driven by the dataclass annotations: unknown fields, values outside a
`Literal` and missing fields are errors, so nothing a child writes becomes a result unchecked.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import types
import typing
from typing import Any, Literal


def to_json_dict(value: Any) -> Any:
    """Dataclasses, enums, tuples and dicts to plain JSON values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json_dict(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (list, tuple)):
        return [to_json_dict(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_json_dict(v) for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        # JSON has no NaN or infinity; they travel as the strings "nan", "inf" and "-inf".
        return str(value)
    return value


def from_json_dict[T](cls: type[T], data: Any) -> T:
    """The inverse of `to_json_dict`, driven by the dataclass field annotations."""
    return typing.cast(T, _decode(cls, data))


def _decode(tp: Any, data: Any) -> Any:
    origin = typing.get_origin(tp)
    if tp is Any:
        return data
    if origin is typing.Union or isinstance(tp, types.UnionType):
        args = typing.get_args(tp)
        if data is None and type(None) in args:
            return None
        return _decode(next(a for a in args if a is not type(None)), data)
    if origin is Literal:
        if data not in typing.get_args(tp):
            raise ValueError(f"{data!r} is not one of {typing.get_args(tp)}")
        return data
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], v) for v in data)
        return tuple(_decode(a, v) for a, v in zip(args, data, strict=True))
    if origin is dict:
        _, value_type = typing.get_args(tp)
        return {k: _decode(value_type, v) for k, v in data.items()}
    if origin is list:
        return [_decode(typing.get_args(tp)[0], v) for v in data]
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp(data)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        known = {f.name for f in dataclasses.fields(tp)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown fields for {tp.__name__}: {sorted(unknown)}")
        return tp(**{k: _decode(hints[k], v) for k, v in data.items()})
    if tp is float and isinstance(data, (int, str)):
        return float(data)
    return data
