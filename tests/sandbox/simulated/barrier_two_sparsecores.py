"""A subcore barrier on a mesh of two SparseCores: legal on a TPU, not simulated (one shared VMEM each)."""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc


def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (2, 16), jnp.float32),)


def reference(x):
    return x


def copy_kernel(x_hbm, o_hbm, row):
    core = lax.axis_index("core")
    pltpu.sync_copy(x_hbm.at[core], row)
    plsc.subcore_barrier()
    pltpu.sync_copy(row, o_hbm.at[core])


def kernel(x):
    mesh = plsc.VectorSubcoreMesh(
        core_axis_name="core", subcore_axis_name="subcore", num_cores=2, num_subcores=1
    )
    return pl.kernel(  # MARK
        copy_kernel,
        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
        mesh=mesh,
        scratch_types=[pltpu.VMEM((16,), x.dtype)],
    )(x)
