"""Outputs too large for the checker's channel, checked on a sample both sides take the same way.

A catalog case at a TPU size (a 4096 x 4096 bf16 matmul: 32 MiB of output; the in-place 65536 x
1024: 128 MiB) is far past what one case may send (`MAX_CASE_ARRAY_BYTES`, 8 MiB). On a chip such a
case is the point of running natively, so rather than refuse it, the kernel's and the reference's
processes each send every k-th row (the first axis) of every output, k the smallest stride that fits,
named `out[::k]` so the report says what was compared. Both apply this same pure function to outputs
of the same shapes, so the checker compares like with like; outputs of other shapes get other names
and are reported as a mismatch of outputs, as any wrong output is. Outputs that fit are sent whole.
"""

from __future__ import annotations

import math

import numpy as np

from sandbox.protocol.arrays import MAX_CASE_ARRAY_BYTES

# A little under the cap: the checker also counts each array's header.
SAMPLE_BYTES = MAX_CASE_ARRAY_BYTES - (64 << 10)


def fit(named: list[tuple[str, np.ndarray]], cap: int = SAMPLE_BYTES) -> list[tuple[str, np.ndarray]]:
    """`named` unchanged when it fits `cap`; else every k-th row of each output, or every k-th element
    of each flattened output where rows do not fit (an output of few rows, or a scalar)."""
    total = sum(int(a.nbytes) for _, a in named)
    if total <= cap:
        return named
    stride = math.ceil(total / cap)
    rows = [(f"{name}[::{stride}]", np.ascontiguousarray(a[::stride])) for name, a in named if a.ndim >= 1]
    if len(rows) == len(named) and sum(int(a.nbytes) for _, a in rows) <= cap:
        return rows
    return [(f"{name}.ravel()[::{stride}]", np.ascontiguousarray(a.ravel()[::stride])) for name, a in named]
