"""Matmul: a `pallas_call` BlockSpec pipeline around dots, with no block tables, no grid sized by the
inputs and no reductions or transcendentals (those are `softmax_like`)."""

from __future__ import annotations

from sandbox.harness.model.families.base import Family, Traits

NAME = "matmul (pallas_call, BlockSpec pipeline)"


def _matches(t: Traits) -> bool:
    return t.form == "grid" and t.dots and not (t.prefetch or t.dynamic or t.softmax_like)


FAMILY = Family(NAME, _matches, validation_points=("matmul",))
