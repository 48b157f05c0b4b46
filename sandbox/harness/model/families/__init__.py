"""Kernel families: what kind of kernel an estimate is of, and how far the model is validated on it.

One module per family, each a `base.Family` (its name, `matches(traits)` and the published kernels
its bands come from), the way compiler-explorer keeps each compiler family in its own
folder; `registry` lists them all and is what the rest of the model asks.

    base.py               the interface: `Family`, `Band`, and a traced kernel's `Traits`
    registry.py           every family in one list; classify, validation text, time range
    published.py          the model's error on published kernels per family and chip (generated)
    measured.py           ... on the Tune sweeps timed on the lent v5e (generated)
    matmul.py             a BlockSpec pipeline around dots
    block_sparse.py       ... with scalar-prefetched block tables
    softmax_like.py       ... with reductions or transcendentals (attention, norms, softmax)
    grouped.py            ... with a grid sized by the inputs (megablox gmm)
    quantized_grouped.py  ... and 8- or 4-bit dots
    sparse_attention.py   block tables and softmax-like work (splash)
    elementwise.py        neither dots nor softmax-like work
    program.py            pl.kernel or DMA-driven programs: plain, around dots, dots and softmax-like work
    collective.py         programs with remote DMAs
    sparse_core.py        SparseCore subcore meshes
"""

from sandbox.harness.model.families.base import Band, Family, Traits, primitives
from sandbox.harness.model.families.published import WITHIN_15_PERCENT
from sandbox.harness.model.families.registry import (
    BANDS,
    BLOCK_SPARSE,
    COLLECTIVE,
    ELEMENTWISE,
    FAMILIES,
    GROUPED,
    MATMUL,
    PROGRAM,
    PROGRAM_MATMUL,
    PROGRAM_SOFTMAX_LIKE,
    QUANTIZED_GROUPED,
    SOFTMAX_LIKE,
    SPARSE_ATTENTION,
    SPARSE_CORE,
    Validation,
    classify,
    seconds_range,
    validation,
)

__all__ = [
    "BANDS",
    "BLOCK_SPARSE",
    "COLLECTIVE",
    "ELEMENTWISE",
    "FAMILIES",
    "GROUPED",
    "MATMUL",
    "PROGRAM",
    "PROGRAM_MATMUL",
    "PROGRAM_SOFTMAX_LIKE",
    "QUANTIZED_GROUPED",
    "SOFTMAX_LIKE",
    "SPARSE_ATTENTION",
    "SPARSE_CORE",
    "WITHIN_15_PERCENT",
    "Band",
    "Family",
    "Traits",
    "Validation",
    "classify",
    "primitives",
    "seconds_range",
    "validation",
]
