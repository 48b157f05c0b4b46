"""pltpu.stochastic_round to bf16: each value lands on one of its two bf16 neighbours."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed):
    x = jax.random.normal(jax.random.key(seed), (8, 128), jnp.float32)
    bits = jax.random.bits(jax.random.key(seed + 1), (8, 128), jnp.uint32)
    return (x, bits)


def reference(x, bits):
    # The nearest bf16; a stochastic result is at most one bf16 step away (within the bf16 tolerance).
    return x.astype(jnp.bfloat16)


def round_kernel(x_ref, bits_ref, o_ref):
    o_ref[...] = pltpu.stochastic_round(x_ref[...], bits_ref[...], target_dtype=jnp.bfloat16)


def kernel(x, bits):
    return pl.pallas_call(round_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, jnp.bfloat16))(x, bits)
