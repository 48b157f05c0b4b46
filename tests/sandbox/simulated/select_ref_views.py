"""pl.select_ref between a slice of one array and another array, picked by a scalar in SMEM."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed):
    a = jax.random.normal(jax.random.key(seed), (16, 128), jnp.float32)
    b = jax.random.normal(jax.random.key(seed + 1), (8, 128), jnp.float32)
    return (jnp.array([1, 0], jnp.int32), a, b)


def reference(order, a, b):
    return jnp.concatenate([b, a[8:]])


def pick_kernel(order_ref, a_hbm, b_hbm, o_hbm, sem):
    for step in range(2):
        src = pl.select_ref(order_ref[step], a_hbm.at[pl.ds(8, 8)], b_hbm)
        pltpu.async_copy(src, o_hbm.at[pl.ds(8 * step, 8)], sem).wait()


def kernel(order, a, b):
    return pl.pallas_call(
        pick_kernel,
        out_shape=jax.ShapeDtypeStruct((16, 128), jnp.float32),
        in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM)] + [pl.BlockSpec(memory_space=pl.ANY)] * 2,
        out_specs=pl.BlockSpec(memory_space=pl.ANY),
        scratch_shapes=[pltpu.SemaphoreType.DMA],
    )(order, a, b)
