"""Common subexpressions: work a body repeats with the same operands, which the compiler does once.

Mosaic's pipeline runs MLIR's canonicalisation and CSE over a kernel body before it lowers it, so two
equations of one body with the same primitive, the same parameters and the same operands compute one
value: the second costs nothing. Kernels that unroll a loop in Python repeat such work: JAX's ragged
paged attention builds its causal mask (two iotas, a floor division, the comparisons) once per KV head
of a block, eight times a step at eight heads, from operands no head changes. Measured on the lent v5e
(bench/tpu/v5e/listings.jsonl, JAX 0.12.0.1): the compiler's inner loop has 1,512 bundles at 8 pages
and 16 queries a block, where the model counted about 2,000 cycles of vector work with every head's
mask paid for.

Only pure equations are merged (`hoisting.pure`: no effect, no ref, no memory or DMA operation, a call
only if all in it is pure); a load is never merged with an earlier load (a store may come between).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from sandbox.harness.jaxapi import core as jcore
from sandbox.harness.model.hoisting import pure


@functools.lru_cache(maxsize=256)
def repeated(jaxpr: Any) -> frozenset[int]:
    """Indices of the equations of `jaxpr` that compute a value an earlier equation of it computed."""
    same: dict[Any, Any] = {}  # a repeated equation's output -> the first one's
    seen: dict[Any, Any] = {}  # an equation's key -> its outputs
    found: set[int] = set()
    for index, eqn in enumerate(jaxpr.eqns):
        if not pure(eqn) or not eqn.outvars:
            continue
        key = _key(eqn, same)
        if key is None:
            continue
        first = seen.get(key)
        if first is None:
            seen[key] = tuple(eqn.outvars)
            continue
        found.add(index)
        same.update(zip(eqn.outvars, first, strict=True))
    return frozenset(found)


def _key(eqn: Any, same: dict[Any, Any]) -> Any:
    try:
        operands = tuple(_operand(v, same) for v in eqn.invars)
        params = tuple(sorted((name, _frozen(value)) for name, value in eqn.params.items()))
        key = (eqn.primitive.name, params, operands, tuple(str(v.aval) for v in eqn.outvars))
        hash(key)
    except TypeError:
        return None
    return key


def _operand(var: Any, same: dict[Any, Any]) -> Any:
    if isinstance(var, jcore.Literal):
        value = np.asarray(var.val)
        return ("literal", str(value.dtype), value.tobytes())
    return ("var", same.get(var, var))


def _frozen(value: Any) -> Any:
    """A parameter as a hashable key: arrays by content, sequences item by item, jaxprs by identity
    (JAX traces a jitted helper once per signature, so repeated calls share one)."""
    if isinstance(value, np.ndarray):
        return ("array", str(value.dtype), value.shape, value.tobytes())
    if isinstance(value, (tuple, list)):
        return tuple(_frozen(v) for v in value)
    try:
        hash(value)
    except TypeError:
        return ("object", id(value))
    return value
