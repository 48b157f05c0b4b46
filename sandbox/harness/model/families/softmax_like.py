"""Softmax-like: a `pallas_call` whose body has row reductions or transcendentals (attention, norms,
softmax), with or without dots, unless its dots make it `grouped` or `sparse_attention`."""

from __future__ import annotations

from sandbox.harness.model.families.base import Family, Traits

NAME = "pallas_call with reductions or transcendentals (attention, norms, softmax)"


def _matches(t: Traits) -> bool:
    return t.form == "grid" and t.softmax_like and not (t.dots and (t.prefetch or t.dynamic))


FAMILY = Family(NAME, _matches, validation_points=("flash_attention",))
