"""A DMA-driven program without dots for Tune on the chip: a `pallas_call` whose operands stay in HBM
and whose body runs one `emit_pipeline` of (br, bc) blocks computing x * 2 + 1 (bf16): the copies
and their overlap are the kernel's own, not a BlockSpec grid's.

make_inputs' defaults are the check size; `--size m=…,n=…` the target; `--bind br=m,bc=n`.
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed, m=256, n=512):
    return (jax.random.normal(jax.random.key(seed), (m, n), jnp.float32).astype(jnp.bfloat16),)


def reference(x):
    return (x.astype(jnp.float32) * 2 + 1).astype(x.dtype)


def _program(x_hbm, o_hbm, *, br, bc):
    def block(x_ref, o_ref):
        o_ref[...] = (x_ref[...].astype(jnp.float32) * 2 + 1).astype(o_ref.dtype)

    m, n = x_hbm.shape
    spec = pl.BlockSpec((br, bc), lambda i, j: (i, j))
    pltpu.emit_pipeline(block, grid=(m // br, n // bc), in_specs=[spec], out_specs=[spec])(x_hbm, o_hbm)


@functools.partial(jax.jit, static_argnames=("br", "bc"))
def kernel(x, *, br=64, bc=256):
    return pl.pallas_call(
        functools.partial(_program, br=br, bc=bc),
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec(memory_space=pl.ANY),
    )(x)
