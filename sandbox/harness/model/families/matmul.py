"""Matmul: a `pallas_call` BlockSpec pipeline around dots, with no block tables, no grid sized by the
inputs and no reductions or transcendentals (those are `softmax_like`)."""

from __future__ import annotations

from sandbox.harness.model.families.base import Band, Family, Traits

NAME = "matmul (pallas_call, BlockSpec pipeline)"


def _matches(t: Traits) -> bool:
    return t.form == "grid" and t.dots and not (t.prefetch or t.dynamic or t.softmax_like)


FAMILY = Family(
    NAME,
    _matches,
    bands=(Band(NAME, "v5e", -0.0418, 0.0450, 17, "the JAX Pallas TPU matmul guide (2024-02-27)"),),
    validation_points=("matmul",),
)
