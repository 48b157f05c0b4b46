"""A hand-written stream of writes for Tune on the chip: o (m, n) f32 in HBM written from `depth` VMEM
slots of (br, n) rows, each slot filled once with x's first 8 rows tiled (x is read once, 4 KiB at n=128),
so nothing but writes moves while the stream runs. Block i is written from slot i % depth, and block
i + depth's write starts once block i's has landed: `depth` writes in flight. The writes' twin of
`dma_read.py`: what writes alone reach, and what a write costs beyond its bytes at each depth, where
the copies of `dma_stream.py` have reads in flight beside them.

make_inputs' defaults are the check size; `--size m=…,n=…` the target; `--bind br=m`.
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed, m=256, n=128):
    return (jax.random.normal(jax.random.key(seed), (m, n), jnp.float32),)


def reference(x):
    return jnp.tile(x[:8], (x.shape[0] // 8, 1))


def xla_baseline(x):
    """What a user would call instead: XLA's own tile of the first rows (a write of m x n)."""
    return jnp.tile(x[:8], (x.shape[0] // 8, 1))


def _stream(x_hbm, o_hbm, head, slots, first, writes, *, br, depth):
    blocks = o_hbm.shape[0] // br
    read = pltpu.make_async_copy(x_hbm.at[pl.ds(0, 8)], head, first.at[0])
    read.start()
    read.wait()
    for slot in range(depth):
        slots[slot] = jnp.tile(head[...], (br // 8, 1))

    def write(i, slot):
        return pltpu.make_async_copy(slots.at[slot], o_hbm.at[pl.ds(i * br, br)], writes.at[slot])

    @pl.loop(0, blocks)
    def _(i):
        slot = i % depth

        @pl.when(i >= depth)
        def _():
            write(i - depth, slot).wait()  # the slot's last write has landed

        write(i, slot).start()

    for i in range(max(blocks - depth, 0), blocks):  # the writes still in flight
        write(i, i % depth).wait()


@functools.partial(jax.jit, static_argnames=("br", "depth"))
def kernel(x, *, br=64, depth=2):
    m, n = x.shape
    if m % br or br % 8 or depth < 1:
        raise ValueError(
            f"blocks must divide the rows in groups of 8, depth be at least 1: {x.shape=} {br=} {depth=}"
        )
    return pl.pallas_call(
        functools.partial(_stream, br=br, depth=depth),
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec(memory_space=pl.ANY),
        scratch_shapes=[
            pltpu.VMEM((8, n), x.dtype),
            pltpu.VMEM((depth, br, n), x.dtype),
            pltpu.SemaphoreType.DMA((1,)),
            pltpu.SemaphoreType.DMA((depth,)),
        ],
    )(x)
