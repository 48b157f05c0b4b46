"""Quantized grouped matmul: a grouped matmul (`grouped`) whose dots take fp8, int8 or int4 operands."""

from __future__ import annotations

from sandbox.harness.model.families.base import Family, Traits

NAME = "quantized grouped matmul (fp8 or int8 dots, grid sized by the inputs)"


def _matches(t: Traits) -> bool:
    return t.form == "grid" and t.dots and t.dynamic and t.quantized


FAMILY = Family(NAME, _matches, validation_points=("quantized_gmm",))
