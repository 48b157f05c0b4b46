"""Four vector subcores add their rows into shared VMEM (filled by subcore 0) between two
`plsc.subcore_barrier()`s."""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc


def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (4, 16), jnp.float32),)


def reference(x):
    return x[0] + x.sum(0)


def sum_kernel(x_hbm, o_hbm, shared, row, ids):
    subcore = lax.axis_index("subcore")
    pltpu.sync_copy(x_hbm.at[subcore], row)
    ids[...] = lax.iota(jnp.int32, 16)

    @pl.when(subcore == 0)
    def _():
        pltpu.sync_copy(row, shared)  # a TPU stores to shared VMEM only by DMA

    plsc.subcore_barrier()
    pltpu.sync_copy(row, shared.at[ids], add=True)
    plsc.subcore_barrier()

    @pl.when(subcore == 0)
    def _():
        pltpu.sync_copy(shared, o_hbm)


def kernel(x):
    mesh = plsc.VectorSubcoreMesh(
        core_axis_name="core", subcore_axis_name="subcore", num_cores=1, num_subcores=4
    )
    return pl.kernel(
        sum_kernel,
        out_type=jax.ShapeDtypeStruct((16,), x.dtype),
        mesh=mesh,
        scratch_types=[
            pltpu.VMEM_SHARED((16,), x.dtype),
            pltpu.VMEM((16,), x.dtype),
            pltpu.VMEM((16,), jnp.int32),
        ],
    )(x)
