"""A memory-bound elementwise kernel for Tune on the chip: o = 2x + y over (br, bc) blocks (f32).

make_inputs' defaults are the check size; `--size m=…,n=…` the target; `--bind br=m,bc=n`.
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def make_inputs(seed, m=256, n=512):
    kx, ky = jax.random.split(jax.random.key(seed))
    return jax.random.normal(kx, (m, n), jnp.float32), jax.random.normal(ky, (m, n), jnp.float32)


def reference(x, y):
    return 2.0 * x + y


def _body(x_ref, y_ref, o_ref):
    o_ref[...] = 2.0 * x_ref[...] + y_ref[...]


@functools.partial(jax.jit, static_argnames=("br", "bc"))
def kernel(x, y, *, br=128, bc=512):
    m, n = x.shape
    if m % br or n % bc:
        raise ValueError(f"blocks must divide the array: {x.shape=} {br=} {bc=}")
    spec = pl.BlockSpec((br, bc), lambda i, j: (i, j))
    return pl.pallas_call(
        _body,
        grid=(m // br, n // bc),
        in_specs=[spec, spec],
        out_specs=spec,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
    )(x, y)
