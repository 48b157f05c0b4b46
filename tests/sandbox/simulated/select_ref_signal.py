"""`pl.select_ref` given to `pl.semaphore_signal`: JAX cannot build it for a TPU either, and says so."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed):
    return (jnp.ones((8, 128), jnp.float32),)


def reference(x):
    return x


def ping_kernel(x_ref, o_ref, sems):
    @pl.loop(0, 2)
    def _(i):
        pl.semaphore_signal(pl.select_ref(i, sems.at[0], sems.at[1]), 1)  # MARK
        pl.semaphore_wait(sems.at[i], 1)

    o_ref[...] = x_ref[...]


def kernel(x):
    return pl.pallas_call(
        ping_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        scratch_shapes=[pltpu.SemaphoreType.REGULAR((2,))],
    )(x)
