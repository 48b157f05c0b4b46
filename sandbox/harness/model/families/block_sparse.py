"""Block-sparse matmul: a `pallas_call` around dots whose scalar-prefetched block tables pick the
blocks it visits (with softmax-like work too it is `sparse_attention`; with a grid sized by the inputs,
`grouped`)."""

from __future__ import annotations

from sandbox.harness.model.families.base import Family, Traits

NAME = "block-sparse matmul (scalar-prefetched block tables)"


def _matches(t: Traits) -> bool:
    return t.form == "grid" and t.dots and t.prefetch and not (t.dynamic or t.softmax_like)


FAMILY = Family(NAME, _matches, validation_points=("dsd_matmul", "masked_matmul"))
