"""PRNG keys in other layouts: a key in HBM copied into an SMEM scratch key inside `pl.core_map`, a
squeezed key BlockSpec, a threefry key in VMEM sampling bit-exactly as `jax.random` outside a kernel, and
`pltpu.sample_block` giving the same tensor for two blockings (`tpu_pallas_random_test.py`:
`test_key_in_core_map`, `test_squeezed_blockspec`, `test_pallas_matches_jax_threefry`, `test_block_invariance`)."""

import functools

import jax
import jax.numpy as jnp
from jax import random as jr
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed):
    return (jnp.array([seed, seed + 7], jnp.uint32),)


def reference(words):
    key = jr.wrap_key_data(words, impl="threefry2x32")
    with jax.threefry_partitionable(True):
        return jr.uniform(key, (8, 128)), jr.bits(key, (4, 16, 128)), jnp.ones((3,), jnp.float32)


def in_core_map(key):
    def main(refs):
        key_hbm, o_ref = refs

        @pl.core_map(pltpu.TensorCoreMesh(axis_name="core", num_cores=1))
        def _():
            @functools.partial(
                pl.run_scoped,
                key_smem=pltpu.SMEM((), key_hbm.dtype),
                o_vmem=pltpu.VMEM(o_ref.shape, o_ref.dtype),
            )
            def _scoped(key_smem, o_vmem):
                pltpu.sync_copy(key_hbm, key_smem)
                o_vmem[...] = jr.uniform(key_smem[...], shape=o_ref.shape, minval=0.0, maxval=1.0)
                pltpu.sync_copy(o_vmem, o_ref)

    _, y = pl.run_state(main)((key, jnp.zeros((8, 128), jnp.float32)))
    return y


def squeezed(key):
    def body(key_ref, o_ref):
        o_ref[...] = jr.uniform(key_ref[...], shape=o_ref.shape)

    return pl.pallas_call(
        body,
        grid=(),
        in_specs=[pl.BlockSpec((pl.squeezed,), lambda: (0,), memory_space=pltpu.SMEM)],
        out_specs=pl.BlockSpec((8, 128), lambda: (0, 0)),
        out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
    )(key[None])


def layout_checks(words):
    key = pltpu.to_pallas_key(jr.wrap_key_data(words, impl="threefry2x32"))
    y, z = in_core_map(key), squeezed(key)
    return jnp.stack([jnp.max(y) > jnp.min(y), jnp.max(z) > jnp.min(z)]).astype(jnp.float32)


def sampled(key, block, grid, index_map):
    def body(key_ref, o_ref):
        o_ref[...] = pltpu.sample_block(
            jr.uniform,
            key_ref[...],
            block_size=o_ref[...].shape,
            tile_size=(16, 128),
            total_size=(64, 512),
            block_index=index_map(pl.program_id(0), pl.program_id(1)),
            minval=0.0,
            maxval=1.0,
        )

    return pl.pallas_call(
        body,
        out_shape=jax.ShapeDtypeStruct((64, 512), jnp.float32),
        in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM)],
        out_specs=pl.BlockSpec(block, index_map),
        grid=grid,
    )(key)


def kernel(words):
    key_checks = layout_checks(words)
    key = jr.wrap_key_data(words, impl="threefry2x32")

    def body(key_ref, o_ref):
        o_ref[...] = jr.uniform(key_ref[...], shape=o_ref[...].shape)

    def bits_body(key_ref, o_ref):
        o_ref[...] = jr.bits(key_ref[...], shape=o_ref[...].shape)

    vmem = [pl.BlockSpec(memory_space=pltpu.VMEM)]
    with jax.threefry_partitionable(True):
        u = pl.pallas_call(body, in_specs=vmem, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32))(key)
        b = pl.pallas_call(
            bits_body, in_specs=vmem, out_shape=jax.ShapeDtypeStruct((4, 16, 128), jnp.uint32)
        )(key)
    pkey = jr.key(0, impl="pallas_tpu")
    small = sampled(pkey, (16, 128), (4, 4), lambda i, j: (i, j))
    large = sampled(pkey, (32, 256), (2, 2), lambda i, j: (j, i))
    return u, b, jnp.concatenate([key_checks, jnp.all(small == large).astype(jnp.float32)[None]])
