"""Would a wrong kernel also pass? Per case, an all-zeros and a constant output are checked too.

A reference that returns zeros for zero inputs, or a constant for every input, makes "matches the
reference" say nothing: a kernel that writes nothing (or one number) passes as well. Each output is
compared as if the kernel had returned all zeros, and as if it had returned the reference's median
everywhere; if either stand-in passes every output, the case says so. This only reads the expected
arrays; it does not change whether the case passed.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from sandbox.protocol import Tolerance
from sandbox.verdict.compare import as_float64, compare

Outputs = list[tuple[str, np.ndarray]]


def vacuous_note(expected: Outputs, tolerance: Callable[[str, str], Tolerance]) -> str:
    """A warning when all-zeros or a constant output would pass this case; "" when neither would.

    `tolerance(name, dtype)` is the tolerance each output is checked with.
    """
    if not expected or all(np.size(want) == 0 for _, want in expected):
        return ""
    for what, stand_in in (("an all-zeros output", _zeros), ("a constant output", _constant)):
        if all(compare(n, stand_in(w), w, tolerance(n, str(w.dtype))).passed for n, w in expected):
            return (
                f"vacuous check: {what} would also pass this case, so it cannot tell a wrong kernel "
                "from a right one here (use inputs whose reference output varies)"
            )
    return ""


def _zeros(want: np.ndarray) -> np.ndarray:
    return np.zeros_like(want)


def _constant(want: np.ndarray) -> np.ndarray:
    if np.issubdtype(want.dtype, np.integer) or want.dtype == np.bool_:
        # One of its own values: a median through float64 may not fit the dtype (uint64 near 2**64).
        flat = np.sort(np.asarray(want).ravel())
        return np.full(want.shape, flat[flat.size // 2], dtype=want.dtype)
    values = as_float64(np.asarray(want))
    finite = values[np.isfinite(values)]
    level = float(np.median(finite)) if finite.size else 0.0
    return np.full(want.shape, level).astype(want.dtype)
