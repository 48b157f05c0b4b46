"""Off-by-one index map inside emit_pipeline: the DMA that fetches y's block reads past y's end."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed):
    kx, ky = jax.random.split(jax.random.key(seed))
    return jax.random.normal(kx, (256, 256)), jax.random.normal(ky, (256, 256))


def reference(x, y):
    return x @ y


def matmul_kernel(x_hbm, y_hbm, o_hbm, acc_ref):
    def step(x_ref, y_ref, o_ref):
        @pl.when(pl.program_id(2) == 0)
        def _():
            acc_ref[...] = jnp.zeros_like(acc_ref)

        acc_ref[...] += jnp.dot(x_ref[...], y_ref[...])

        @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
        def _():
            o_ref[...] = acc_ref[...]

    pltpu.emit_pipeline(
        step,
        grid=(2, 2, 2),
        in_specs=[
            pl.BlockSpec((128, 128), lambda i, j, k: (i, k)),
            pl.BlockSpec((128, 128), lambda i, j, k: (k + 1, j)),  # MARK
        ],
        out_specs=pl.BlockSpec((128, 128), lambda i, j, k: (i, j)),
    )(x_hbm, y_hbm, o_hbm)


def kernel(x, y):
    return pl.kernel(
        matmul_kernel,
        out_type=jax.ShapeDtypeStruct((256, 256), jnp.float32),
        mesh=pltpu.TensorCoreMesh(axis_name="core", num_cores=1),
        scratch_types=[pltpu.VMEM((128, 128), jnp.float32)],
    )(x, y)
