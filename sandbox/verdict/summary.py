"""For runs without a reference: what came out, summarised (range, NaN/Inf counts, a preview)."""

from __future__ import annotations

import numpy as np

from sandbox.protocol import OutputSummary

PREVIEW_CHARS = 600


def summarize_output(name: str, array: np.ndarray) -> OutputSummary:
    numeric = array.dtype.kind in "fcbiu" or "bfloat16" in str(array.dtype)
    values = array.astype(np.float64) if numeric and array.size else None
    finite = values[np.isfinite(values)] if values is not None else None
    with np.printoptions(threshold=40, edgeitems=3, precision=4, linewidth=100):
        preview = repr(array)
    return OutputSummary(
        name=name,
        shape=tuple(array.shape),
        dtype=str(array.dtype),
        min=float(finite.min()) if finite is not None and finite.size else None,
        max=float(finite.max()) if finite is not None and finite.size else None,
        mean=float(finite.mean()) if finite is not None and finite.size else None,
        nan_count=int(np.isnan(values).sum()) if values is not None else 0,
        inf_count=int(np.isinf(values).sum()) if values is not None else 0,
        preview=preview[:PREVIEW_CHARS],
    )
