"""Sparse attention: a `pallas_call` around dots with softmax-like work whose scalar-prefetched block
masks pick the blocks it visits (splash attention)."""

from __future__ import annotations

from sandbox.harness.model.families.base import Band, Family, Traits

NAME = "block-sparse attention (scalar-prefetched block masks with softmax: splash)"

_SPLASH = (
    "tokamax's autotuned Splash attention forward winners (openxla/tokamax@783ea95), JAX's splash kernel "
    "costed in their place with XLA's transposes around it; on v5p a known miss, 2.1-2.5x too slow "
    "(docs/tpu-time-model.md)"
)


def _matches(t: Traits) -> bool:
    return t.form == "grid" and t.dots and t.prefetch and t.softmax_like and not t.dynamic


FAMILY = Family(
    NAME,
    _matches,
    bands=(
        Band(NAME, "v5p", 1.0917, 1.4670, 4, _SPLASH),
        Band(NAME, "v6e", 0.1140, 0.6529, 4, _SPLASH),
        Band(NAME, "tpu7x", -0.0731, 0.3447, 4, _SPLASH),
    ),
    validation_points=("splash_attention",),
)
