"""Masked stores (`pltpu.store(ref, val, mask=...)`) into refs of rank 3 or more (jax 0.12.0.1).

JAX's interpreter checks that no masked-on lane of a masked store falls outside the buffer by
marking the in-bounds part of the mask, but it marks every dimension's bound on the first axis: for
a `(16, 2, 128)` ref the rows from 2 on count as outside, and a correct store is reported as "Out-of-
bounds masked swap … swapping [0:16, 0:2, 0:128] but buffer has shape (16, 2, 128)" (JAX's own
ragged paged attention stops there). Rank 1 and 2 refs with a first dimension no smaller than the
others happened to pass.

The fix replaces the interpreter's masked swap with one that marks the in-bounds part per
dimension, with the same meaning otherwise: masked-on lanes are written, masked-off lanes keep the
buffer's contents, a masked-on lane outside the buffer is an out-of-bounds store (reported by the
interpreter as before), and the values returned are the old contents where the mask is on. Unmasked
swaps, and masked ones while the interpreter's own logging is on, are left to JAX.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

NAME = "masked_store_bounds"


def install(ipc: Any) -> bool:
    from jax._src.pallas.mosaic.interpret import shared_memory

    memory_class: Any = getattr(shared_memory, "SharedMemory", None)
    shape_and_dtype = getattr(shared_memory, "ShapeAndDtype", None)
    original = getattr(memory_class, "swap_buffer_content", None)
    if memory_class is None or original is None or shape_and_dtype is None:
        return False
    if getattr(original, "_playground_masked", False):
        return True
    memory_class.swap_buffer_content = _per_dimension(original, shape_and_dtype)
    return True


def _per_dimension(swap: Callable[..., Any], shape_and_dtype: Any) -> Callable[..., Any]:
    @functools.wraps(swap)
    def wrapper(
        self: Any,
        key: Any,
        rnge: Any,
        value: Any,
        mask: Any,
        thread: Any,
        increment_clock: bool = True,
        logging_info: Any = None,
    ) -> Any:
        if mask is None or self.enable_logging:
            return swap(self, key, rnge, value, mask, thread, increment_clock, logging_info)
        with self.lock:
            clock = (
                self.incr_clock(thread, take_lock=False) if self.detect_races and increment_clock else None
            )
            buffer = self.mem[key]
            described = shape_and_dtype(buffer.logical_shape, buffer.dtype)
            return (_masked_swap(buffer, rnge, value, mask), described, clock)

    wrapper._playground_masked = True  # type: ignore[attr-defined]
    return wrapper


def _masked_swap(buffer: Any, rnge: Any, value: Any, mask: Any) -> Any:
    """The old contents where `mask` is on (`value` elsewhere), or None if a masked-on lane is outside."""
    import numpy as np

    try:
        current = buffer[rnge].copy()
    except IndexError:  # the whole range is outside the buffer
        return None
    inside = tuple(slice(n) for n in current.shape)
    beyond = np.array(mask, dtype=bool, copy=True)
    beyond[inside] = False
    if beyond.any():
        return None
    old = np.array(value, copy=True)
    old[inside] = np.where(mask[inside], current, value[inside])
    buffer.set_in_bounds_portion(rnge, np.where(mask[inside], value[inside], current))
    return old
