"""Which layout a TPU keeps an array in, and the copies XLA adds when a Pallas kernel wants another.

A TPU array lives in HBM in tiles: (8, 128) 32-bit words, a 16-bit dtype packing two rows of its
second-minor dimension in a word (a (16, 128) tile of bf16), an 8-bit dtype four. Unless told
otherwise, XLA lays an array out with the dimension order that pads it least: its minor (lane)
dimension and its second-minor (sublane) dimension are any two of its dimensions, the others keep
their order outside them, and the row-major order is kept where nothing pads less. A (327680, 2880)
bf16 array is stored column-major (2880 is not a multiple of 128, 327680 is), a (4, 16, 2048, 64)
one with its 2048 as the minor dimension.

A Pallas TPU kernel (Mosaic's `tpu_custom_call`) takes and returns its arrays row-major (its
operand layout constraints). So where a function's input, as the TPU keeps it, has another minor
dimension, XLA copies it to row-major before the kernel, and copies a returned kernel output back to
the array's own layout after it: each copy reads and writes the whole array (`outside` costs them).
JAX's flash attention at head dim 64 gets four such copies, megablox's grouped matmul at K = 2880
three (its lhs, its rhs and its output).

Checked against libtpu 0.0.50.1's compiles (JAX 0.12.0.1, off the chip; `bench/tpu/layouts.py`):
the minor dimension of 338 random shapes of four dtypes on v5e, v6e and TPU7x
(`bench/tpu/v5e/layouts.jsonl`, read by `tests/model/test_layouts.py`) is this rule's in every one,
and a kernel's copies are those its compiled program holds. (Not modelled: XLA also reorders the
major dimensions of some arrays, e.g. a size-1 dimension out of the second-minor place: small
arrays, or a copy the rule does not count.)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

LANES = 128
SUBLANE_WORDS = 8  # a tile's rows of 32-bit words


def _rows(itemsize: int) -> int:
    """A tile's rows of a dtype: 8 of a 32-bit one, 16 of a 16-bit one, 32 of an 8-bit one."""
    return SUBLANE_WORDS * max(1, 4 // max(int(itemsize), 1))


def padded_elements(shape: Sequence[int], order: Sequence[int], itemsize: int) -> int:
    """Elements `shape` occupies laid out with its dimensions in `order` (major to minor), tiles padded."""
    dims = [int(shape[d]) for d in order]
    if not dims:
        return 1
    if len(dims) == 1:
        return -(-dims[0] // LANES) * LANES
    # A second-minor dimension shorter than a tile gets a shorter tile: (1, 128), (2, 128), (4, 128).
    rows = min(_rows(itemsize), 1 << max(dims[-2] - 1, 0).bit_length())
    return math.prod(dims[:-2]) * (-(-dims[-2] // rows) * rows) * (-(-dims[-1] // LANES) * LANES)


def default_minor(shape: Sequence[int], itemsize: int) -> int:
    """The dimension a TPU keeps minor (in lanes) in an array of `shape`: the one with which the
    array, its second-minor dimension chosen as well, pads least; among equals the one padded least
    to whole lanes, then the row-major one, then the later."""
    n = len(shape)

    def cost(d: int) -> tuple[int, float, bool, int]:
        rest = [o for o in range(n) if o != d]
        least = min(
            (padded_elements(shape, (*(o for o in rest if o != s), s, d), itemsize) for s in rest),
            default=padded_elements(shape, (d,), itemsize),
        )
        lanes = -(-int(shape[d]) // LANES) * LANES / max(int(shape[d]), 1)
        return least, lanes, d != n - 1, -d

    return min(range(n), key=cost) if n else 0


def relayout(shape: Sequence[int], itemsize: int) -> bool:
    """Whether a Pallas kernel gets an array of `shape` through a copy: the TPU keeps it with another
    minor dimension than its last. (The copies' second-minor reorders of small arrays are left out.)"""
    return len(shape) >= 2 and default_minor(shape, itemsize) != len(shape) - 1
