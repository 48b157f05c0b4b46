"""Grouped matmul: a `pallas_call` around dots whose grid is sized by the inputs (megablox gmm), unless
its dots take 8- or 4-bit operands (`quantized_grouped`)."""

from __future__ import annotations

from sandbox.harness.model.families.base import Family, Traits

NAME = "grouped matmul (grid sized by the inputs)"


def _matches(t: Traits) -> bool:
    return t.form == "grid" and t.dots and t.dynamic and not t.quantized


FAMILY = Family(NAME, _matches, validation_points=("gmm",))
