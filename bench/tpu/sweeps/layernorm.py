"""A layer norm for Tune on the chip: bf16 rows in and out, each block `br` whole rows normalised in f32
in VMEM (two lane reductions, the mean and the variance, an rsqrt), then scaled and shifted by a learned
weight and bias.

make_inputs' defaults are the check size; `--size m=…,n=…` the target; `--bind br=m`.
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

EPS = 1e-5


def make_inputs(seed, m=256, n=512):
    kx, kw, kb = jax.random.split(jax.random.key(seed), 3)
    x = jax.random.normal(kx, (m, n), jnp.float32).astype(jnp.bfloat16)
    w = (1.0 + 0.1 * jax.random.normal(kw, (1, n), jnp.float32)).astype(jnp.bfloat16)
    b = (0.1 * jax.random.normal(kb, (1, n), jnp.float32)).astype(jnp.bfloat16)
    return x, w, b


def _normalise(x, w, b):
    x = x.astype(jnp.float32)
    centred = x - jnp.mean(x, axis=-1, keepdims=True)
    scale = jax.lax.rsqrt(jnp.mean(centred * centred, axis=-1, keepdims=True) + EPS)
    return centred * scale * w.astype(jnp.float32) + b.astype(jnp.float32)


def reference(x, w, b):
    return _normalise(x, w, b).astype(x.dtype)


def xla_baseline(x, w, b):
    """What a user would write instead: the same arithmetic left to XLA's fusion."""
    return reference(x, w, b)


def _body(x_ref, w_ref, b_ref, o_ref):
    o_ref[...] = _normalise(x_ref[...], w_ref[...], b_ref[...]).astype(o_ref.dtype)


@functools.partial(jax.jit, static_argnames=("br",))
def kernel(x, w, b, *, br=64):
    m, n = x.shape
    if m % br:
        raise ValueError(f"row blocks must divide the rows: {x.shape=} {br=}")
    row = pl.BlockSpec((1, n), lambda i: (0, 0))
    return pl.pallas_call(
        _body,
        grid=(m // br,),
        in_specs=[pl.BlockSpec((br, n), lambda i: (i, 0)), row, row],
        out_specs=pl.BlockSpec((br, n), lambda i: (i, 0)),
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
    )(x, w, b)
