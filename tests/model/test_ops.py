"""What one traced equation costs the model (`sandbox/harness/model/ops.py`): a dot's MXU rate."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from sandbox.harness.model.ops import dot_kind

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
