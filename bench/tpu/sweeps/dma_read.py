"""A hand-written stream of reads for Tune on the chip: x (m, n) f32 in HBM read through `depth` VMEM
slots of (br, n) rows, each block's groups of 8 rows added into one (8, n) sum that stays in VMEM (a
vreg add per 4 KiB read at n=128): HBM read only, no write-back but the last sum's. Block i is read
into slot i % depth, and the slot's next read (block i + depth) starts once the block is added. The
same stream as `dma_stream.py` without its writes: what reads alone reach, and what a read costs
beyond its bytes at each depth.

make_inputs' defaults are the check size; `--size m=…,n=…` the target; `--bind br=m`.
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed, m=256, n=128):
    """Small integers as f32, so every order of adding them gives the same sums."""
    values = jax.random.randint(jax.random.key(seed), (m, n), -8, 9)
    return (values.astype(jnp.float32),)


def reference(x):
    return jnp.sum(x.reshape(-1, 8, x.shape[1]), axis=0)


def xla_baseline(x):
    """What a user would call instead: XLA's reduction over the row groups."""
    return jnp.sum(x.reshape(-1, 8, x.shape[1]), axis=0)


def _stream(x_hbm, o_ref, slots, reads, *, br, depth):
    blocks = x_hbm.shape[0] // br
    n = x_hbm.shape[1]

    def read(i, slot):
        return pltpu.make_async_copy(x_hbm.at[pl.ds(i * br, br)], slots.at[slot], reads.at[slot])

    for i in range(min(depth, blocks)):
        read(i, i).start()
    o_ref[...] = jnp.zeros_like(o_ref)

    @pl.loop(0, blocks)
    def _(i):
        slot = i % depth
        read(i, slot).wait()
        o_ref[...] += jnp.sum(slots[slot].reshape(br // 8, 8, n), axis=0)

        @pl.when(i + depth < blocks)
        def _():
            read(i + depth, slot).start()


@functools.partial(jax.jit, static_argnames=("br", "depth"))
def kernel(x, *, br=64, depth=2):
    m, n = x.shape
    if m % br or br % 8 or depth < 1:
        raise ValueError(
            f"blocks must divide the rows in groups of 8, depth be at least 1: {x.shape=} {br=} {depth=}"
        )
    return pl.pallas_call(
        functools.partial(_stream, br=br, depth=depth),
        out_shape=jax.ShapeDtypeStruct((8, n), x.dtype),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        scratch_shapes=[pltpu.VMEM((depth, br, n), x.dtype), pltpu.SemaphoreType.DMA((depth,))],
    )(x)
