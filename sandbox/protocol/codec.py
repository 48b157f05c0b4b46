"""JSON conversion for every protocol type: dataclasses, enums and tuples to plain JSON values and back.

Decoding is strict and driven by the dataclass annotations: unknown fields, values outside a
`Literal` and missing fields are errors, so nothing a child writes becomes a result unchecked. A
`Budget` bounds the work of one decode: a list or an object that would take it past its count of
values is refused before any of its items is built (a 16 MB list of ints costs nothing to refuse).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import math
import types
import typing
from typing import Any, Literal

_PLAIN = frozenset({str, int, bool})


def to_json_dict(value: Any) -> Any:
    """Dataclasses, enums, tuples and dicts to plain JSON values."""
    if value is None or type(value) in _PLAIN:  # most values: as they are
        return value
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


class Budget:
    """The values (list items, object entries, dataclass fields) one decode may still build."""

    def __init__(self, values: int) -> None:
        self.values = self.left = values

    def take(self, count: int, where: str) -> None:
        self.left -= count
        if self.left < 0:
            raise DecodeError(f"{where}: more than {self.values:,} values")


def from_json_dict[T](cls: type[T], data: Any, budget: Budget | None = None) -> T:
    """The inverse of `to_json_dict`, driven by the dataclass field annotations.

    Strict: every value must have its annotated JSON type (no coercion but int → float and the
    "nan" / "inf" / "-inf" strings), dataclasses take exactly their fields, and anything else is a
    `DecodeError`, never a half-built object or another exception. `budget`: at most that many
    values, counted as each list or object is reached and before its items are built.
    """
    return typing.cast(T, _decode(cls, data, cls.__name__, budget))


_NON_FINITE = {"nan", "inf", "-inf"}
# An integer JSON number a float can hold (`float(10**400)` raises OverflowError, not a DecodeError).
_FITS = range(-(2**1023), 2**1023).__contains__
_SCALARS: dict[type, tuple[type, ...]] = {int: (int,), str: (str,), bool: (bool,)}


def _decode(tp: Any, data: Any, where: str, budget: Budget | None) -> Any:
    origin = typing.get_origin(tp)
    if tp is Any:
        return data
    if origin is typing.Union or isinstance(tp, types.UnionType):
        return _decode_union(typing.get_args(tp), data, where, budget)
    if origin is Literal:
        if data not in typing.get_args(tp) or isinstance(data, bool) != isinstance(
            typing.get_args(tp)[0], bool
        ):
            raise DecodeError(f"{where}: {_short(data)} is not one of {typing.get_args(tp)}")
        return data
    if origin in (tuple, list):
        _expect(data, list, where)
        if budget is not None:
            budget.take(len(data), where)
        args = typing.get_args(tp)
        if origin is list or (len(args) == 2 and args[1] is Ellipsis):
            items = _same_scalars(args[0], data)
            if items is None:
                items = [_decode(args[0], v, f"{where}[{i}]", budget) for i, v in enumerate(data)]
        else:
            if len(args) != len(data):
                raise DecodeError(f"{where}: expected {len(args)} items, got {len(data)}")
            items = [
                _decode(a, v, f"{where}[{i}]", budget)
                for i, (a, v) in enumerate(zip(args, data, strict=True))
            ]
        return items if origin is list else tuple(items)
    if origin is dict:
        _expect(data, dict, where)
        if budget is not None:
            budget.take(len(data), where)
        key_type, value_type = typing.get_args(tp)
        return {
            _decode(key_type, k, where, budget): _decode(value_type, v, f"{where}.{k}", budget)
            for k, v in data.items()
        }
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(data)
        except ValueError:
            raise DecodeError(f"{where}: {_short(data)} is not a {tp.__name__}") from None
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _decode_dataclass(tp, data, where, budget)
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


def _same_scalars(tp: Any, data: list[Any]) -> list[Any] | None:
    """`data` as a list of `tp` when every item is exactly an int, a str or a bool and `tp` is that type
    (a trace's DMA ids, a shape): checked in one pass; None when the item-by-item decode must say more."""
    kind = tp if tp in _SCALARS else None
    return list(data) if kind is not None and all(type(v) is kind for v in data) else None


def _decode_union(args: tuple[Any, ...], data: Any, where: str, budget: Budget | None) -> Any:
    if data is None:
        if type(None) in args:
            return None
        raise DecodeError(f"{where}: null is not allowed")
    errors = []
    for arg in args:
        if arg is type(None):
            continue
        try:
            return _decode(arg, data, where, budget)
        except DecodeError as exc:
            errors.append(str(exc))
    raise DecodeError("; ".join(errors))


def _decode_dataclass(tp: type, data: Any, where: str, budget: Budget | None) -> Any:
    _expect(data, dict, where)
    fields = dataclasses.fields(tp)
    if budget is not None:  # every field, defaults too: what reads the object later walks them all
        budget.take(len(fields), where)
    hints = _hints(tp)
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
    return tp(**{k: _decode(hints[k], v, f"{where}.{k}", budget) for k, v in data.items()})


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
