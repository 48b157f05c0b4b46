"""A tiled int8 matmul for Tune on the chip: int8 operands, int32 accumulation and output (exact), the
MXU's integer rate. Blocks (bm, bk, bn).

make_inputs' defaults are the check size; `--size m=…,k=…,n=…` the target; `--bind bm=m,bk=k,bn=n`.
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed, m=256, k=256, n=256):
    kx, ky = jax.random.split(jax.random.key(seed))
    x = jax.random.randint(kx, (m, k), -127, 128, jnp.int32).astype(jnp.int8)
    y = jax.random.randint(ky, (k, n), -127, 128, jnp.int32).astype(jnp.int8)
    return x, y


def reference(x, y):
    return jnp.dot(x.astype(jnp.int32), y.astype(jnp.int32))


def xla_baseline(x, y):
    """What a user would call instead: XLA's int8 dot into int32."""
    return jnp.dot(x, y, preferred_element_type=jnp.int32)


def _body(x_ref, y_ref, o_ref):
    @pl.when(pl.program_id(2) == 0)
    def _():
        o_ref[...] = jnp.zeros_like(o_ref)

    o_ref[...] += jnp.dot(x_ref[...], y_ref[...], preferred_element_type=jnp.int32)


@functools.partial(jax.jit, static_argnames=("bm", "bk", "bn"))
def kernel(x, y, *, bm=128, bk=128, bn=128):
    (m, k), n = x.shape, y.shape[1]
    if m % bm or k % bk or n % bn:
        raise ValueError(f"blocks must divide the matrices: {x.shape=} {y.shape=} {bm=} {bk=} {bn=}")
    return pl.pallas_call(
        _body,
        grid=(m // bm, n // bn, k // bk),
        in_specs=[
            pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)),
            pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j)),
        ],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        out_shape=jax.ShapeDtypeStruct((m, n), jnp.int32),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel", "arbitrary")),
    )(x, y)
