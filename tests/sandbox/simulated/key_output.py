"""A Pallas PRNG key through a kernel (SMEM in, copied, SMEM out), as JAX's `test_output_physical_key`."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed):
    return (jnp.array([seed, seed + 7], jnp.uint32),)


def reference(words):
    return jax.random.key_data(pltpu.to_pallas_key(jax.random.wrap_key_data(words, impl="threefry2x32")))


def pass_key_kernel(key_ref, o_ref):
    pltpu.sync_copy(key_ref, o_ref)


def kernel(words):
    key = pltpu.to_pallas_key(jax.random.wrap_key_data(words, impl="threefry2x32"))
    out = pl.pallas_call(
        pass_key_kernel,
        out_shape=jax.ShapeDtypeStruct((), key.dtype),
        in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM)],
        out_specs=pl.BlockSpec(memory_space=pltpu.SMEM),
    )(key)
    return jax.random.key_data(out)
