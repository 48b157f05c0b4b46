"""Work that waits for a dot to finish (`sandbox/harness/model/barriers.py`), on small pallas_calls.

Each body does one 128 x 128 x 128 bf16 dot into f32 (16 vregs of result) and something with its
result. Only a reduction across the result's columns (its lanes), and what is computed from it,
waits for the dot: Mosaic's matmul finishes the output one column group at a time
(`tpu_matmul_rule`), so element-wise work and reductions over rows overlap the dot. Counts are in
padded vreg elements, as `ops.vector_cost` gives them (a 128 x 128 f32 tile is 16 vregs = 16,384).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from sandbox.harness.model.cost import Grid
from sandbox.harness.model.estimate import chip_context, kernels, trace
from sandbox.protocol.chips import chip_info

V5E = chip_info("v5e")
TILE = 128 * 128  # one f32 128 x 128 tile: 16 vregs
CROSS = 7  # a lane reduction's trip through the cross-lane unit, per result vreg
FLOPS = 2 * 128**3


def _grid(body, scratch=()) -> Grid:  # type: ignore[no-untyped-def]
    """One grid step of `body(x_ref, y_ref, o_ref, *scratch)` on 128 x 128 bf16 inputs, f32 out."""

    def call(x, y):  # type: ignore[no-untyped-def]
        return pl.pallas_call(
            body,
            out_shape=jax.ShapeDtypeStruct((128, 128), jnp.float32),
            scratch_shapes=list(scratch),
        )(x, y)

    x = jax.ShapeDtypeStruct((128, 128), jnp.bfloat16)
    (found,) = kernels(trace(call, (x, x), chip_context(V5E)), [None, None], V5E)
    assert isinstance(found, Grid)
    return found


def _dot(x_ref, y_ref):  # type: ignore[no-untyped-def]
    return jnp.dot(x_ref[...], y_ref[...], preferred_element_type=jnp.float32)


def test_softmax_of_a_dot_waits_for_it():
    def body(x_ref, y_ref, o_ref):  # type: ignore[no-untyped-def]
        s = _dot(x_ref, y_ref)
        o_ref[...] = jnp.exp(s - jnp.max(s, axis=-1, keepdims=True))

    ((prefix, vector),) = _grid(body).after
    assert prefix == {"bf16": pytest.approx([FLOPS])}  # the MXU work up to the dot's end: the dot
    # The row max's cross-lane trip (its 16 source vregs are one per result vreg: nothing to
    # combine), its broadcast to (128, 1) (16 padded vregs), the subtraction, the exponential
    # (EUP: 2) and the store: all after the dot.
    np.testing.assert_allclose(vector, [TILE * (CROSS + 1 + 1 + 2 + 1)])


def test_element_wise_use_and_row_reductions_overlap_the_dot():
    def body(x_ref, y_ref, o_ref, acc_ref):  # type: ignore[no-untyped-def]
        acc_ref[...] = 2.0 * _dot(x_ref, y_ref)
        o_ref[...] = acc_ref[...] + jnp.sum(acc_ref[...], axis=0, keepdims=True)

    assert _grid(body, [pltpu.VMEM((128, 128), jnp.float32)]).after == ()


def test_a_dot_kept_in_a_scratch_still_holds_up_its_lane_reduction():
    def body(x_ref, y_ref, o_ref, acc_ref):  # type: ignore[no-untyped-def]
        acc_ref[...] = _dot(x_ref, y_ref)
        o_ref[...] = jnp.broadcast_to(jnp.sum(acc_ref[...], axis=-1, keepdims=True), (128, 128))

    ((_, vector),) = _grid(body, [pltpu.VMEM((128, 128), jnp.float32)]).after
    # the sum's cross-lane trip, its broadcasts to (128, 1) and (128, 128), the store
    np.testing.assert_allclose(vector, [TILE * (CROSS + 1 + 1 + 1)])


def test_a_wide_lane_reduction_combines_its_column_groups_as_they_come():
    def body(x_ref, y_ref, o_ref):  # type: ignore[no-untyped-def]
        s = jnp.dot(x_ref[...], jnp.tile(y_ref[...], (1, 4)), preferred_element_type=jnp.float32)
        o_ref[...] = jnp.broadcast_to(jnp.max(s, axis=-1, keepdims=True), (128, 128))

    ((prefix, vector),) = _grid(body).after
    # (128, 512): 64 source vregs into 16 result vregs. The 48 element-wise combines run as the
    # column groups finish; the 16 cross-lane trips, the two broadcasts and the store wait.
    np.testing.assert_allclose(vector, [TILE * (CROSS + 1 + 1 + 1)])
    assert float(prefix["bf16"][0]) == 4 * FLOPS


def test_the_step_lasts_the_dot_and_then_the_work_that_waits_for_it():
    def body(x_ref, y_ref, o_ref):  # type: ignore[no-untyped-def]
        s = _dot(x_ref, y_ref)
        o_ref[...] = jnp.exp(s - jnp.max(s, axis=-1, keepdims=True))

    from sandbox.harness.model.cost import Rates

    grid, rates = _grid(body), Rates.of(V5E)
    dot = FLOPS / rates.mxu["bf16"]
    waiting = TILE * (CROSS + 1 + 1 + 2 + 1) / rates.vector
    everything = float(grid.vector[0]) / rates.vector  # the loads of x and y overlap the dot
    assert dot + waiting > everything  # 91 ns against 76 ns: the wait is what the step lasts
    assert rates.compute(grid.mxu, grid.vector, grid.after) == pytest.approx([max(everything, dot + waiting)])
    assert rates.compute(grid.mxu, grid.vector) == pytest.approx([max(everything, dot)])  # the old rule


def test_each_chunk_of_an_unrolled_loop_waits_for_its_own_dot():
    """Splash's kv chunks: the second chunk's softmax waits for the second dot only, whose end is
    both dots' MXU work; the first chunk's softmax overlaps the second dot."""

    def body(x_ref, y_ref, o_ref):  # type: ignore[no-untyped-def]
        for _ in range(2):
            s = _dot(x_ref, y_ref)
            o_ref[...] += jnp.exp(s - jnp.max(s, axis=-1, keepdims=True))

    first, second = _grid(body).after
    assert float(first[0]["bf16"][0]) == FLOPS and float(second[0]["bf16"][0]) == 2 * FLOPS
    # each: the max's cross-lane trip, its broadcast, sub, exp (2), and the o_ref update's add and
    # store; the first also the second chunk's load of o_ref, which the first chunk stored
    chunk = TILE * (CROSS + 1 + 1 + 2 + 1 + 1)
    np.testing.assert_allclose(first[1], [chunk + TILE])
    np.testing.assert_allclose(second[1], [chunk])


def test_a_step_knows_the_largest_value_it_reduces_over_lanes():
    """`Grid.reduced`: the padded elements of the widest value reduced over lanes (the (128, 256) row
    max, not the (128, 128) row sum, nor the wider (128, 512) sum over rows, which keeps its lanes)."""

    def body(x_ref, y_ref, o_ref):  # type: ignore[no-untyped-def]
        s = _dot(x_ref, y_ref)
        m = jnp.max(jnp.concatenate([s, s], axis=-1), axis=-1, keepdims=True)
        columns = jnp.sum(jnp.concatenate([s, s, s, s], axis=-1), axis=0, keepdims=True)[:, :128]
        o_ref[...] = jnp.exp(s - m) + jnp.sum(s, axis=-1, keepdims=True) + columns

    found = _grid(body).reduced
    assert found is not None
    np.testing.assert_allclose(found, [2 * TILE])


def test_a_step_without_a_lane_reduction_reduces_nothing():
    def body(x_ref, y_ref, o_ref):  # type: ignore[no-untyped-def]
        s = _dot(x_ref, y_ref)
        o_ref[...] = s + jnp.sum(s, axis=0, keepdims=True)

    np.testing.assert_allclose(_grid(body).reduced, [0.0])
