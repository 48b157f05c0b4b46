"""Core 0 signals core 1 once, but core 1 waits for a count of 2."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed):
    return (jnp.arange(16 * 128, dtype=jnp.float32).reshape(16, 128),)


def reference(x):
    return x


def handoff_kernel(x_hbm, o_hbm, sem):
    core = jax.lax.axis_index("core")

    @pl.when(core == 0)
    def _():
        pltpu.sync_copy(x_hbm, o_hbm)
        pl.semaphore_signal(sem, 1, core_index=1)

    @pl.when(core == 1)
    def _():
        pl.semaphore_wait(sem, 2)  # MARK


def kernel(x):
    return pl.kernel(
        handoff_kernel,
        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
        mesh=pltpu.TensorCoreMesh(axis_name="core", num_cores=2),
        scratch_types=[pltpu.SemaphoreType.REGULAR],
    )(x)
