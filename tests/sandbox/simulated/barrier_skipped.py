"""A subcore barrier that subcore 0 skips: the other subcores wait forever, and the run says where."""

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc


def make_inputs(seed):
    return (jnp.ones((4, 16), jnp.float32),)


def reference(x):
    return x


def copy_kernel(x_hbm, o_hbm, row):
    subcore = lax.axis_index("subcore")
    pltpu.sync_copy(x_hbm.at[subcore], row)

    @pl.when(subcore != 0)
    def _():
        plsc.subcore_barrier()  # MARK

    pltpu.sync_copy(row, o_hbm.at[subcore])


def kernel(x):
    mesh = plsc.VectorSubcoreMesh(
        core_axis_name="core", subcore_axis_name="subcore", num_cores=1, num_subcores=4
    )
    return pl.kernel(
        copy_kernel,
        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
        mesh=mesh,
        scratch_types=[pltpu.VMEM((16,), x.dtype)],
    )(x)
