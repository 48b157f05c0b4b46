"""Common subexpressions (`sandbox.harness.model.common`): work a kernel body repeats with the same
operands (a mask a Python loop builds once per head) the compiler computes once; the model costs it
once. Work on different operands, and loads from VMEM, are costed every time."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

from sandbox.harness.model.common import repeated
from sandbox.harness.model.estimate import estimate
from sandbox.protocol.chips import chip_info

V5E = chip_info("v5e")
ROWS, LANES, HEADS = 256, 512, 8


def _mask(shift: int = 0):
    return jax.lax.broadcasted_iota(jnp.int32, (ROWS, LANES), 0) // 4 + shift < jax.lax.broadcasted_iota(
        jnp.int32, (ROWS, LANES), 1
    )


def _kernel(how: str):
    """Per head: a causal-style mask applied to that head's block, as ragged paged attention builds it."""

    def body(x_ref, o_ref):
        shared = _mask()
        for head in range(HEADS):  # unrolled in Python: the jaxpr holds every head's equations
            if how == "per_head_same":
                mask = _mask()
            elif how == "per_head_different":
                mask = _mask(shift=head)
            else:
                mask = shared
            o_ref[head] = jnp.where(mask, x_ref[head], 0.0)

    def fn(x):
        return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct((HEADS, ROWS, LANES), jnp.float32))(x)

    return fn


def _vector_ops(how: str) -> float:
    x = jax.ShapeDtypeStruct((HEADS, ROWS, LANES), jnp.float32)
    found = estimate(_kernel(how), (x,), V5E, timeline=False)
    return sum(c.vector_ops * c.count for c in found.classes)


def test_a_mask_every_head_builds_alike_costs_what_one_mask_costs():
    assert _vector_ops("per_head_same") == _vector_ops("shared")


def test_masks_with_different_operands_are_each_costed():
    vregs = ROWS * LANES // 1024
    # Seven more masks' add and compare, at least (the iotas and the division stay shared).
    assert _vector_ops("per_head_different") - _vector_ops("shared") >= (HEADS - 1) * 2 * vregs * 1024


def test_only_pure_equations_repeat():
    def body(x_ref, o_ref):
        first = x_ref[...] * 2.0
        o_ref[...] = first
        second = x_ref[...] * 2.0  # the same load after a store: a new value
        o_ref[...] += second

    x = jax.ShapeDtypeStruct((8, 128), jnp.float32)
    fn = pl.pallas_call(body, out_shape=x)
    closed = jax.make_jaxpr(lambda v: fn(v))(x)
    (call,) = [e for e in closed.jaxpr.eqns if e.primitive.name == "pallas_call"]
    kernel = call.params["jaxpr"]
    names = [e.primitive.name for e in kernel.eqns]
    assert names.count("get") == 3 and not repeated(kernel)  # the two loads and `+=`'s own
