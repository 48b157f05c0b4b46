"""Outputs too large for the checker's channel: a sample both sides take the same way, and sums of all.

A catalog case at a TPU size (a 4096 x 4096 bf16 matmul: 32 MiB of output; the in-place 65536 x
1024: 128 MiB) is far past what one case may send (`MAX_CASE_ARRAY_BYTES`, 8 MiB). On a chip such a
case is the point of running natively, so rather than refuse it, the kernel's and the reference's
processes each send the outputs that fit whole, and of each larger one every k-th row (the first
axis; k its own, the smallest that fits), named `out[::k]` so the report says what was compared
element by element. Beside them goes one table of per-group sums over every element of each cut
output (`sandbox.verdict.digests`), so the rows between are checked too: a case is judged over all
of its elements, never only on its sample. Both processes apply these same pure functions to
outputs of the same shapes, so the checker compares like with like; outputs of other shapes get
other names and are reported as a mismatch of outputs, as any wrong output is.
"""

from __future__ import annotations

import math

import numpy as np

from sandbox.protocol.arrays import MAX_CASE_ARRAY_BYTES
from sandbox.verdict import digests
from sandbox.verdict.arrays import SUMS_BYTES, SUMS_NAME

# A little under the cap: the checker also counts each array's header, and the table of sums.
SAMPLE_BYTES = MAX_CASE_ARRAY_BYTES - (64 << 10) - SUMS_BYTES
# A cut of whole rows is taken when it is at most this much larger than a cut of single elements.
ROWS_SLACK = 1.25

Named = list[tuple[str, np.ndarray]]


def fit(named: Named, cap: int = SAMPLE_BYTES) -> Named:
    """`named` unchanged when it fits `cap`; else each output over a common size sent whole, each
    larger one cut to about that size (every k-th row, or every k-th element of it flattened where
    rows do not fit: an output of few rows), then the table of sums of the cut ones."""
    sizes = [int(a.nbytes) for _, a in named]
    if sum(sizes) <= cap:
        return named
    level = _level(sizes, cap)
    cut = [_cut(name, a, level) for name, a in named]
    while sum(int(a.nbytes) for _, a in cut) > cap and level > 1:
        level = level * 7 // 8  # row cuts ran over the level: a lower one until all fit
        cut = [_cut(name, a, level) for name, a in named]
    sampled = [
        (i, a) for i, ((name, a), (sent, _)) in enumerate(zip(named, cut, strict=True)) if sent != name
    ]
    return [*cut, (SUMS_NAME, digests.table(sampled))]


def _level(sizes: list[int], cap: int) -> int:
    """The largest size such that every output up to it whole, and the rest cut to it, fit `cap`."""
    left, count = cap, len(sizes)
    for size in sorted(sizes):
        if size * count > left:
            return max(left // count, 1)
        left, count = left - size, count - 1
    return max(sizes)


def _cut(name: str, array: np.ndarray, level: int) -> tuple[str, np.ndarray]:
    if array.nbytes <= level:
        return name, array
    stride = math.ceil(array.nbytes / level)
    flat = np.ascontiguousarray(array.reshape(-1)[::stride])
    if array.ndim >= 1 and math.ceil(array.shape[0] / stride) * array[:1].nbytes <= ROWS_SLACK * flat.nbytes:
        return f"{name}[::{stride}]", np.ascontiguousarray(array[::stride])
    return f"{name}.ravel()[::{stride}]", flat
