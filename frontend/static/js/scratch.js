// The starter file of scratch mode (no catalog entry): the harness calls make_inputs(seed),
// kernel(*inputs) and, if present, reference(*inputs) (see sandbox/session.py).

export const SCRATCH_STARTER = `"""Scratch file: any Pallas kernel, checked against your own reference.

Define make_inputs(seed) (a tuple of arrays), kernel(*inputs) and, optionally, reference(*inputs):
with a reference the outputs are compared; without one the run just shows them. Write it as for a
TPU; without one the playground runs it in TPU interpret mode on the chip you pick.
"""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def make_inputs(seed):
    kx, ky = jax.random.split(jax.random.key(seed))
    x = jax.random.normal(kx, (512, 256), jnp.float32)
    y = jax.random.normal(ky, (512, 256), jnp.float32)
    return x, y


def reference(x, y):
    return x * jnp.tanh(y)


def gate_kernel(x_ref, y_ref, o_ref):
    o_ref[...] = x_ref[...] * jnp.tanh(y_ref[...])


@jax.jit
def kernel(x, y):
    block = (128, 256)
    spec = pl.BlockSpec(block, lambda i: (i, 0))
    return pl.pallas_call(
        gate_kernel,
        grid=(x.shape[0] // block[0],),
        in_specs=[spec, spec],
        out_specs=spec,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
    )(x, y)
`;
