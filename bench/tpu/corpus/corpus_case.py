"""One corpus kernel as data: its name, seeded inputs, a float64 numpy reference and its tolerances.

A case is judged the way the playground's checker judges a run (`|out - ref| <= atol + rtol * |ref|`
elementwise, NaN and Inf must match), against a reference computed in float64 (exact for integers)
from the very input values the kernel received, so bf16 inputs are not charged for their own rounding.

Two tolerances per case, kept apart on purpose:
- `rtol`/`atol`: the kernel's own check, what a careful author would pick for the dtype and the
  precision the kernel asks for. The chip and the simulator each get a verdict against it.
- `chip`: how closely the simulator's output must match the chip's output for the two to count as the
  same; by default the kernel's own tolerance. `chip_note` says why a case is expected to differ.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np

BF16 = ml_dtypes.bfloat16


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float


@dataclass(frozen=True)
class Case:
    name: str
    run: Callable[..., Any]  # (*inputs) -> one array or a tuple of arrays
    inputs: Callable[[np.random.Generator], tuple[np.ndarray, ...]]
    reference: Callable[..., Any]  # (*inputs as float64/int64) -> one array or a tuple
    rtol: float
    atol: float
    chip_note: str = ""
    chip_tolerance: Tolerance | None = field(default=None)
    # The verdict the playground's simulator gives (`run.py --mode simulator`: interpret mode with the
    # harness's fixes, the MXU's bf16 pass among them), which is the chip's unless `chip_note` says why not.
    interpret_status: str = "passed"

    @property
    def seed(self) -> int:
        return zlib.crc32(self.name.encode()) % 2**31

    @property
    def chip(self) -> Tolerance:
        return self.chip_tolerance or Tolerance(self.rtol, self.atol)

    def make_inputs(self) -> tuple[np.ndarray, ...]:
        return self.inputs(np.random.default_rng(self.seed))

    def expected(self, inputs: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
        return as_tuple(self.reference(*(widen(x) for x in inputs)))


def as_tuple(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def widen(x: np.ndarray) -> np.ndarray:
    """float64 for floating inputs (bf16 included), int64 for integers: the reference's number types."""
    x = np.asarray(x)
    if np.issubdtype(x.dtype, np.integer) or x.dtype == np.bool_:
        return x.astype(np.int64)
    return x.astype(np.float64)


def storable(x: Any) -> np.ndarray:
    """A host copy that np.savez can keep: bf16 becomes float32 (exact), everything else as it is."""
    x = np.asarray(x)
    return x.astype(np.float32) if x.dtype == BF16 else x


def errors(out: np.ndarray, ref: np.ndarray) -> tuple[float, float]:
    """Largest absolute and relative error of `out` against `ref` (relative where ref != 0)."""
    out64, ref64 = widen(out).astype(np.float64), widen(ref).astype(np.float64)
    finite = np.isfinite(out64) & np.isfinite(ref64)
    err = np.abs(out64 - ref64)[finite]
    if err.size == 0:
        return 0.0, 0.0
    mag = np.abs(ref64[finite])
    rel = err[mag > 0] / mag[mag > 0]
    return float(err.max()), float(rel.max()) if rel.size else 0.0


def within(out: np.ndarray, ref: np.ndarray, tol: Tolerance) -> bool:
    """The checker's rule: same shape, NaN/Inf where the reference has them, else atol + rtol·|ref|."""
    out64, ref64 = widen(out).astype(np.float64), widen(ref).astype(np.float64)
    if out64.shape != ref64.shape:
        return False
    return bool(np.allclose(out64, ref64, rtol=tol.rtol, atol=tol.atol, equal_nan=True))


def judge(case: Case, outputs: tuple[np.ndarray, ...], expected: tuple[np.ndarray, ...]) -> dict[str, Any]:
    """status passed|mismatch, with the largest errors over all outputs."""
    if len(outputs) != len(expected):
        return {"status": "mismatch", "max_abs_err": None, "max_rel_err": None}
    tol = Tolerance(case.rtol, case.atol)
    ok = all(within(o, r, tol) for o, r in zip(outputs, expected, strict=True))
    pairs = [errors(o, r) for o, r in zip(outputs, expected, strict=True) if np.shape(o) == np.shape(r)]
    max_abs = max((a for a, _ in pairs), default=None)
    max_rel = max((r for _, r in pairs), default=None)
    return {"status": "passed" if ok else "mismatch", "max_abs_err": max_abs, "max_rel_err": max_rel}


def normal(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any = np.float32) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def uniform(rng: np.random.Generator, shape: tuple[int, ...], low: float, high: float) -> np.ndarray:
    return rng.uniform(low, high, shape).astype(np.float32)


def int8s(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-128, 128, shape).astype(np.int8)


# Tolerances a careful author picks per dtype (the catalog's, for dots with f32 results).
F32 = {"rtol": 1e-4, "atol": 1e-4}
F32_ELEMENTWISE = {"rtol": 1e-5, "atol": 1e-6}
BF16_OUT = {"rtol": 2e-2, "atol": 1e-2}
EXACT = {"rtol": 0.0, "atol": 0.0}
