"""Column sums for Tune on the chip: (m, n) f32 reduced over its rows into a (1, n) f32 row that stays in
VMEM across the grid's reduction axis (the inner, "arbitrary" one), each step adding a (br, bc) block's
sublane sums to it: a reduction across sublanes and vregs, not across lanes.

make_inputs' defaults are the check size; `--size m=…,n=…` the target; `--bind br=m,bc=n`.
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed, m=256, n=512):
    return (jax.random.normal(jax.random.key(seed), (m, n), jnp.float32),)


def reference(x):
    return jnp.sum(x, axis=0, keepdims=True, dtype=jnp.float32)


def xla_baseline(x):
    """What a user would call instead: XLA's reduction."""
    return jnp.sum(x, axis=0, keepdims=True)


def _body(x_ref, o_ref):
    @pl.when(pl.program_id(1) == 0)
    def _():
        o_ref[...] = jnp.zeros_like(o_ref)

    o_ref[...] += jnp.sum(x_ref[...], axis=0, keepdims=True)


@functools.partial(jax.jit, static_argnames=("br", "bc"))
def kernel(x, *, br=64, bc=512):
    m, n = x.shape
    if m % br or n % bc:
        raise ValueError(f"blocks must divide the array: {x.shape=} {br=} {bc=}")
    return pl.pallas_call(
        _body,
        grid=(n // bc, m // br),
        in_specs=[pl.BlockSpec((br, bc), lambda j, i: (i, j))],
        out_specs=pl.BlockSpec((1, bc), lambda j, i: (0, j)),
        out_shape=jax.ShapeDtypeStruct((1, n), jnp.float32),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
    )(x)
