"""A DMA loop copies from a different input (and waits on a different semaphore) each step."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed):
    x = jax.random.normal(jax.random.key(seed), (3, 8, 128), jnp.float32)
    return (x[0], x[1], x[2])


def reference(a, b, c):
    return jnp.concatenate([a, b, c])


def concat_kernel(a_hbm, b_hbm, c_hbm, o_hbm, sems):
    @pl.loop(0, 3)
    def _(i):
        src = pl.select_ref(i, a_hbm, b_hbm, c_hbm)
        sem = pl.select_ref(i % 2, sems.at[0], sems.at[1])
        pltpu.async_copy(src, o_hbm.at[pl.ds(8 * i, 8)], sem).wait()


def kernel(a, b, c):
    return pl.pallas_call(
        concat_kernel,
        out_shape=jax.ShapeDtypeStruct((24, 128), jnp.float32),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)] * 3,
        out_specs=pl.BlockSpec(memory_space=pl.ANY),
        scratch_shapes=[pltpu.SemaphoreType.DMA((2,))],
    )(a, b, c)
