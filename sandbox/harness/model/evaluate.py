"""Scalar values of a kernel's jaxpr, computed without data: grid indices, loop counters, SMEM tables.

The time model needs what steers a kernel (which block an index map picks, which branch a
`pl.when` takes, how many times a loop runs) but none of its data. So only scalar equations are
evaluated, on numpy values that are either one number or one number per grid step (an array of
shape `(steps,)`, broadcasting does the rest); anything that depends on array data is `UNKNOWN`.
Refs are `Ref` objects; an SMEM ref may know its contents (a scalar-prefetch table).

Written against jax 0.12.0.1's primitives and private state types (`NDIndexer`, `Slice`), like the
trace capture; `sandbox.harness.model.estimate` reports the model as unavailable if they change.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from sandbox.harness.jaxapi import core as jcore

UNKNOWN: Any = None


class Ref:
    """A ref as the model sees it: where it lives, its shape, and (SMEM) its known contents."""

    __slots__ = ("dtype", "key", "shape", "space", "values")

    def __init__(
        self, key: Any, shape: tuple[int, ...], dtype: Any, space: str, values: np.ndarray | None = None
    ) -> None:
        self.key, self.shape, self.dtype, self.space, self.values = key, shape, dtype, space, values

    @property
    def itemsize(self) -> int:
        return itemsize(self.dtype)


def itemsize(dtype: Any) -> int:
    try:
        return int(np.dtype(dtype).itemsize)
    except TypeError:
        return 4  # semaphores and other opaque types: never copied


def space_of(aval: Any, default: str) -> str:
    """ "vmem", "smem", "hbm" or "semaphore" for a ref's aval; `default` where it names none."""
    space = getattr(aval, "memory_space", None)
    text = str(getattr(space, "value", space)).lower()
    for known, name in (("semaphore", "semaphore"), ("smem", "smem"), ("vmem", "vmem"), ("hbm", "hbm")):
        if known in text:
            return name
    if "any" in text:
        return "hbm"
    return default


def inner(aval: Any) -> Any:
    return getattr(aval, "inner_aval", aval)


def read(env: dict[Any, Any], atom: Any) -> Any:
    if isinstance(atom, jcore.Literal):
        return np.asarray(atom.val)
    if isinstance(atom, jcore.Var):
        return env.get(atom, UNKNOWN)
    return atom  # a Python int in an indexer


def _div(a: Any, b: Any) -> Any:
    if np.issubdtype(np.result_type(a, b), np.integer):
        q = np.abs(a) // np.maximum(np.abs(b), 1)
        return np.where((np.asarray(a) < 0) ^ (np.asarray(b) < 0), -q, q)
    return np.true_divide(a, b)


def _select(which: Any, *cases: Any) -> Any:
    return np.choose(np.asarray(which).astype(np.int64), np.broadcast_arrays(*cases))


RULES: dict[str, Callable[..., Any]] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": _div,
    "rem": np.fmod,
    "max": np.maximum,
    "min": np.minimum,
    "neg": np.negative,
    "abs": np.abs,
    "sign": np.sign,
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
    "not": np.invert,
    "select_n": _select,
    "clamp": lambda lo, x, hi: np.clip(x, lo, hi),
    "shift_left": np.left_shift,
    "shift_right_arithmetic": np.right_shift,
    "shift_right_logical": np.right_shift,
    "floor": np.floor,
    "ceil": np.ceil,
    "square": np.square,
}


def _py_div(a: Any, b: Any) -> Any:
    if isinstance(a, float) or isinstance(b, float):
        return a / b
    q = abs(a) // abs(b) if b else 0
    return -q if (a < 0) != (b < 0) else q


def _py_rem(a: Any, b: Any) -> Any:
    if isinstance(a, float) or isinstance(b, float):
        return math.fmod(a, b)
    return a - b * _py_div(a, b) if b else 0


# The same rules on plain Python numbers: a program (one core, in order) evaluates many scalar
# equations one at a time, where numpy's per-call cost would dominate.
PY_RULES: dict[str, Callable[..., Any]] = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "div": _py_div,
    "rem": _py_rem,
    "max": max,
    "min": min,
    "neg": operator.neg,
    "abs": abs,
    "sign": lambda a: (a > 0) - (a < 0),
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
    "and": operator.and_,
    "or": operator.or_,
    "xor": operator.xor,
    "not": lambda a: (not a) if isinstance(a, bool) else ~a,
    "select_n": lambda which, *cases: cases[int(which)],
    "clamp": lambda lo, x, hi: min(max(x, lo), hi),
    "shift_left": operator.lshift,
    "shift_right_arithmetic": operator.rshift,
    "shift_right_logical": operator.rshift,
    "floor": math.floor,
    "ceil": math.ceil,
    "square": lambda a: a * a,
}
# `multiple_of` (`pl.multiple_of`) is a hint to the compiler: its value is its operand.
IDENTITY = ("reshape", "squeeze", "broadcast_in_dim", "copy", "copy_p", "reduce_precision", "multiple_of")


