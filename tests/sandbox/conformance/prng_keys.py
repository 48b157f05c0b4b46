"""The TPU core's PRNG and Pallas PRNG keys in SMEM: one seed gives one stream, another seed another, and
draws do not repeat; stateful and keyed sampling, `fold_in`, the key's words, a key copied out
(`tpu_pallas_random_test.py`: `test_seeded_reproducibility`, `test_prng_non_vreg_shape_output`,
`test_stateful_sample`, `test_stateless_sample`, `test_fold_in`, `test_key_data`, `test_output_physical_key`)."""

import jax
import jax.numpy as jnp
from jax import random as jr
from jax._src.pallas.mosaic import random as plrandom
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

SMEM = pl.BlockSpec(memory_space=pltpu.SMEM)


def make_inputs(seed):
    return (jnp.array([seed, seed + 7], jnp.uint32),)


def pallas_key(words):
    return pltpu.to_pallas_key(jr.wrap_key_data(words, impl="threefry2x32"))


def reference(words):
    data = jr.key_data(pallas_key(words))
    return jnp.ones((8,), jnp.float32), data, data


def seeded(seed, shape):
    def body(o_ref):
        pltpu.prng_seed(seed)
        o_ref[...] = pltpu.prng_random_bits(o_ref[...].shape)

    return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct(shape, jnp.int32))()


def unique_share(bits):
    flat = jnp.sort(bits.ravel())
    return (1 + jnp.sum(flat[1:] != flat[:-1])) / flat.size


def seeded_checks():
    a, b, c = seeded(0, (8, 128)), seeded(0, (8, 128)), seeded(1, (8, 128))
    small = seeded(0, (8, 16))
    return [jnp.all(a == b), jnp.any(a != c), unique_share(a) > 0.99, unique_share(small) > 0.99]


def stateful_body(key_ref, o_ref):
    pltpu.prng_seed(key_ref[...])
    o_ref[0] = pltpu.stateful_uniform(shape=o_ref.shape[1:])
    o_ref[1] = pltpu.stateful_normal(shape=o_ref.shape[1:])


def stateless_body(key_ref, o_ref):
    key = key_ref.at[0, 0][...]
    o_ref[0] = jr.uniform(key, shape=o_ref.shape[1:])
    o_ref[1] = jr.uniform(jr.fold_in(key, jnp.uint32(2)), shape=o_ref.shape[1:])


def key_data_body(key_ref, o_ref):
    x0, x1 = plrandom.unwrap_pallas_seed(key_ref[...])
    o_ref[0, 0] = x0
    o_ref[0, 1] = x1


def copy_body(x_ref, o_ref):
    pltpu.sync_copy(x_ref, o_ref)


def kernel(words):
    key = pallas_key(words)
    out = jax.ShapeDtypeStruct((2, 8, 128), jnp.float32)
    full = pl.pallas_call(stateful_body, in_specs=[SMEM], out_shape=out)(key)
    folded = pl.pallas_call(stateless_body, in_specs=[SMEM], out_shape=out)(key.reshape(1, 1))
    data = jr.key_data(key)
    unwrapped = pl.pallas_call(
        key_data_body, in_specs=[SMEM], out_specs=SMEM, out_shape=jax.ShapeDtypeStruct.like(data)
    )(key)
    passed = pl.pallas_call(
        copy_body, in_specs=[SMEM], out_specs=SMEM, out_shape=jax.ShapeDtypeStruct((), key.dtype)
    )(key)
    uniform = full[0]
    checks = jnp.stack(
        [
            (jnp.min(uniform) >= 0) & (jnp.max(uniform) < 1) & (jnp.max(uniform) > jnp.min(uniform)),
            jnp.abs(jnp.mean(full[1])) < 0.2,
            jnp.any(folded[0] != folded[1]),
            (jnp.min(folded) >= 0) & (jnp.max(folded) < 1),
            *seeded_checks(),
        ]
    )
    return checks.astype(jnp.float32), unwrapped, jr.key_data(passed)
