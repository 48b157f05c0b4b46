"""Two hand-written DMA streams side by side for Tune on the chip: reads of x (m, n) f32 in `blocks`
blocks into `depth` VMEM slots, and, independent of them, writes of o (w, n) in as many blocks from
`wdepth` slots (0: `depth`) filled once with x's first 8 rows tiled. Iteration i starts block i of each
stream, once the block that last used its slot has landed (read i - depth, write i - wdepth): up to
`depth` reads and `wdepth` writes in flight, one of each started per iteration (the read first, or with
`write_first=1` the write), so the streams move read and write bytes in the ratio m : w all the way.
With one stream one deep and the other deeper, an iteration takes what one copy of the shallow stream
takes beside the other's. The reads are not used (a sink), and `like` (w, n) only gives o its shape (it
is never read): nothing but the two streams moves.

What it is for: what reads and writes cost while both are in flight, at ratios and block sizes no copy
has (a copy writes what it read, 1 : 1): `dma_read.py` timed reads alone, `dma_write.py` writes alone,
`dma_stream.py` the copy (`bench/tpu/README.md`).

make_inputs' defaults are the check size; `--size m=…,w=…,n=…` the target.
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed, m=256, w=256, n=128):
    return jax.random.normal(jax.random.key(seed), (m, n), jnp.float32), jnp.zeros((w, n), jnp.float32)


def reference(x, like):
    return jnp.tile(x[:8], (like.shape[0] // 8, 1))


def xla_baseline(x, like):
    """What a user would call instead: XLA's tile of x's first rows beside a sum of x (a read of it
    all; the sum times 0 keeps it from being dropped)."""
    return jnp.tile(x[:8], (like.shape[0] // 8, 1)) + jnp.sum(x) * 0.0


def _streams(
    x_hbm, _like, o_hbm, head, sink, slots, first, reads, writes, *, blocks, depth, wdepth, write_first
):
    br, bw = x_hbm.shape[0] // blocks, o_hbm.shape[0] // blocks
    load = pltpu.make_async_copy(x_hbm.at[pl.ds(0, 8)], head, first.at[0])
    load.start()
    load.wait()
    for slot in range(wdepth):
        slots[slot] = jnp.tile(head[...], (bw // 8, 1))

    def read(i, slot):
        return pltpu.make_async_copy(x_hbm.at[pl.ds(i * br, br)], sink.at[slot], reads.at[slot])

    def write(i, slot):
        return pltpu.make_async_copy(slots.at[slot], o_hbm.at[pl.ds(i * bw, bw)], writes.at[slot])

    @pl.loop(0, blocks)
    def _(i):
        @pl.when(i >= depth)
        def _():
            read(i - depth, i % depth).wait()  # the slot's last block has landed

        @pl.when(i >= wdepth)
        def _():
            write(i - wdepth, i % wdepth).wait()

        if write_first:
            write(i, i % wdepth).start()
            read(i, i % depth).start()
        else:
            read(i, i % depth).start()
            write(i, i % wdepth).start()

    for i in range(max(blocks - depth, 0), blocks):  # the blocks still in flight
        read(i, i % depth).wait()
    for i in range(max(blocks - wdepth, 0), blocks):
        write(i, i % wdepth).wait()


@functools.partial(jax.jit, static_argnames=("blocks", "depth", "wdepth", "write_first"))
def kernel(x, like, *, blocks=4, depth=2, wdepth=0, write_first=0):
    (m, n), w = x.shape, like.shape[0]
    wdepth = wdepth or depth
    if m % (8 * blocks) or w % (8 * blocks) or depth < 1 or wdepth < 1:
        raise ValueError(
            f"both streams must split into `blocks` whole groups of 8 rows, the depths be at least 1: "
            f"{x.shape=} {like.shape=} {blocks=} {depth=} {wdepth=}"
        )
    br, bw = m // blocks, w // blocks
    return pl.pallas_call(
        functools.partial(_streams, blocks=blocks, depth=depth, wdepth=wdepth, write_first=bool(write_first)),
        out_shape=jax.ShapeDtypeStruct(like.shape, x.dtype),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY), pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec(memory_space=pl.ANY),
        scratch_shapes=[
            pltpu.VMEM((8, n), x.dtype),
            pltpu.VMEM((depth, br, n), x.dtype),
            pltpu.VMEM((wdepth, bw, n), x.dtype),
            pltpu.SemaphoreType.DMA((1,)),
            pltpu.SemaphoreType.DMA((depth,)),
            pltpu.SemaphoreType.DMA((wdepth,)),
        ],
    )(x, like)
