"""XLA's ops around the kernels (`sandbox.harness.model.outside`): each connected run of them is one
fusion that reads what enters it and writes what leaves it once, at the device's HBM bandwidth."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from jax.experimental import pallas as pl

from sandbox.harness.model.estimate import chip_context, estimate, trace
from sandbox.harness.model.outside import outside_work
from sandbox.protocol.chips import chip_info

V6E = chip_info("v6e")
SHAPE = (4, 256, 8, 128)  # (batch, seq, heads, head_dim), bf16: 2 MiB
NBYTES = 4 * 256 * 8 * 128 * 2


def _double(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2


def kernel(x):
    """A one-block-per-batch pallas_call on (batch, heads, seq, head_dim)."""
    block = pl.BlockSpec((None, *x.shape[1:]), lambda b: (b, 0, 0, 0))
    return pl.pallas_call(
        _double,
        grid=(x.shape[0],),
        in_specs=[block],
        out_specs=block,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
    )(x)


def _outside(fn, *shapes, dtype=jnp.bfloat16):
    args = [jax.ShapeDtypeStruct(s, dtype) for s in shapes]
    return outside_work(trace(fn, args, chip_context(V6E)), V6E)


def test_transposes_around_a_kernel_each_read_and_write_their_array():
    """tokamax's splash wrapper: heads-major before the kernel, back after it."""
    found = _outside(lambda x: jnp.swapaxes(kernel(jnp.swapaxes(x, 1, 2)), 1, 2), SHAPE)
    assert found.fusions == 2 and found.bytes == 4 * NBYTES
    assert found.seconds == pytest.approx(4 * NBYTES / V6E.device_hbm_bandwidth)


def test_connected_element_wise_ops_fuse_into_one_pass():
    """Scale, cast and transpose: one loop reading x once and writing its result once."""
    found = _outside(lambda x: kernel(jnp.swapaxes((x * 0.5).astype(jnp.float32), 1, 2)), SHAPE)
    assert found.fusions == 1 and found.bytes == NBYTES + 2 * NBYTES  # bf16 in, f32 out


def test_calls_are_inlined_as_xla_inlines_them():
    """A jitted transpose feeding a jitted wrapper that transposes again is one fusion, not two."""
    inner = jax.jit(lambda x: kernel(jnp.swapaxes(x, 2, 3)))
    found = _outside(lambda x: inner(jax.jit(lambda y: jnp.swapaxes(y, 1, 2))(x)), SHAPE)
    assert found.fusions == 1 and found.bytes == 2 * NBYTES


def test_bitcasts_cost_nothing():
    """Reshapes, a slice that keeps every element, moving only size-1 dimensions: XLA's bitcasts."""
    found = _outside(lambda x: kernel(x[0].reshape(SHAPE))[None], (1, *SHAPE))
    assert found.fusions == 0 and found.seconds == 0.0 and not found.notes


def test_a_copy_of_an_input_the_function_returns_moves_its_bytes():
    """`jnp.copy(x)` returned from a jitted function is a new buffer (XLA may not hand back an input it was
    not given to donate): a read and a write. A copy inside the function, on the way to a kernel, is free."""
    alone = _outside(lambda x: jnp.copy(x), SHAPE)
    assert alone.fusions == 1 and alone.bytes == 2 * NBYTES
    inside = _outside(lambda x: kernel(jnp.copy(x)), SHAPE)
    assert inside.fusions == 0 and inside.bytes == 0


def test_dead_ops_cost_nothing():
    """`x.T.shape` traces a transpose nobody reads: XLA drops it."""
    found = _outside(lambda x: kernel(x + 0 * jnp.swapaxes(x, 1, 2).shape[0]), SHAPE)
    assert found.fusions == 1 and found.bytes == 2 * NBYTES


def test_a_slice_reads_only_what_it_takes():
    found = _outside(lambda x: kernel(x[:2] + 1), (8, *SHAPE[1:]))
    half = NBYTES // 2
    assert found.fusions == 1 and found.bytes == half + half


