"""SparseCore: a `pl.kernel` on a scalar or vector subcore mesh, whatever its body does (its remote
copies too)."""

from __future__ import annotations

from sandbox.harness.model.families.base import Family, Traits

NAME = "SparseCore kernel (scalar or vector subcore mesh)"


def _matches(t: Traits) -> bool:
    return t.form == "sparse_core"


FAMILY = Family(NAME, _matches, validation_points=("sparsecore_add_one", "sparsecore_gather"))
