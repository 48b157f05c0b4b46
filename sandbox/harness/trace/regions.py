"""Regions of a buffer as the kernel trace shows them: `[0:128, 128:256]`, sizes and block indices.

A region is a tuple with one entry per dimension: `(start, stop, step)` for a slice, an int for an
index, as the interpreter's `to_range` gives them (after `normalize`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

Range = tuple[tuple[int, int, int] | int, ...]


def normalize(indices: Iterable[Any]) -> Range:
    """The interpreter's `to_range` result (slices and ints) as plain tuples."""
    out: list[tuple[int, int, int] | int] = []
    for index in indices:
        if isinstance(index, slice):
            out.append((int(index.start or 0), int(index.stop), int(index.step or 1)))
        else:
            out.append(int(index))
    return tuple(out)


def whole(shape: Iterable[int]) -> Range:
    return tuple((0, int(n), 1) for n in shape)


def region_text(rng: Range | None) -> str:
    """`[0:128, 128:256]`; an int index stays an int; `[...]` when the region is not known."""
    if not rng:
        return "[...]"
    parts = []
    for index in rng:
        if isinstance(index, int):
            parts.append(str(index))
        else:
            start, stop, step = index
            parts.append(f"{start}:{stop}" + (f":{step}" if step != 1 else ""))
    return "[" + ", ".join(parts) + "]"


def region_bytes(rng: Range | None, itemsize: int | None) -> int | None:
    if rng is None or itemsize is None:
        return None
    sizes = [1 if isinstance(i, int) else len(range(*i)) for i in rng]
    return math.prod(sizes) * itemsize


def block_of(rng: Range | None) -> tuple[int, ...] | None:
    """The block index of a region cut from an array in equal blocks: start // size per dimension.

    None when some dimension is not such a block (strided, or not aligned to its own size).
    """
    if not rng:
        return None
    block = []
    for index in rng:
        if isinstance(index, int):
            block.append(index)
            continue
        start, stop, step = index
        size = stop - start
        if step != 1 or size <= 0 or start % size:
            return None
        block.append(start // size)
    return tuple(block)
