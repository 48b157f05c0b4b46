"""The kernels `vmem_grid.py` compiles beside the catalog's and the sweep files': a blocked element-wise
add and row sum (nothing but large pipelined blocks), and row-blocked kernels beside a padding scratch
(what the compiler counts of a scratch, and of a body's temporaries). JAX is imported inside, as in the
grid: building the config list needs none."""

from __future__ import annotations

MIB = 2**20


def vector_kernel(kind: str, rows: int):
    """A blocked elementwise add or row sum: nothing but large pipelined blocks."""
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    def add_kernel(x_ref, y_ref, o_ref):
        o_ref[...] = x_ref[...] + y_ref[...]

    def sum_kernel(x_ref, o_ref):
        o_ref[...] = jnp.sum(x_ref[...], axis=1, keepdims=True)

    def add(x, y):
        spec = pl.BlockSpec((rows, x.shape[1]), lambda i: (i, 0))
        return pl.pallas_call(
            add_kernel,
            out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
            grid=(x.shape[0] // rows,),
            in_specs=[spec, spec],
            out_specs=spec,
        )(x, y)

    def row_sum(x):
        return pl.pallas_call(
            sum_kernel,
            out_shape=jax.ShapeDtypeStruct((x.shape[0], 1), x.dtype),
            grid=(x.shape[0] // rows,),
            in_specs=[pl.BlockSpec((rows, x.shape[1]), lambda i: (i, 0))],
            out_specs=pl.BlockSpec((rows, 1), lambda i: (i, 0)),
        )(x)

    return add if kind == "add_blocks" else row_sum


def padded_kernel(kind: str, rows: int, pad_mib: int, pad_use: str = "carried"):
    """A row-blocked kernel with a `pad_mib` MiB VMEM scratch: a copy, an RMS norm (f32 math on its block)
    or 2x + 1 on f32. The scratch is carried from step to step (`pad_use` "carried": written here, read
    next step), or only written ("written"), or untouched ("none"): the compiler allocates it only when
    something reads it (the first two runs of this set, untouched and written only, compiled every config
    at 14-28 MiB counted)."""
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    def body(x_ref, o_ref, pad_ref):
        step = pl.program_id(0)
        if pad_use != "none":
            pad_ref[pl.ds((step % 4) * 8, 8), :] = jnp.full((8, 1024), step, jnp.float32)
        if kind == "copy_pad":
            o_ref[...] = x_ref[...]
        elif kind == "rmsnorm_pad":
            x = x_ref[...].astype(jnp.float32)
            o_ref[...] = (x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6)).astype(
                o_ref.dtype
            )
        else:
            o_ref[...] = 2.0 * x_ref[...] + 1.0
        if pad_use == "carried":
            o_ref[0:8, 0:128] = pad_ref[pl.ds(((step + 1) % 4) * 8, 8), 0:128].astype(o_ref.dtype)

    def run(x):
        spec = pl.BlockSpec((rows, x.shape[1]), lambda i: (i, 0))
        return pl.pallas_call(
            body,
            out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
            grid=(x.shape[0] // rows,),
            in_specs=[spec],
            out_specs=spec,
            scratch_shapes=[pltpu.VMEM((pad_mib * MIB // (4 * 1024), 1024), jnp.float32)],
        )(x)

    return run
