"""A PRNG key through a kernel (SMEM in, SMEM out): the TPU compiler accepts it; the simulator cannot."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed):
    return (jnp.array([seed, seed + 7], jnp.uint32),)


def reference(words):
    return words


def pass_key_kernel(key_ref, o_ref):
    pltpu.sync_copy(key_ref, o_ref)


def kernel(words):
    key = pltpu.to_pallas_key(jax.random.wrap_key_data(words, impl="threefry2x32"))
    out = pl.pallas_call(  # MARK
        pass_key_kernel,
        out_shape=jax.ShapeDtypeStruct((), key.dtype),
        in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM)],
        out_specs=pl.BlockSpec(memory_space=pltpu.SMEM),
    )(key)
    return jax.random.key_data(out)
