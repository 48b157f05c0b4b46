"""The index map takes two grid indices, but the grid has three axes."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed):
    kx, ky = jax.random.split(jax.random.key(seed))
    return jax.random.normal(kx, (256, 256)), jax.random.normal(ky, (256, 256))


def reference(x, y):
    return x @ y


def matmul_kernel(x_ref, y_ref, o_ref, acc_ref):
    @pl.when(pl.program_id(2) == 0)
    def _():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jnp.dot(x_ref[...], y_ref[...])

    @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
    def _():
        o_ref[...] = acc_ref[...]


def kernel(x, y):
    return pl.pallas_call(
        matmul_kernel,
        out_shape=jax.ShapeDtypeStruct((256, 256), x.dtype),
        grid=(2, 2, 2),
        in_specs=[
            pl.BlockSpec((128, 128), lambda i, j, k: (i, k)),
            pl.BlockSpec((128, 128), lambda i, j, k: (k, j)),
        ],
        out_specs=pl.BlockSpec((128, 128), lambda i, j: (i, j)),  # MARK
        scratch_shapes=[pltpu.VMEM((128, 128), jnp.float32)],
    )(x, y)
