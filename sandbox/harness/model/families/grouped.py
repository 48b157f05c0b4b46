"""Grouped matmul: a `pallas_call` around dots whose grid is sized by the inputs (megablox gmm), unless
its dots take 8- or 4-bit operands (`quantized_grouped`)."""

from __future__ import annotations

from sandbox.harness.model.families.base import Band, Family, Traits

NAME = "grouped matmul (grid sized by the inputs)"

_TOKAMAX = (
    "tokamax's autotuned grouped-matmul winners (openxla/tokamax@783ea95), megablox gmm costed in their place"
)


def _matches(t: Traits) -> bool:
    return t.form == "grid" and t.dots and t.dynamic and not t.quantized


FAMILY = Family(
    NAME,
    _matches,
    bands=(
        Band(NAME, "v5e", -0.0090, 0.1768, 9, _TOKAMAX),
        Band(NAME, "v5p", -0.1295, 0.3972, 26, _TOKAMAX),
        Band(
            NAME,
            "v6e",
            -0.4604,
            0.0746,
            12,
            _TOKAMAX + "; the other 12 fitted v6e's vector rate and MXU share",
        ),
        Band(
            NAME,
            "tpu7x",
            -0.1547,
            0.0945,
            13,
            _TOKAMAX + "; the other 13 fitted TPU7x's vector rate and MXU share",
        ),
    ),
    validation_points=("gmm",),
)
