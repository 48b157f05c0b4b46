"""Which tolerance each output is held to: a catalog entry's table, or a scratch file's `TOLERANCE`.

Tolerances are declared per dtype (a catalog entry's `[tolerances.float32]`, or a scratch file's
`TOLERANCE`) or per output name (`out[1]`), and each output is checked with its own: an f32 output of
a kernel with bf16 internals can be held to a looser bound than its int32 indices.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from sandbox.protocol import Tolerance
from sandbox.verdict.compare import tolerance_for

TOLERANCE_HELP = (
    'TOLERANCE must be {"rtol": r, "atol": a} for every output, or a dict from a dtype ("float32") '
    'or an output name ("out[1]") to such a dict or to an (rtol, atol) pair'
)


def scratch_tolerances(value: Any) -> dict[str, Tolerance]:
    """A scratch file's `TOLERANCE` as the per-dtype / per-output table the checks use.

    `{"rtol": 1e-2, "atol": 1e-2}` applies to every output (key "*"); otherwise keys are dtypes or
    output names and values `{"rtol": …, "atol": …}` or `(rtol, atol)`.
    """
    if not isinstance(value, Mapping):
        raise TypeError(TOLERANCE_HELP)
    if set(value) == {"rtol", "atol"}:
        return {"*": _tolerance(value)}
    return {str(key): _tolerance(one) for key, one in value.items()}


def _tolerance(value: Any) -> Tolerance:
    try:
        if isinstance(value, Mapping):
            rtol, atol = value["rtol"], value["atol"]
        else:
            rtol, atol = value
        tol = Tolerance(rtol=float(rtol), atol=float(atol))
    except (KeyError, TypeError, ValueError):
        raise TypeError(TOLERANCE_HELP) from None
    return usable(tol)


def usable(tol: Tolerance) -> Tolerance:
    """`tol` if both bounds are finite numbers >= 0; else `ValueError`. A NaN bound failed every
    element without saying why, an infinite one passed every finite one, and either reached the
    result as the string "nan" or "inf" where a number belongs (issue 41)."""
    if not all(math.isfinite(bound) and bound >= 0 for bound in (tol.rtol, tol.atol)):
        raise ValueError("TOLERANCE: rtol and atol must be finite numbers and must not be negative")
    return tol


def output_tolerance(name: str, dtype: str, declared: dict[str, Tolerance]) -> Tolerance:
    if "*" in declared and name not in declared and dtype not in declared:
        return declared["*"]
    return tolerance_for(dtype, declared, name)
