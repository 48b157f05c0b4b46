"""Programs: a `pl.kernel` on TensorCores or a DMA-driven `pallas_call` (manual copies, emit_pipeline,
semaphores), costed event by event. Three families, by what the body does with dots: a band on one
does not reach another (a hand-written DMA kernel is not a fused cross-entropy). With remote copies a
program is a `collective`."""

from __future__ import annotations

from sandbox.harness.model.families.base import Family, Traits

NAME = "pl.kernel or DMA-driven program (manual copies, emit_pipeline, semaphores)"
MATMUL_NAME = "pl.kernel or DMA-driven program around dots (emit_pipeline or manual copies)"
SOFTMAX_LIKE_NAME = "pl.kernel or DMA-driven program with dots and reductions or transcendentals (fused cross-entropy, attention)"


def _local(t: Traits) -> bool:
    return t.form == "program" and not t.remote


FAMILY = Family(NAME, lambda t: _local(t) and not t.dots)
MATMUL = Family(MATMUL_NAME, lambda t: _local(t) and t.dots and not t.softmax_like)
SOFTMAX_LIKE = Family(
    SOFTMAX_LIKE_NAME,
    lambda t: _local(t) and t.dots and t.softmax_like,
    validation_points=("linear_softmax_cross_entropy",),  # a pl.kernel running one emit_pipeline
)