def test_slices_of_one_array_read_it_once_at_most():
    """Two halves concatenated back: each half read once, the whole written once."""
    found = _outside(lambda x: kernel(jnp.concatenate([x[:2], x[2:]])), SHAPE)
    assert found.fusions == 1 and found.bytes == NBYTES + NBYTES


def test_a_dot_outside_a_kernel_costs_its_mxu_time_or_its_bytes():
    found = _outside(lambda a, b: kernel((a @ b).reshape(SHAPE)), (8192, 2048), (2048, 128))
    flops = 2 * 8192 * 2048 * 128
    assert found.fusions == 1 and found.flops == flops
    moved = (8192 * 2048 + 2048 * 128 + 8192 * 128) * 2
    assert found.bytes == moved
    peak = V6E.bf16_flops * V6E.mxu_efficiency
    assert found.seconds == pytest.approx(max(moved / V6E.device_hbm_bandwidth, flops / peak))


def test_a_dot_whose_consumer_brings_earlier_ops_is_costed_as_a_dot():
    """A dot's sole element-wise consumer joins its fusion, and with it whatever that consumer's other
    operand was made by (here an iota bias, made before the dot): the fusion's first op is then no dot,
    and reading it as one raised, so XLA's paged attention (a gather, dots and masks) got no baseline."""

    def biased(a, b):
        bias = jax.lax.broadcasted_iota(jnp.bfloat16, (8192, 128), 1)
        return (a @ b) + bias

    found = _outside(biased, (8192, 2048), (2048, 128))
    flops = 2 * 8192 * 2048 * 128
    assert found.flops == flops
    assert found.seconds >= flops / (V6E.bf16_flops * V6E.mxu_efficiency)


def test_the_estimate_adds_them_and_says_so():
    x = jax.ShapeDtypeStruct(SHAPE, jnp.bfloat16)
    heads_major = jax.ShapeDtypeStruct((4, 8, 256, 128), jnp.bfloat16)
    bare = estimate(kernel, (heads_major,), V6E, timeline=False)
    wrapped = estimate(lambda x: jnp.swapaxes(kernel(jnp.swapaxes(x, 1, 2)), 1, 2), (x,), V6E, timeline=False)
    assert bare.outside_seconds == 0.0 and not any("XLA ops" in n for n in bare.notes)
    assert wrapped.outside_bytes == 4 * NBYTES
    assert wrapped.seconds == pytest.approx(bare.seconds + wrapped.outside_seconds)
    assert wrapped.memory_seconds == pytest.approx(bare.memory_seconds + wrapped.outside_seconds)
    assert wrapped.hbm_bytes == bare.hbm_bytes + 4 * NBYTES
    assert any(n.startswith("XLA ops outside the kernels: 2 fusion(s) moving 8.39 MB") for n in wrapped.notes)


def test_a_function_without_kernels_is_still_not_estimated():
    x = jax.ShapeDtypeStruct(SHAPE, jnp.bfloat16)
    e = estimate(lambda x: jnp.swapaxes(x, 1, 2) * 2, (x,), V6E, timeline=False)
    assert e.seconds == 0.0 and e.outside_seconds == 0.0
    assert e.notes == ("no Pallas kernel in the traced function: nothing to estimate",)


def test_a_walk_that_fails_leaves_them_out_and_says_so(monkeypatch):
    from sandbox.harness.model import estimate as estimate_module

    def broken(closed, chip):
        raise KeyError("permutation")

    monkeypatch.setattr(estimate_module, "outside_work", broken)
    x = jax.ShapeDtypeStruct(SHAPE, jnp.bfloat16)
    e = estimate(lambda x: kernel(jnp.swapaxes(x, 1, 2)), (x,), V6E, timeline=False)
    assert e.seconds > 0 and e.outside_seconds == 0.0
    assert "XLA ops outside the kernels were not costed (KeyError: 'permutation')" in e.notes
