"""JSON conversion for every protocol type: dataclasses, enums and tuples to plain JSON values and back.

Decoding is strict and driven by the dataclass annotations: unknown fields, values outside a
`Literal` and missing fields are errors, so nothing a child writes becomes a result unchecked.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
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


class DecodeError(ValueError):
    """JSON that is not a valid value of the protocol type it claims to be; says where and why."""


def from_json_dict[T](cls: type[T], data: Any) -> T:
    """The inverse of `to_json_dict`, driven by the dataclass field annotations.

    Strict: every value must have its annotated JSON type (no coercion but int → float and the
    "nan" / "inf" / "-inf" strings), dataclasses take exactly their fields, and anything else is a
    `DecodeError`, never a half-built object or another exception.
    """
    return typing.cast(T, _decode(cls, data, cls.__name__))


_NON_FINITE = {"nan", "inf", "-inf"}
# An integer JSON number a float can hold (`float(10**400)` raises OverflowError, not a DecodeError).
_FITS = range(-(2**1023), 2**1023).__contains__
_SCALARS: dict[type, tuple[type, ...]] = {int: (int,), str: (str,), bool: (bool,)}


def _decode(tp: Any, data: Any, where: str) -> Any:
    origin = typing.get_origin(tp)
    if tp is Any:
        return data
    if origin is typing.Union or isinstance(tp, types.UnionType):
        return _decode_union(typing.get_args(tp), data, where)
    if origin is Literal:
        if data not in typing.get_args(tp) or isinstance(data, bool) != isinstance(
            typing.get_args(tp)[0], bool
        ):
            raise DecodeError(f"{where}: {_short(data)} is not one of {typing.get_args(tp)}")
        return data
    if origin in (tuple, list):
        _expect(data, list, where)
        args = typing.get_args(tp)
        if origin is list or (len(args) == 2 and args[1] is Ellipsis):
            items = [_decode(args[0], v, f"{where}[{i}]") for i, v in enumerate(data)]
        else:
            if len(args) != len(data):
                raise DecodeError(f"{where}: expected {len(args)} items, got {len(data)}")
            items = [_decode(a, v, f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, data, strict=True))]
        return items if origin is list else tuple(items)
    if origin is dict:
        _expect(data, dict, where)
        key_type, value_type = typing.get_args(tp)
        return {_decode(key_type, k, where): _decode(value_type, v, f"{where}.{k}") for k, v in data.items()}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(data)
        except ValueError:
            raise DecodeError(f"{where}: {_short(data)} is not a {tp.__name__}") from None
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _decode_dataclass(tp, data, where)
    if tp is float:
        if isinstance(data, float) or (isinstance(data, int) and not isinstance(data, bool) and _FITS(data)):
            return float(data)
        if isinstance(data, str) and data in _NON_FINITE:
            return float(data)
        raise DecodeError(f"{where}: expected a number, got {_short(data)}")
    if tp in _SCALARS:
        if not isinstance(data, _SCALARS[tp]) or (tp is int and isinstance(data, bool)):
            raise DecodeError(f"{where}: expected {tp.__name__}, got {_short(data)}")
        return data
    raise DecodeError(f"{where}: no decoder for {tp!r}")


def _decode_union(args: tuple[Any, ...], data: Any, where: str) -> Any:
    if data is None:
        if type(None) in args:
            return None
        raise DecodeError(f"{where}: null is not allowed")
    errors = []
    for arg in args:
        if arg is type(None):
            continue
        try:
            return _decode(arg, data, where)
        except DecodeError as exc:
            errors.append(str(exc))
    raise DecodeError("; ".join(errors))


def _decode_dataclass(tp: type, data: Any, where: str) -> Any:
    _expect(data, dict, where)
    hints = _hints(tp)
    fields = dataclasses.fields(tp)
    unknown = set(data) - {f.name for f in fields}
    if unknown:
        raise DecodeError(f"{where}: unknown fields {sorted(map(str, unknown))}")
    required = {
        f.name
        for f in fields
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    missing = required - set(data)
    if missing:
        raise DecodeError(f"{where}: missing fields {sorted(missing)}")
    return tp(**{k: _decode(hints[k], v, f"{where}.{k}") for k, v in data.items()})


@functools.cache
def _hints(tp: type) -> dict[str, Any]:
    return typing.get_type_hints(tp)


def _expect(data: Any, kind: type, where: str) -> None:
    if not isinstance(data, kind):
        raise DecodeError(
            f"{where}: expected a JSON {'array' if kind is list else 'object'}, got {_short(data)}"
        )


def _short(data: Any) -> str:
    text = repr(data)
    return text if len(text) <= 60 else text[:57] + "..."
