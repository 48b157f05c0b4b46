"""How far to trust an estimate: the kernel's family, and the model's error on published kernels of it.

Every estimate says which family its kernels belong to (from what the traced kernel does: a
BlockSpec pipeline around one dot, scalar-prefetched block tables, a grid sized by the inputs,
softmax-like work, a hand-written DMA program) and, where published timings of that family on that
chip exist, the band of the model's error on them: "±5.4 % on 17 published kernels of this family
on v5e", and a range of times. Elsewhere it says "not validated for … on …" and gives no range.

The bands are the model's own errors on `tests/data/published_tpu_timings.toml` (the model's device
time, plus the measurements' host dispatch where the timing includes it, against the printed time;
the points a constant was fitted to left out); `tests/model/test_validation.py` recomputes them from that file and fails if
this table drifts from them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sandbox.harness.model.ops import jaxpr_of, sub_jaxprs

MATMUL = "matmul (pallas_call, BlockSpec pipeline)"
BLOCK_SPARSE = "block-sparse matmul (scalar-prefetched block tables)"
GROUPED = "grouped matmul (grid sized by the inputs)"
QUANTIZED_GROUPED = "quantized grouped matmul (fp8 or int8 dots, grid sized by the inputs)"
SOFTMAX_LIKE = "pallas_call with reductions or transcendentals (attention, norms, softmax)"
SPARSE_ATTENTION = "block-sparse attention (scalar-prefetched block masks with softmax: splash)"
ELEMENTWISE = "element-wise pallas_call"
PROGRAM = "pl.kernel or DMA-driven program (manual copies, emit_pipeline, semaphores)"
# A program's dots, and what it does with them, decide how far a band on one reaches: a hand-written
# DMA kernel is not a fused cross-entropy (`program_family`).
PROGRAM_MATMUL = "pl.kernel or DMA-driven program around dots (emit_pipeline or manual copies)"
PROGRAM_SOFTMAX_LIKE = "pl.kernel or DMA-driven program with dots and reductions or transcendentals (fused cross-entropy, attention)"
COLLECTIVE = "collective (remote DMAs over ICI)"
SPARSE_CORE = "SparseCore kernel (scalar or vector subcore mesh)"

# Row reductions and the transcendental unit: what attention and norms add to a matmul step.
_SOFTMAX_PRIMITIVES = frozenset(
    {"exp", "exp2", "log", "log1p", "tanh", "logistic", "rsqrt", "sqrt", "erf", "pow", "div"}
    | {"reduce_max", "reduce_min", "reduce_sum", "argmax", "argmin", "cumsum", "cummax"}
)


@dataclass(frozen=True)
class Band:
    """The model's signed error (estimate / published - 1) over `points` published kernels."""

    family: str
    chip: str
    low: float
    high: float
    points: int
    source: str


_TOKAMAX = (
    "tokamax's autotuned grouped-matmul winners (openxla/tokamax@783ea95), megablox gmm costed in their place"
)
BANDS: tuple[Band, ...] = (
    Band(MATMUL, "v5e", -0.0542, 0.0392, 17, "the JAX Pallas TPU matmul guide (2024-02-27)"),
    Band(BLOCK_SPARSE, "v5e", -0.2873, -0.0195, 2, "the JAX Pallas TPU block-sparse guide (2024-09-16)"),
    Band(
        SOFTMAX_LIKE,
        "v5e",
        -0.0265,
        0.0050,
        3,
        "JAX's flash attention forward, jax-ml/jax#24633 (2024-10-31)",
    ),
    Band(GROUPED, "v5e", -0.031, 0.667, 9, _TOKAMAX),
    Band(GROUPED, "v5p", -0.130, 0.976, 26, _TOKAMAX),
    Band(
        GROUPED, "v6e", -0.460, 0.075, 12, _TOKAMAX + "; the other 12 fitted v6e's vector rate and MXU share"
    ),
    Band(
        GROUPED,
        "tpu7x",
        -0.155,
        0.095,
        13,
        _TOKAMAX + "; the other 13 fitted TPU7x's vector rate and MXU share",
    ),
    Band(
        QUANTIZED_GROUPED,
        "tpu7x",
        -0.4277,
        -0.2918,
        4,
        "tokamax's autotuned fp8 grouped-matmul winners of an unmerged pull request (openxla/tokamax#876), "
        "tokamax's quantized body costed; a known miss, 29-43 % too fast (docs/tpu-time-model.md)",
    ),
)
_SPLASH = (
    "tokamax's autotuned Splash attention forward winners (openxla/tokamax@783ea95), JAX's splash kernel "
    "costed in their place with XLA's transposes around it; on v5p a known miss, 2.2-2.7x too slow "
    "(docs/tpu-time-model.md)"
)
BANDS += (
    Band(SPARSE_ATTENTION, "v5p", 1.1576, 1.6873, 4, _SPLASH),
    Band(SPARSE_ATTENTION, "v6e", -0.0160, 0.1949, 4, _SPLASH),
    Band(SPARSE_ATTENTION, "tpu7x", -0.1588, -0.0573, 4, _SPLASH),
    Band(
        SPARSE_CORE,
        "tpu7x",
        -0.3847,
        0.0121,
        2,
        "JAX's SparseCore guide (2026-02-13), host-timed: an add-one, mostly host dispatch, and a gather "
        "the model puts 38 % too fast (a known miss, docs/tpu-time-model.md)",
    ),
    Band(
        PROGRAM_SOFTMAX_LIKE,
        "tpu7x",
        -0.1329,
        0.0209,
        34,
        "tokamax's autotuned fused linear + softmax cross-entropy forward winners (openxla/tokamax@783ea95), "
        "a pl.kernel running one emit_pipeline (docs/tpu-time-model.md)",
    ),
)
# Of every published point that fitted nothing (134), the share the model puts within ±15 %
# (tests/model/test_validation.py checks it stays there).
WITHIN_15_PERCENT = 114 / 134


