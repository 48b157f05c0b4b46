"""Compare a kernel's output with the reference: per-dtype tolerance, NaN/Inf parity, a precise report.

Pure numpy, no JAX, so it is unit-testable in milliseconds and the same code checks every entry.
An element matches when |got - expected| <= atol + rtol * |expected|, or when both are NaN, or both
are the same infinity. Non-finite mismatches (a NaN or an infinity on one side only, e.g. output rows
a kernel never wrote) are counted apart, with where they are, because `max_abs_error` is over finite
pairs only and would otherwise say 0 for an output full of NaN.

Every dtype is compared as what it is: a complex element matches when its real part and its
imaginary part each do (|Δ| within atol + rtol * |expected|, NaN/Inf parity per part), and integers
(and booleans) are compared as integers, exactly, never through float64 (which cannot tell 2**60
from 2**60 + 1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from sandbox.protocol import Mismatch, OutputCheck, Tolerance

FIRST_MISMATCHES = 8
ERROR_MAP_CELLS = 16
ERROR_MAP_CAP = 1e9  # JSON has no infinity
# Elements compared at once. Each is widened to float64 (complex128) with a dozen temporaries beside
# it: compared whole, an 8 MiB output of bytes (8 Mi elements) cost the checker's process ~600 MB and
# seconds of CPU, per comparison (issue 41); by blocks, what is kept whole is ~10 bytes an element.
BLOCK = 1 << 18

DEFAULT_TOLERANCES: dict[str, Tolerance] = {
    "float64": Tolerance(rtol=1e-7, atol=1e-7),
    "float32": Tolerance(rtol=1e-4, atol=1e-4),
    "bfloat16": Tolerance(rtol=2e-2, atol=2e-2),
    "float16": Tolerance(rtol=2e-3, atol=2e-3),
}
EXACT = Tolerance(rtol=0.0, atol=0.0)


def tolerance_for(dtype: str, declared: dict[str, Tolerance] | None = None, output: str = "") -> Tolerance:
    """An output's tolerance: declared for its name (`out[1]`), else for its dtype, else the default."""
    if declared and output and output in declared:
        return declared[output]
    if declared and dtype in declared:
        return declared[dtype]
    return DEFAULT_TOLERANCES.get(dtype, EXACT)


def as_float64(array: np.ndarray) -> np.ndarray:
    # bfloat16 and other ml_dtypes only convert to float64 by way of float32.
    if array.dtype.kind == "c":
        return array.real.astype(np.float64)  # where a real view is wanted; `compare` keeps both parts
    if array.dtype.kind in "biu":
        return array.astype(np.float64)
    return (
        np.asarray(array, dtype=np.float32).astype(np.float64)
        if array.dtype.itemsize < 4
        else array.astype(np.float64)
    )


def as_complex128(array: np.ndarray) -> np.ndarray:
    return array.astype(np.complex128) if array.dtype.kind == "c" else as_float64(array).astype(np.complex128)


def compare(name: str, got: np.ndarray, expected: np.ndarray, tol: Tolerance) -> OutputCheck:
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape:
        return _shape_mismatch(name, got, expected, tol)
    complex_ = "c" in (got.dtype.kind, expected.dtype.kind)
    integers = got.dtype.kind in "biu" and expected.dtype.kind in "biu"
    flat_got, flat_expected = got.reshape(-1), expected.reshape(-1)
    flat_bad, flat_nonfinite, flat_ratio = (
        np.zeros(got.size, bool),
        np.zeros(got.size, bool),
        np.zeros(got.size),
    )
    tally = _Tally()
    for start in range(0, got.size, BLOCK):
        part = slice(start, start + BLOCK)
        flat_bad[part], flat_nonfinite[part], flat_ratio[part] = _block(
            flat_got[part], flat_expected[part], tol, tally, complex_=complex_, integers=integers
        )
    bad, nonfinite = flat_bad.reshape(got.shape), flat_nonfinite.reshape(got.shape)
    ratio = flat_ratio.reshape(got.shape)
    count = int(bad.sum())
    widen = as_complex128 if complex_ else as_float64
    return OutputCheck(
        name=name,
        shape=tuple(got.shape),
        dtype=str(got.dtype),
        expected_shape=tuple(expected.shape),
        expected_dtype=str(expected.dtype),
        passed=count == 0 and str(got.dtype) == str(expected.dtype),
        max_abs_error=tally.max_abs,
        max_rel_error=tally.max_rel,
        mismatch_count=count,
        total=int(got.size),
        first_mismatches=_first_mismatches(bad, got, expected, widen),
        nan_parity=tally.nan_parity,
        inf_parity=tally.inf_parity,
        error_map=error_map(ratio),
        note=_dtype_note(got, expected),
        nonfinite_mismatches=int(nonfinite.sum()),
        nonfinite_where=nonfinite_where(nonfinite, widen(got[nonfinite])),
        tolerance=tol,
    )


