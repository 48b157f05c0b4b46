"""Per-group sums over every element of an output too large to send whole, computed on both sides.

`sandbox.harness.sampled` sends every k-th row of such an output (`out[::k]`), which the checker
compares element by element; the rest is checked here. The output's elements (C order) are cut into
contiguous groups (bands of whole rows; pieces of a row when it has few rows), at most
`arrays.MAX_SUMS_ROWS` groups in a case, shared by size, and the kernel's and the reference's process
each send, per group and per real part (a complex output: both), the same statistics of their own
output, made by this same function:

- the number of NaN, +inf and -inf, and where they are: a fingerprint Σ h(i)·code(i) mod 2**64 (h an
  odd hash of the element's index, code 1 NaN, 2 +inf, 3 -inf); of an integer or bool output, a
  fingerprint of its values, Σ h(i)·x(i) mod 2**64, which any one changed element changes;
- over the finite elements, in float64: Σx, Σx², Σw(i)·x (w in [0, 1), a hash of the index: a value
  in another place changes it), and for the bounds the checker draws from the reference's (`sums`):
  Σ|x|, Σm, Σm², Σm·|x|, Σw, Σw·m, m the magnitude the tolerance scales with (|x|; of a complex
  element its modulus, as `compare` has it).

A row of the table: the output's index among those sent, its rows and elements per row, the group's
first and last-plus-one element (flat), then the part statistics (`PART`) of part 0, then of part 1.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

from sandbox.verdict.arrays import MAX_SUMS_ROWS, SUMS_COLUMNS, SUMS_NAME, ChannelError
from sandbox.verdict.compare import as_complex128, as_float64, magnitude

HEAD = ("output", "rows", "row_size", "start", "stop")
PART = (
    "nan",
    "posinf",
    "neginf",
    "placed_hi",
    "placed_lo",
    "sum",
    "squares",
    "weighted",
    "abs",
    "magnitude",
    "magnitude_sq",
    "magnitude_abs",
    "weight",
    "weight_magnitude",
)
COUNTS = ("nan", "posinf", "neginf")
# How `sandbox.harness.sampled` names an output too large to send whole: every k-th row or element.
SAMPLING = re.compile(r"(?:\[::(\d+)\]|\.ravel\(\)\[::(\d+)\])$")
INTEGRAL = frozenset({"int4", "uint4", "int2", "uint2"})  # ml_dtypes' integers (numpy kind "V")
BATCH = 1 << 15  # elements summed in one pass: temporaries that stay in cache, whatever the output's size
_MASKS = tuple(np.uint64(c) for c in (0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB))


def column(part: int, stat: str) -> int:
    return len(HEAD) + part * len(PART) + PART.index(stat)


def sampling(name: str) -> tuple[str, str, int]:
    """An output's name without its cut, the cut ("" if sent whole) and its stride (1 if whole)."""
    found = SAMPLING.search(name)
    if not found:
        return name, "", 1
    return name[: found.start()], found.group(), int(found.group(1) or found.group(2))


def integral(dtype: np.dtype) -> bool:
    return dtype.kind in "biu" or dtype.name in INTEGRAL


