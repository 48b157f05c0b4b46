"""Sparse attention: a `pallas_call` around dots with softmax-like work whose scalar-prefetched block
masks pick the blocks it visits (splash attention)."""

from __future__ import annotations

from sandbox.harness.model.families.base import Family, Traits

NAME = "block-sparse attention (scalar-prefetched block masks with softmax: splash)"


def _matches(t: Traits) -> bool:
    return t.form == "grid" and t.dots and t.prefetch and t.softmax_like and not t.dynamic


FAMILY = Family(NAME, _matches, validation_points=("splash_attention",))
