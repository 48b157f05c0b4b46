"""A permutation with one indexed DMA: rows_vmem scattered to out_hbm.at[ids_vmem]."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc


def make_inputs(seed):
    rows = jax.random.normal(jax.random.key(seed), (8, 128), jnp.float32)
    ids = jax.random.permutation(jax.random.key(seed + 1), 8).astype(jnp.int32)
    return (rows, ids)


def reference(rows, ids):
    return jnp.zeros_like(rows).at[ids].set(rows)


def scatter_kernel(rows_hbm, ids_hbm, o_hbm, ids_vmem, rows_vmem):
    pltpu.sync_copy(ids_hbm, ids_vmem)
    pltpu.sync_copy(rows_hbm, rows_vmem)
    pltpu.sync_copy(rows_vmem, o_hbm.at[ids_vmem])


def kernel(rows, ids):
    mesh = plsc.VectorSubcoreMesh(
        core_axis_name="core", subcore_axis_name="subcore", num_cores=1, num_subcores=1
    )
    return pl.kernel(
        scatter_kernel,
        out_type=jax.ShapeDtypeStruct((8, 128), rows.dtype),
        mesh=mesh,
        scratch_types=[pltpu.VMEM((8,), jnp.int32), pltpu.VMEM((8, 128), rows.dtype)],
    )(rows, ids)
