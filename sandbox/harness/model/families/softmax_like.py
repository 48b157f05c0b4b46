"""Softmax-like: a `pallas_call` whose body has row reductions or transcendentals (attention, norms,
softmax), with or without dots, unless its dots make it `grouped` or `sparse_attention`."""

from __future__ import annotations

from sandbox.harness.model.families.base import Band, Family, Traits

NAME = "pallas_call with reductions or transcendentals (attention, norms, softmax)"


def _matches(t: Traits) -> bool:
    return t.form == "grid" and t.softmax_like and not (t.dots and (t.prefetch or t.dynamic))


FAMILY = Family(
    NAME,
    _matches,
    bands=(
        Band(NAME, "v5e", -0.0073, 0.0383, 3, "JAX's flash attention forward, jax-ml/jax#24633 (2024-10-31)"),
    ),
    validation_points=("flash_attention",),
)