def table(outputs: Sequence[tuple[int, np.ndarray]], groups: int = MAX_SUMS_ROWS) -> np.ndarray:
    """The sums of each (index, whole output) over its groups: `groups` in all, shared by size."""
    total = max(sum(int(a.size) for _, a in outputs), 1)
    spare = max(groups - len(outputs), 0)
    parts = [_output_sums(i, np.asarray(a), 1 + spare * int(a.size) // total) for i, a in outputs]
    return np.concatenate(parts) if parts else np.zeros((0, SUMS_COLUMNS))


def bounds(shape: tuple[int, ...], share: int) -> np.ndarray:
    """Each group's first and last-plus-one element, at most `share` groups: bands of whole rows,
    or, when there are fewer rows than that, equal pieces of each row."""
    rows, row = (shape[0], math.prod(shape[1:])) if shape else (1, 1)
    if rows * row == 0:
        return np.zeros((1, 2), dtype=np.int64)
    if rows >= share:
        band = -(-rows // share)
        starts = np.arange(0, rows, band, dtype=np.int64) * row
        return np.stack([starts, np.minimum(starts + band * row, rows * row)], axis=1)
    piece = -(-row // max(share // rows, 1))
    starts = (np.arange(rows, dtype=np.int64)[:, None] * row + np.arange(0, row, piece)[None, :]).ravel()
    return np.stack([starts, np.minimum(starts + piece, (starts // row + 1) * row)], axis=1)


def _output_sums(index: int, array: np.ndarray, share: int) -> np.ndarray:
    flat = np.ascontiguousarray(array).reshape(-1)
    edges = bounds(array.shape, share)
    out = np.zeros((len(edges), SUMS_COLUMNS))
    rows, row = (array.shape[0], math.prod(array.shape[1:])) if array.ndim else (1, 1)
    out[:, : len(HEAD)] = np.column_stack([np.full((len(edges), 3), (index, rows, row)), edges])
    first = 0
    while first < len(edges) and flat.size:
        last = max(int(np.searchsorted(edges[:, 1], edges[first, 0] + BATCH, side="right")), first + 1)
        start, stop = int(edges[first, 0]), int(edges[last - 1, 1])
        offsets = edges[first:last, 0] - start
        out[first:last, len(HEAD) :] = _stats(flat[start:stop], start, offsets)
        first = last
    return out


def _stats(values: np.ndarray, start: int, offsets: np.ndarray) -> np.ndarray:
    """Each group's part statistics (both parts side by side) of the elements from `start` on."""
    h = _hash(np.arange(start, start + values.size, dtype=np.uint64))
    odd, w = h | np.uint64(1), (h >> np.uint64(11)).astype(np.float64) * 2.0**-53
    complex_ = values.dtype.kind == "c"
    wide = as_complex128(values) if complex_ else as_float64(values)
    out = np.zeros((len(offsets), 2 * len(PART)))
    with np.errstate(over="ignore", invalid="ignore"):
        if complex_:
            m = magnitude(wide)
            out[:, : len(PART)] = _part(wide.real, m, w, odd, None, offsets)
            out[:, len(PART) :] = _part(wide.imag, m, w, odd, None, offsets)
        else:
            placed = _values(values) if integral(values.dtype) else None
            out[:, : len(PART)] = _part(wide, None, w, odd, placed, offsets)
    return out


def _part(
    x: np.ndarray,
    m: np.ndarray | None,
    w: np.ndarray,
    odd: np.ndarray,
    placed: np.ndarray | None,
    offsets: np.ndarray,
) -> np.ndarray:
    """One real part's statistics per group. `m`: the magnitudes (None: |x|, a real output's);
    `placed`: what to fingerprint (None: where the NaN and infinities are)."""
    finite = np.isfinite(x)
    everywhere = bool(finite.all())  # the usual case: nothing to count, mask or place
    xf, wf = (x, w) if everywhere else (np.where(finite, x, 0.0), np.where(finite, w, 0.0))
    ax = np.abs(xf)
    x2 = xf * xf
    if m is None:
        mf, m2, max_ = ax, x2, x2
    else:
        mf = m if everywhere else np.where(finite, m, 0.0)
        m2, max_ = mf * mf, mf * ax
    columns = {
        "sum": xf,
        "squares": x2,
        "weighted": wf * xf,
        "abs": ax,
        "magnitude": mf,
        "magnitude_sq": m2,
        "magnitude_abs": max_,
        "weight": wf,
        "weight_magnitude": wf * mf,
    }
    codes = None
    if not everywhere:
        codes = np.isnan(x) * 1 + np.isposinf(x) * 2 + np.isneginf(x) * 3
        columns.update(nan=codes == 1, posinf=codes == 2, neginf=codes == 3)
    out = np.zeros((len(offsets), len(PART)))
    for stat, terms in columns.items():
        out[:, PART.index(stat)] = np.add.reduceat(np.asarray(terms, np.float64), offsets)
    if placed is None and codes is not None:
        placed = codes.astype(np.uint64)
    if placed is not None:
        fingerprint = np.add.reduceat(odd * placed, offsets)
        out[:, PART.index("placed_hi")] = (fingerprint >> np.uint64(32)).astype(np.float64)
        out[:, PART.index("placed_lo")] = (fingerprint & np.uint64(0xFFFFFFFF)).astype(np.float64)
    return out


def _values(values: np.ndarray) -> np.ndarray:
    """An integer output's values as uint64 bit patterns (two's complement), exact for every width."""
    if values.dtype == np.uint64:
        return values
    return values.astype(np.int64).view(np.uint64)


def _hash(index: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: a well-mixed 64-bit hash of each index (wrapping arithmetic)."""
    z = index + _MASKS[0]
    z = (z ^ (z >> np.uint64(30))) * _MASKS[1]
    z = (z ^ (z >> np.uint64(27))) * _MASKS[2]
    return z ^ (z >> np.uint64(31))


def split(named: list[tuple[str, np.ndarray]]) -> tuple[list[tuple[str, np.ndarray]], np.ndarray | None]:
    """A case's outputs, and the table of sums that came with them (None if none did)."""
    outputs = [(n, a) for n, a in named if n != SUMS_NAME]
    tables = [a for n, a in named if n == SUMS_NAME]
    return outputs, (tables[0] if tables else None)


def validate(outputs: list[tuple[str, np.ndarray]], sums: np.ndarray | None) -> None:
    """`ChannelError` unless `sums` describes every sampled output, and only those, group by group:
    contiguous groups covering exactly the output the sample was cut from, counts and fingerprints
    whole numbers. The reference's table is checked so; the kernel's must then match its layout."""
    sampled = {i for i, (name, _) in enumerate(outputs) if sampling(name)[1]}
    if not sampled:
        return
    if sums is None:
        raise ChannelError("outputs sampled to fit came without their sums")
    head = sums[:, : len(HEAD)]
    counts = sums[:, [column(p, s) for p in (0, 1) for s in (*COUNTS, "placed_hi", "placed_lo")]]
    if not (_whole(head) and _whole(counts) and (counts < 2**32).all()):
        raise ChannelError("a table of sums whose counts or groups are not whole numbers")
    if not set(head[:, 0].astype(np.int64).tolist()) == sampled:
        raise ChannelError("a table of sums for other outputs than those sampled")
    for i in sampled:
        _check_groups(outputs[i], head[head[:, 0] == i].astype(np.int64))


def _whole(values: np.ndarray) -> bool:
    """Whole numbers from 0 to 2**53 (float64 holds each exactly; int64 too)."""
    return bool(((values >= 0) & (values < 2.0**53) & (values == np.floor(values))).all())


def _check_groups(output: tuple[str, np.ndarray], head: np.ndarray) -> None:
    name, sample = output
    _, cut, stride = sampling(name)
    rows, row = int(head[0, 1]), int(head[0, 2])
    starts, stops = head[:, 3], head[:, 4]
    tiled = (
        (head[:, 1] == rows).all()
        and (head[:, 2] == row).all()
        and starts[0] == 0
        and (starts[1:] == stops[:-1]).all()
        and (stops > starts).all()
        and stops[-1] == rows * row
    )
    if cut.startswith(".ravel()"):
        cut_from = sample.ndim == 1 and sample.size == -(-rows * row // stride)
    else:
        cut_from = (
            sample.ndim >= 1 and sample.shape[0] == -(-rows // stride) and math.prod(sample.shape[1:]) == row
        )
    if not (tiled and cut_from):
        raise ChannelError(f"the sums of {name[:80]!r} are not over the output its sample was cut from")
