"""What one traced equation costs the model (`sandbox/harness/model/ops.py`): a dot's MXU rate, a lane
reduction and a tile as Mosaic lowers them."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from sandbox.harness.model.ops import dot_kind, vector_cost

HIGH, HIGHEST = jax.lax.Precision.HIGH, jax.lax.Precision.HIGHEST


def _dot_eqn(lhs_dtype, rhs_dtype, precision=None):
    def f(x, y):
        return jax.lax.dot_general(
            x, y, (((1,), (0,)), ((), ())), precision=precision, preferred_element_type=jnp.float32
        )

    x = jax.ShapeDtypeStruct((128, 128), lhs_dtype)
    y = jax.ShapeDtypeStruct((128, 128), rhs_dtype)
    (eqn,) = [e for e in jax.make_jaxpr(f)(x, y).eqns if e.primitive.name == "dot_general"]
    return eqn


@pytest.mark.parametrize(
    ("lhs", "rhs", "precision", "kind"),
    [
        (jnp.bfloat16, jnp.bfloat16, None, "bf16"),
        # f32 operands at the default precision are rounded to bf16: one MXU pass (splash's p @ v)
        (jnp.float32, jnp.float32, None, "bf16"),
        (jnp.float32, jnp.bfloat16, None, "bf16"),
        (jnp.float32, jnp.float32, jax.lax.Precision.DEFAULT, "bf16"),
        (jnp.float32, jnp.float32, HIGH, "f32_3pass"),
        (jnp.float32, jnp.float32, HIGHEST, "f32"),
        (jnp.int8, jnp.int8, None, "int8"),
    ],
)
def test_dot_kind_follows_the_requested_precision(lhs, rhs, precision, kind):
    assert dot_kind(_dot_eqn(lhs, rhs, precision)) == kind


def _eqn(fn, *shapes, dtype=jnp.float32):
    args = [jax.ShapeDtypeStruct(s, dtype) for s in shapes]
    return jax.make_jaxpr(fn)(*args).eqns[-1]


VREG = 8 * 128


@pytest.mark.parametrize(
    ("shape", "cost_in_vregs"),
    [
        # 128 wide: one vreg per 8 rows, each through the cross-lane unit (weight 7)
        ((1024, 128), 128 * 7),
        # 256 wide: the two vregs of each 8 rows added on the VALU, then one cross-lane step
        ((1024, 256), 128 * 1 + 128 * 7),
        ((1024, 1024), 128 * 7 + 128 * 7),
    ],
)
def test_lane_reduction_adds_vregs_then_reduces_across_lanes_once(shape, cost_in_vregs):
    eqn = _eqn(lambda x: x.max(axis=-1), shape)
    assert eqn.primitive.name == "reduce_max"
    assert vector_cost(eqn) == cost_in_vregs * VREG


def test_sublane_reduction_stays_one_pass_over_the_tile():
    assert vector_cost(_eqn(lambda x: x.sum(axis=0), (1024, 256))) == 256 * VREG


def test_tiling_whole_vregs_is_free_and_a_ragged_tile_is_not():
    wide = _eqn(lambda m: jnp.tile(m, (1, 4)), (1024, 128))
    assert wide.primitive.name == "tile" and vector_cost(wide) == 0.0
    ragged = _eqn(lambda m: jnp.tile(m, (1, 4)), (1024, 64))
    assert vector_cost(ragged) == 128 * 2 * VREG


def test_narrowing_to_bf16_packs_two_f32_vregs_into_one():
    # The v5e's listing issues one `vpack` per bf16 result vreg (16 rows of a vreg's 8 sublanes).
    narrow = _eqn(lambda x: x.astype(jnp.bfloat16), (256, 512))
    assert vector_cost(narrow) == 256 * 512 // 2048 * VREG
    widen = _eqn(lambda x: x.astype(jnp.float32), (256, 512), dtype=jnp.bfloat16)
    assert vector_cost(widen) == 256 * 512 // 1024 * VREG


def test_a_tpu_bitcast_reinterprets_vregs_and_issues_nothing():
    from jax.experimental.pallas import tpu as pltpu

    eqn = _eqn(lambda x: pltpu.bitcast(x, jnp.float32), (256, 512), dtype=jnp.uint32)
    assert eqn.primitive.name == "bitcast" and vector_cost(eqn) == 0.0
