"""The output shape is written (n, m) instead of (m, n): the second column block lands outside it."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def make_inputs(seed):
    kx, ky = jax.random.split(jax.random.key(seed))
    return jax.random.normal(kx, (128, 256)), jax.random.normal(ky, (256, 256))


def reference(x, y):
    return x @ y


def matmul_kernel(x_ref, y_ref, o_ref):
    o_ref[...] = jnp.dot(x_ref[...], y_ref[...])


def kernel(x, y):
    m, n = x.shape[0], y.shape[1]
    return pl.pallas_call(
        matmul_kernel,
        out_shape=jax.ShapeDtypeStruct((n, m), x.dtype),
        grid=(m // 128, n // 128),
        in_specs=[
            pl.BlockSpec((128, 256), lambda i, j: (i, 0)),
            pl.BlockSpec((256, 128), lambda i, j: (0, j)),
        ],
        out_specs=pl.BlockSpec((128, 128), lambda i, j: (i, j)),  # MARK
    )(x, y)
