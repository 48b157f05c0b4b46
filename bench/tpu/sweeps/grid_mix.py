"""Reads and writes mixed in a grid's steps for Tune on the chip: k inputs x_1 … x_k (m, n) f32 summed
block by block, the sum written r times, o (r, m, n) = [s, …, s]. Each step copies k (br, bc) blocks in
and one (r, br, bc) block out, so the pipeline moves reads and writes in the ratio k : r at every block
size, where the element-wise kernel (2 : 1), a norm or a softmax (1 : 1) and a column sum (1 : 0) each
have one ratio only.

What it is for: what a grid step's copies in and write-backs cost together (the next block in and the
last one out run side by side on the HBM) and how much of the step's fixed cost they hide, at ratios
and block sizes the other sweeps leave out (`bench/tpu/README.md`).

make_inputs' defaults are the check size; `--size m=…,n=…,k=…,r=…` the target (k inputs, r copies of
their sum written); `--bind br=m,bc=n`.
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def make_inputs(seed, m=256, n=512, k=2, r=1):
    keys = jax.random.split(jax.random.key(seed), k)
    inputs = tuple(jax.random.normal(key, (m, n), jnp.float32) for key in keys)
    return (*inputs, jnp.zeros((r,), jnp.float32))  # the last only says r: it is never copied


def reference(*args):
    *inputs, copies = args
    total = functools.reduce(jnp.add, inputs)
    return jnp.broadcast_to(total, (copies.shape[0], *total.shape))


def xla_baseline(*args):
    """What a user would call instead: XLA's fused sum and broadcast."""
    return reference(*args)


def _body(*refs):
    *in_refs, o_ref = refs
    total = functools.reduce(jnp.add, (ref[...] for ref in in_refs))
    for copy in range(o_ref.shape[0]):
        o_ref[copy] = total


@functools.partial(jax.jit, static_argnames=("br", "bc"))
def kernel(*args, br=128, bc=512):
    *inputs, copies = args
    m, n = inputs[0].shape
    if m % br or n % bc:
        raise ValueError(f"blocks must divide the array: {inputs[0].shape=} {br=} {bc=}")
    r = copies.shape[0]
    return pl.pallas_call(
        _body,
        grid=(m // br, n // bc),
        in_specs=[pl.BlockSpec((br, bc), lambda i, j: (i, j)) for _ in inputs],
        out_specs=pl.BlockSpec((r, br, bc), lambda i, j: (0, i, j)),
        out_shape=jax.ShapeDtypeStruct((r, m, n), inputs[0].dtype),
    )(*inputs)