@dataclass
class _Tally:
    """What `compare` keeps of the blocks it has seen: the worst errors, whether NaN and Inf match."""

    max_abs: float | None = None
    max_rel: float | None = None
    nan_parity: bool = True
    inf_parity: bool = True

    def add(self, abs_err: np.ndarray, rel_err: np.ndarray) -> None:
        if abs_err.size:
            self.max_abs = max(self.max_abs or 0.0, float(abs_err.max()))
            self.max_rel = max(self.max_rel or 0.0, float(rel_err.max()))


def _block(
    got: np.ndarray, expected: np.ndarray, tol: Tolerance, tally: _Tally, *, complex_: bool, integers: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One block of elements (flat): which fail, which of those are non-finite, and each one's error as
    a multiple of its tolerance (for the error map); the worst errors and the parities go to `tally`."""
    g, e = (
        (as_complex128(got), as_complex128(expected)) if complex_ else (as_float64(got), as_float64(expected))
    )
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        allowed = tol.atol + tol.rtol * magnitude(e)
        parts = ((g.real, e.real), (g.imag, e.imag)) if complex_ else ((g, e),)
        abs_err = np.maximum.reduce([np.abs(gp - ep) for gp, ep in parts])
        ok = np.logical_and.reduce([_part_ok(gp, ep, allowed) for gp, ep in parts])
        finite = np.isfinite(g) & np.isfinite(e)
        if integers:
            ok, abs_err = _integers(got, expected, tol, abs_err)
        tally.add(abs_err[finite], abs_err[finite] / np.maximum(np.abs(e[finite]), np.finfo(np.float64).tiny))
        scaled = np.nan_to_num(abs_err / np.maximum(allowed, 1e-300), nan=ERROR_MAP_CAP, posinf=ERROR_MAP_CAP)
    tally.nan_parity &= all(np.array_equal(np.isnan(gp), np.isnan(ep)) for gp, ep in parts)
    tally.inf_parity &= all(
        np.array_equal(np.isposinf(gp), np.isposinf(ep)) and np.array_equal(np.isneginf(gp), np.isneginf(ep))
        for gp, ep in parts
    )
    bad = ~ok
    ratio = np.where(bad, np.clip(scaled, 1.0, ERROR_MAP_CAP), np.minimum(scaled, 1.0))
    return bad, bad & ~finite, ratio


def magnitude(e: np.ndarray) -> np.ndarray:
    """|e|; of a complex element with a NaN or Inf part, that of its finite part (which must still match)."""
    if e.dtype.kind != "c":
        return np.abs(e)
    finite = [np.where(np.isfinite(p), p, 0.0) for p in (e.real, e.imag)]
    return np.hypot(*finite)


def _part_ok(g: np.ndarray, e: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Per element of one real part: within tolerance, or both NaN, or the same infinity."""
    both_nan = np.isnan(g) & np.isnan(e)
    same_inf = np.isinf(g) & np.isinf(e) & (np.sign(g) == np.sign(e))
    return (np.isfinite(g) & np.isfinite(e) & (np.abs(g - e) <= allowed)) | both_nan | same_inf


def _integers(
    got: np.ndarray, expected: np.ndarray, tol: Tolerance, abs_err: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Integer outputs of one dtype, matched and measured in exact integer arithmetic: |a - b| as
    uint64 (max - min wraps to the true distance, which is below 2**64). Other dtypes: as given."""
    if got.dtype != expected.dtype:
        return np.asarray(got == expected), abs_err  # fails on the dtype anyway
    wide = np.uint64 if got.dtype.kind == "u" else np.int64
    a, b = got.astype(wide), expected.astype(wide)
    diff = np.maximum(a, b).astype(np.uint64) - np.minimum(a, b).astype(np.uint64)
    exact = tol.atol == 0 and tol.rtol == 0
    allowed = tol.atol + tol.rtol * np.abs(expected.astype(np.float64))
    ok = (diff == 0) if exact else (diff == 0) | (diff.astype(np.float64) <= allowed)
    return ok, diff.astype(np.float64)


def nonfinite_where(nonfinite: np.ndarray, values: np.ndarray) -> str:
    """Where the non-finite mismatches are, in words: "NaN in rows 192–255 (all 128 columns)";
    `values`: the kernel's elements there, widened."""
    count = int(nonfinite.sum())
    if not count:
        return ""
    kinds = [k for k, n in (("NaN", np.isnan(values).sum()), ("Inf", np.isinf(values).sum())) if n]
    what = " or ".join(kinds) if kinds else "finite values where the reference is NaN or Inf"
    if nonfinite.ndim == 0:
        return what
    grid = nonfinite.reshape(-1, nonfinite.shape[-1]) if nonfinite.ndim >= 2 else nonfinite.reshape(1, -1)
    rows = np.flatnonzero(grid.any(axis=1))
    cols = np.flatnonzero(grid.any(axis=0))
    if nonfinite.ndim == 1:
        return f"{what} at elements {_run(cols)}"
    row_text = f"rows {_run(rows)}" if len(rows) < grid.shape[0] else f"all {grid.shape[0]} rows"
    col_text = f"columns {_run(cols)}" if len(cols) < grid.shape[1] else f"all {grid.shape[1]} columns"
    return f"{what} in {row_text} ({col_text})"


def _run(indices: np.ndarray) -> str:
    """ "192–255" for a contiguous run, "3, 7, 9–12 and 2 more places" otherwise (inclusive)."""
    runs: list[tuple[int, int]] = []
    for i in indices.tolist():
        if runs and i == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    shown = [f"{a}" if a == b else f"{a}–{b}" for a, b in runs[:3]]
    more = f" and {len(runs) - 3} more ranges" if len(runs) > 3 else ""
    return ", ".join(shown) + more


def error_map(ratio: np.ndarray) -> tuple[tuple[float, ...], ...]:
    """A coarse heatmap: per cell, the worst error as a multiple of the tolerance (capped; NaN: cap).

    Arrays are viewed as 2-D (leading dimensions folded into rows); each axis is cut into at most
    ERROR_MAP_CELLS equal parts, so an off-by-one index map or a missed block shows as lit cells.
    """
    if ratio.size == 0:
        return ()
    grid = ratio.reshape(-1, ratio.shape[-1]) if ratio.ndim >= 2 else ratio.reshape(1, -1)
    rows = np.array_split(np.arange(grid.shape[0]), min(ERROR_MAP_CELLS, grid.shape[0]))
    cols = np.array_split(np.arange(grid.shape[1]), min(ERROR_MAP_CELLS, grid.shape[1]))
    return tuple(tuple(float(grid[np.ix_(r, c)].max()) for c in cols) for r in rows)


def _first_mismatches(
    bad: np.ndarray, got: np.ndarray, expected: np.ndarray, widen: Callable[[np.ndarray], np.ndarray]
) -> tuple[Mismatch, ...]:
    """The first mismatches; of a complex element, the part that differs more (its note says so).
    Only those elements are widened (`widen`: to float64 or complex128), never the whole output."""
    at = np.flatnonzero(bad)[:FIRST_MISMATCHES]
    g, e = widen(got.reshape(-1)[at]), widen(expected.reshape(-1)[at])
    mismatches = []
    for k, flat in enumerate(at.tolist()):
        idx = np.unravel_index(flat, bad.shape) if bad.ndim else ()
        theirs, want = complex(g[k]), complex(e[k])
        imag = abs(theirs.imag - want.imag) > abs(theirs.real - want.real)
        pair = (theirs.imag, want.imag) if imag else (theirs.real, want.real)
        mismatches.append(Mismatch(index=tuple(int(i) for i in idx), got=pair[0], expected=pair[1]))
    return tuple(mismatches)


def _dtype_note(got: np.ndarray, expected: np.ndarray) -> str:
    if str(got.dtype) != str(expected.dtype):
        return f"dtype differs: got {got.dtype}, expected {expected.dtype}"
    return ""


def _shape_mismatch(name: str, got: np.ndarray, expected: np.ndarray, tol: Tolerance) -> OutputCheck:
    return OutputCheck(
        name=name,
        shape=tuple(got.shape),
        dtype=str(got.dtype),
        expected_shape=tuple(expected.shape),
        expected_dtype=str(expected.dtype),
        passed=False,
        max_abs_error=None,
        max_rel_error=None,
        mismatch_count=int(expected.size),
        total=int(expected.size),
        first_mismatches=(),
        nan_parity=False,
        inf_parity=False,
        note=f"shape differs: got {tuple(got.shape)}, expected {tuple(expected.shape)}",
        tolerance=tol,
    )
