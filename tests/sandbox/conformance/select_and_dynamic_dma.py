"""DMAs from refs picked at run time by `pl.select_ref` (by a loop index, by an SMEM value, nested, through
a reshape), and a DMA whose size is read from SMEM (`tpu_pallas_test.py`: `test_select_ref`,
`test_select_ref_smem_index`, `test_select_ref_nested`, `test_simple_tile_aligned_dynamic_size_dma`)."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

HBM, SMEM, ANY = (pl.BlockSpec(memory_space=s) for s in (pltpu.HBM, pltpu.SMEM, pl.ANY))
REFS = 4


def make_inputs(seed):
    return (jnp.arange(8 * REFS * 256, dtype=jnp.int32).reshape(8 * REFS, 256) + seed,)


def reference(x):
    tiles = jnp.tile(jnp.arange(8, dtype=jnp.int32)[:, None, None], [1, 8, 128])
    return (
        x[:, :128],
        x[:8, :128].astype(jnp.float32),
        x[:, :128],
        jnp.zeros_like(tiles).at[:4].set(tiles[:4]),
    )


def by_loop_index(xs):
    def body(*refs):
        *x_refs, y_ref = refs

        def scope(sem):
            @pl.loop(0, REFS)
            def _(i):
                source = pl.select_ref(i, *x_refs)
                pltpu.async_copy(
                    source, y_ref.at[pl.ds(8 * i, 8)], pl.select_ref(i, sem.at[0], sem.at[1])
                ).wait()

        pl.run_scoped(scope, pltpu.SemaphoreType.DMA(2))

    return pl.pallas_call(
        body, in_specs=[HBM] * REFS, out_specs=HBM, out_shape=jax.ShapeDtypeStruct((8 * REFS, 128), jnp.int32)
    )(*xs)


def by_smem_index(x0, x1):
    def body(idx_ref, x0_ref, x1_ref, y_ref):
        def scope(sem):
            pltpu.async_copy(pl.select_ref(idx_ref[...], x0_ref.at[0:8], x1_ref), y_ref, sem).wait()

        pl.run_scoped(scope, pltpu.SemaphoreType.DMA)

    return pl.pallas_call(
        body, in_specs=[SMEM, HBM, HBM], out_specs=HBM, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32)
    )(jnp.array(0, jnp.int32), x0, x1)


def nested(xs):
    def body(*refs):
        *x_refs, y_ref = refs

        def scope(sem):
            @pl.loop(0, REFS)
            def _(i):
                halves = (pl.select_ref(0, r.at[:, :128], r.at[:, 128:]) for r in x_refs)
                source = pl.select_ref(i, *halves).reshape(8, 128)
                pltpu.async_copy(source, y_ref.at[pl.ds(8 * i, 8), :128], sem.at[0]).wait()

        pl.run_scoped(scope, pltpu.SemaphoreType.DMA(2))

    return pl.pallas_call(
        body, in_specs=[HBM] * REFS, out_specs=HBM, out_shape=jax.ShapeDtypeStruct((8 * REFS, 256), jnp.int32)
    )(*xs)[:, :128]


def dynamic_size():
    def body(size_ref, x_ref, _, o_ref, sem):
        size = size_ref[0]
        pltpu.async_copy(x_ref.at[pl.ds(0, size)], o_ref.at[pl.ds(0, size)], sem).wait()

    x = jnp.tile(jnp.arange(8, dtype=jnp.int32)[:, None, None], [1, 8, 128])
    o = jnp.zeros((8, 8, 128), dtype=jnp.int32)
    return pl.pallas_call(
        body,
        in_specs=[SMEM, ANY, ANY],
        out_specs=ANY,
        scratch_shapes=[pltpu.SemaphoreType.DMA],
        out_shape=o,
        input_output_aliases={2: 0},
    )(jnp.array([4], jnp.int32), x, o)


def kernel(x):
    xs = jnp.split(x, REFS)
    narrow = [part[:, :128] for part in xs]
    x0 = x[:8, :128].astype(jnp.float32)
    return by_loop_index(narrow), by_smem_index(x0, jnp.zeros_like(x0)), nested(xs), dynamic_size()
