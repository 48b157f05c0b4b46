"""Values Mosaic holds as one vreg per row group or lane column (`sandbox/harness/model/replication.py`):
a row iota and the masks built from it cost tm / 8 vregs per op, a scalar splat one vreg, and work
that meets a full tile is costed in full."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from sandbox.harness.model.ops import vector_cost, weighted
from sandbox.harness.model.replication import replicated_costs

VREG = 8 * 128


def _costs(fn, *shapes):
    args = [jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes]
    jaxpr = jax.make_jaxpr(fn)(*args).jaxpr
    return jaxpr, replicated_costs(jaxpr)


def _by_name(jaxpr, costs):
    return {
        e.primitive.name: weighted(costs[i]) if i in costs else vector_cost(e)
        for i, e in enumerate(jaxpr.eqns)
    }


def test_a_row_mask_costs_one_vreg_per_row_group_until_it_meets_the_tile():
    def store_mask(acc, start):  # megablox's `_get_store_mask` and the select that applies it
        rows = jax.lax.broadcasted_iota(jnp.int32, (128, 7168), 0) + 256
        mask = (rows >= start.astype(jnp.int32)) & (rows < 300)
        return jax.lax.select(mask, acc, jnp.zeros_like(acc))

    jaxpr, costs = _costs(store_mask, (128, 7168), ())
    by_name = _by_name(jaxpr, costs)
    for name in ("iota", "ge", "lt", "and"):
        assert by_name[name] == 16 * VREG, name  # 128 rows / 8 sublanes, one lane column
    assert by_name["select_n"] == 128 * 7168  # the tile itself: every vreg


def test_a_column_mask_costs_one_vreg_per_lane_column():
    jaxpr, costs = _costs(lambda x: jax.lax.broadcasted_iota(jnp.int32, (256, 1024), 1) < 768, (1,))
    assert _by_name(jaxpr, costs)["lt"] == 8 * VREG


def test_a_scalar_splat_is_one_vreg():
    jaxpr, costs = _costs(lambda: jnp.zeros((128, 7168), jnp.float32))
    (eqn,) = jaxpr.eqns
    assert eqn.primitive.name == "broadcast_in_dim" and weighted(costs[0]) == VREG


def test_work_on_full_tiles_keeps_its_cost():
    assert _costs(lambda a, b: a + b, (128, 1024), (128, 1024))[1] == {}
