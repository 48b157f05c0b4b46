"""A blocked transpose for Tune on the chip: (m, n) f32 to (n, m), each (br, bc) block transposed in VMEM
(the cross-lane unit's work) and written to the (bc, br) block at the mirrored grid point.

make_inputs' defaults are the check size; `--size m=…,n=…` the target; `--bind br=m,bc=n`.
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def make_inputs(seed, m=256, n=512):
    return (jax.random.normal(jax.random.key(seed), (m, n), jnp.float32),)


def reference(x):
    return x.T


def xla_baseline(x):
    """What a user would call instead: XLA's transpose, materialised."""
    return jnp.transpose(x)


def _body(x_ref, o_ref):
    o_ref[...] = x_ref[...].T


@functools.partial(jax.jit, static_argnames=("br", "bc"))
def kernel(x, *, br=128, bc=128):
    m, n = x.shape
    if m % br or n % bc:
        raise ValueError(f"blocks must divide the array: {x.shape=} {br=} {bc=}")
    return pl.pallas_call(
        _body,
        grid=(m // br, n // bc),
        in_specs=[pl.BlockSpec((br, bc), lambda i, j: (i, j))],
        out_specs=pl.BlockSpec((bc, br), lambda i, j: (j, i)),
        out_shape=jax.ShapeDtypeStruct((n, m), x.dtype),
    )(x)
