"""Loads, stores and DMAs through bitcast and reshaped refs, sliced before or after, and a chain of
transforms (`tpu_pallas_test.py`: `test_load_bitcasted_ref`, `test_store_bitcasted_ref`, `test_dma_reshaped_ref`,
`test_store_reshaped_ref`, `test_multiple_ref_transforms`)."""

import jax
import jax.numpy as jnp
from jax._src.state import utils as state_utils
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

ANY = pl.BlockSpec(memory_space=pl.ANY)


def make_inputs(seed):
    return (jnp.arange(32 * 256, dtype=jnp.int32).reshape(32, 256) + seed,)


def reference(x):
    x16 = x[:16]
    bf = jnp.arange(16 * 128, dtype=jnp.bfloat16).reshape(16, 128)
    stored = state_utils.bitcast(bf, jnp.int32)
    dma_source = x[:16, :128].reshape(16, 1, 128)
    return (
        state_utils.bitcast(x16[:8, :128], jnp.int16),
        state_utils.bitcast(x16, jnp.int16)[:16, :128],
        stored,
        stored,
        dma_source[:8],
        dma_source[:8],
        x[:5, :128].reshape(5, 1, 128),
        x[8:16, :128],
    )


def load_bitcast(x, slice_first, primitive):
    def body(x_ref, y_ref):
        ref = x_ref.at[:8, :128].bitcast(jnp.int16) if slice_first else x_ref.bitcast(jnp.int16).at[:16, :128]
        if primitive:
            pltpu.store(y_ref, pltpu.load(ref))
        else:
            y_ref[...] = ref[...]

    return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct((16, 128), jnp.int16))(x)


def store_bitcast(slice_first, primitive):
    def body(x_ref, y_ref):
        ref = (
            y_ref.at[:8, :128].bitcast(jnp.bfloat16)
            if slice_first
            else y_ref.bitcast(jnp.bfloat16).at[:16, :128]
        )
        if primitive:
            pltpu.store(ref, pltpu.load(x_ref))
        else:
            ref[...] = x_ref[...]

    x = jnp.arange(16 * 128, dtype=jnp.bfloat16).reshape(16, 128)
    return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct((16, 256), jnp.int32))(x)[:8, :128]


def dma_reshaped(x, slice_first):
    def body(x_hbm_ref, y_hbm_ref):
        def scoped(sem):
            ref = (
                x_hbm_ref.at[:8, :, :].reshape(8, 128)
                if slice_first
                else x_hbm_ref.reshape(16, 128).at[:8, :]
            )
            pltpu.async_copy(ref, y_hbm_ref.reshape(8, 128).at[...], sem).wait()

        pl.run_scoped(scoped, pltpu.SemaphoreType.DMA)

    return pl.pallas_call(
        body, in_specs=[ANY], out_specs=ANY, out_shape=jax.ShapeDtypeStruct((8, 1, 128), jnp.int32)
    )(x)


def store_reshaped(x):
    def body(x_ref, y_ref):
        y_ref.reshape(5, 128)[...] = x_ref[...]

    return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct((5, 1, 128), jnp.int32))(x)


def chained(x):
    def body(x_ref, y_ref):
        ref = (
            x_ref.at[:16, :256]
            .bitcast(jnp.int16)
            .reshape((2, 16, 256))
            .bitcast(jnp.float16)
            .at[1:, :, :]
            .reshape((16, 256))
            .at[:, :128]
            .bitcast(jnp.int32)
        )
        y_ref[...] = ref[...]

    return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.int32))(x)


def kernel(x):
    x16 = x[:16]
    dma_source = x[:16, :128].reshape(16, 1, 128)
    return (
        load_bitcast(x16, True, False),
        load_bitcast(x16, False, True),
        store_bitcast(True, True),
        store_bitcast(False, False),
        dma_reshaped(dma_source, True),
        dma_reshaped(dma_source, False),
        store_reshaped(x[:5, :128]),
        chained(x),
    )
