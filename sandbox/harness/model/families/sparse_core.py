"""SparseCore: a `pl.kernel` on a scalar or vector subcore mesh, whatever its body does (its remote
copies too)."""

from __future__ import annotations

from sandbox.harness.model.families.base import Band, Family, Traits

NAME = "SparseCore kernel (scalar or vector subcore mesh)"


def _matches(t: Traits) -> bool:
    return t.form == "sparse_core"


FAMILY = Family(
    NAME,
    _matches,
    bands=(
        Band(
            NAME,
            "tpu7x",
            -0.3847,
            0.0121,
            2,
            "JAX's SparseCore guide (2026-02-13), host-timed: an add-one, mostly host dispatch, and a gather "
            "the model puts 38 % too fast (a known miss, docs/tpu-time-model.md)",
        ),
    ),
    validation_points=("sparsecore_add_one", "sparsecore_gather"),
)
