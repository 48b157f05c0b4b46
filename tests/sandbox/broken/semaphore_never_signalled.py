"""A kernel waits on a semaphore that nothing signals: it would wait forever."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed):
    return (jnp.ones((8, 128), jnp.float32),)


def reference(x):
    return x + 1


def add_one_kernel(x_ref, o_ref, sem):
    o_ref[...] = x_ref[...] + 1
    pl.semaphore_wait(sem, 1)  # MARK


def kernel(x):
    return pl.pallas_call(
        add_one_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        scratch_shapes=[pltpu.SemaphoreType.REGULAR],
    )(x)
