"""`semaphore_wait` lives in `pl` (jax.experimental.pallas), not in `pltpu`."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed):
    return (jnp.ones((8, 128), jnp.float32),)


def reference(x):
    return x + 1


def add_one_kernel(x_ref, o_ref, sem):
    pl.semaphore_signal(sem, 1)
    pltpu.semaphore_wait(sem, 1)  # MARK
    o_ref[...] = x_ref[...] + 1


def kernel(x):
    return pl.pallas_call(
        add_one_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        scratch_shapes=[pltpu.SemaphoreType.REGULAR],
    )(x)