@dataclass(frozen=True)
class Validation:
    family: str
    text: str  # "±5.4 % on 17 published kernels of this family on v5e" or "not validated for …"
    band: Band | None


def grid_family(body: Any, *, prefetch: bool, dynamic: bool) -> str:
    """The family of a `pallas_call` costed as a BlockSpec pipeline."""
    names = primitives(jaxpr_of(body))
    if "dot_general" not in names:
        return SOFTMAX_LIKE if names & _SOFTMAX_PRIMITIVES else ELEMENTWISE
    if dynamic:
        return QUANTIZED_GROUPED if _quantized_dots(jaxpr_of(body)) else GROUPED
    if prefetch:
        return SPARSE_ATTENTION if names & _SOFTMAX_PRIMITIVES else BLOCK_SPARSE
    return SOFTMAX_LIKE if names & _SOFTMAX_PRIMITIVES else MATMUL


_QUANTIZED = ("float8", "int8", "uint8", "int4", "uint4")


def _quantized_dots(jaxpr: Any) -> bool:
    """Whether a dot in `jaxpr` (or a jaxpr inside it) takes 8- or 4-bit operands."""
    return any(
        (
            eqn.primitive.name == "dot_general"
            and any(str(getattr(v.aval, "dtype", "")).startswith(_QUANTIZED) for v in eqn.invars)
        )
        or any(_quantized_dots(sub) for sub in sub_jaxprs(eqn))
        for eqn in jaxpr.eqns
    )


def program_family(body: Any) -> str:
    """The family of a `pl.kernel` (or a pallas_call costed as a program) from its body: around dots,
    with reductions or transcendentals too, or neither (copies, semaphores, element-wise work)."""
    names = primitives(jaxpr_of(body))
    if "dot_general" not in names:
        return PROGRAM
    return PROGRAM_SOFTMAX_LIKE if names & _SOFTMAX_PRIMITIVES else PROGRAM_MATMUL


def primitives(jaxpr: Any) -> set[str]:
    """Every primitive's name in `jaxpr` and the jaxprs inside it."""
    found: set[str] = set()
    for eqn in jaxpr.eqns:
        found.add(eqn.primitive.name)
        for sub in sub_jaxprs(eqn):
            found |= primitives(sub)
    return found


def validation(families: Iterable[str], chip: str, title: str) -> Validation:
    """What the estimate of kernels of these families on `chip` may be trusted to."""
    distinct = list(dict.fromkeys(f for f in families if f))
    if len(distinct) != 1:
        kinds = "; ".join(distinct) or "no kernel"
        return Validation("mixed", f"not validated as a whole: kernels of several families ({kinds})", None)
    family = distinct[0]
    band = next((b for b in BANDS if b.family == family and b.chip == chip), None)
    if band is None:
        return Validation(family, f"not validated for {family} on {title}", None)
    worst = max(abs(band.low), abs(band.high))
    text = (
        f"±{worst:.1%} on {band.points} published kernels of this family on {title} "
        f"(seen {band.low:+.1%} to {band.high:+.1%}; {band.source})"
    ).replace("%", " %")
    return Validation(family, text, band)


def seconds_range(seconds: float, band: Band | None) -> tuple[float | None, float | None]:
    """The times the real chip would take if the model errs as on the published kernels: an error
    e = estimate / real - 1 in [low, high] puts the real time in [estimate / (1 + high), estimate / (1 + low)]."""
    if band is None:
        return None, None
    return seconds / (1 + band.high), seconds / (1 + band.low)