def scalar_rules(eqn: Any) -> tuple[Callable[..., Any], Callable[..., Any]] | None:
    """(numpy rule, Python rule) for a scalar equation the model can compute, else None."""
    if len(eqn.outvars) != 1 or getattr(eqn.outvars[0].aval, "shape", None) != ():
        return None
    name = eqn.primitive.name
    if name in RULES:
        return RULES[name], PY_RULES[name]
    if name == "convert_element_type":
        dtype = np.dtype(eqn.params["new_dtype"])
        cast = bool if dtype.kind == "b" else int if dtype.kind in "iu" else float
        return (lambda a: np.asarray(a).astype(dtype)), cast
    if name == "integer_pow":
        y = eqn.params["y"]
        return (lambda a: np.power(a, y)), (lambda a: a**y)
    if name in IDENTITY:
        return (lambda a: np.asarray(a)), (lambda a: a)
    return None


def evaluate(eqn: Any, values: Sequence[Any]) -> list[Any] | None:
    """The outputs of a scalar equation, or None if it is not one the model can compute."""
    if any(getattr(v.aval, "shape", None) != () for v in eqn.outvars):
        return None
    if any(v is UNKNOWN or isinstance(v, Ref) for v in values):
        return None
    name = eqn.primitive.name
    try:
        if name in RULES:
            out = RULES[name](*values)
        elif name == "convert_element_type":
            out = np.asarray(values[0]).astype(eqn.params["new_dtype"])
        elif name == "integer_pow":
            out = np.power(values[0], eqn.params["y"])
        elif name in IDENTITY:
            out = np.asarray(values[0])
        else:
            return None
    except (TypeError, ValueError, OverflowError, FloatingPointError):
        return None
    return [np.asarray(out)]


def indexer(transforms: Any, env: dict[Any, Any]) -> list[Any] | None:
    """Scalar indices of a ref access (`ref[i, j]`), or None if it slices or an index is unknown."""
    found: list[Any] = []
    for transform in transforms or ():
        if not isinstance(transform, jcore.NDIndexer):
            return None
        for index in transform.indices:
            if isinstance(index, jcore.Slice):
                if index.size != 1:
                    return None
                index = index.start
            value = read(env, index)
            if value is UNKNOWN or isinstance(value, Ref):
                return None
            found.append(value)
    return found


def indexed_shape(aval_transforms: Any, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape a ref access touches, from the transforms unflattened over avals."""
    for transform in aval_transforms or ():
        get_shape = getattr(transform, "get_indexer_shape", None)
        if get_shape is not None:
            shape = tuple(get_shape())
    return shape


def is_static(shape: Iterable[Any]) -> bool:
    """Whether every dimension is a number (a `pl.ds` whose size is computed per step is not)."""
    return all(isinstance(d, (int, np.integer)) for d in shape)


def sliced_elements(transforms: Any, env: dict[Any, Any]) -> tuple[Any, bool]:
    """(elements, known) a ref access touches when a slice's size is computed per step, as
    `emit_pipeline` copies an edge block (`_create_bounded_slice` and `_create_blocked_slice` in
    jax/_src/pallas/mosaic/pipeline.py: the part left in the dimension, rounded up to its tiling).
    The last indexer's slice sizes read from `env`, times its integer indexers' shape; a size that
    is not known counts the whole dimension it slices (known False)."""
    last = next((t for t in reversed(list(transforms or ())) if isinstance(t, jcore.NDIndexer)), None)
    if last is None:
        return UNKNOWN, False
    count: Any = math.prod(int(d) for d in last.int_indexer_shape)
    known = True
    for dim, index in zip(last.shape, last.indices, strict=False):
        if not isinstance(index, jcore.Slice):
            continue
        value = read(env, index.size)
        if value is UNKNOWN or isinstance(value, Ref):
            value, known = dim, False
        count = count * value
    return count, known


def size(shape: Iterable[Any]) -> int:
    return math.prod(int(d) for d in shape)
