"""Element-wise: a `pallas_call` with neither dots nor reductions or transcendentals. Not validated."""

from __future__ import annotations

from sandbox.harness.model.families.base import Family, Traits

NAME = "element-wise pallas_call"


def _matches(t: Traits) -> bool:
    return t.form == "grid" and not (t.dots or t.softmax_like)


FAMILY = Family(NAME, _matches)
