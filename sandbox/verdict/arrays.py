"""Arrays across the job ↔ checker channel: encode in a job's process, decode and vet in the checker.

Decoding trusts nothing a job sent: the dtype must be a plain numeric one (no objects, no records,
no strings), the shape small and non-negative, the byte count exactly what dtype and shape imply,
and a case's arrays within `MAX_CASE_ARRAY_BYTES`. Whatever fails is a `ChannelError`, which the
checker turns into an `error` result: a process that lies about its outputs never gets `passed`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import math
from collections.abc import Iterable, Sequence

import ml_dtypes
import numpy as np

from sandbox.protocol.arrays import MAX_CASE_ARRAY_BYTES, ArrayBytes

MAX_RANK = 8
# ml_dtypes' low-precision types (numpy kind "V"), by name; everything else must be bool/int/float/complex.
EXTRA_DTYPES = frozenset(
    name
    for name in ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3b11fnuz", "int4", "uint4")
    if hasattr(ml_dtypes, name)
)


class ChannelError(ValueError):
    """What a job's process sent over the array channel cannot be what it claims to be."""


def encode(named: Iterable[tuple[str, np.ndarray]]) -> tuple[ArrayBytes, ...]:
    """Arrays as wire records; `ChannelError` if together they pass the per-case cap."""
    records, total = [], 0
    for name, array in named:
        array = np.asarray(array)  # not ascontiguousarray: it makes a 0-d array 1-d
        total += array.nbytes
        if total > MAX_CASE_ARRAY_BYTES:
            raise ChannelError(_too_big(total))
        data = base64.b64encode(array.tobytes(order="C")).decode("ascii")
        records.append(ArrayBytes(name=name, dtype=str(array.dtype), shape=tuple(array.shape), data=data))
    return tuple(records)


def decode(records: Sequence[ArrayBytes]) -> list[tuple[str, np.ndarray]]:
    """The arrays of one case, each checked against its header before it is read."""
    total = 0
    arrays = []
    for record in records:
        dtype = _dtype(record.dtype)
        shape = _shape(record.shape)
        want = math.prod(shape) * dtype.itemsize
        total += want
        if total > MAX_CASE_ARRAY_BYTES:
            raise ChannelError(_too_big(total))
        raw = _bytes(record.data, want)
        arrays.append((record.name, np.frombuffer(raw, dtype=dtype).reshape(shape)))
    return arrays


def digest(arrays: Iterable[np.ndarray]) -> str:
    """A digest of arrays' dtypes, shapes and bytes: two processes made the same inputs iff equal."""
    h = hashlib.sha256()
    for array in arrays:
        array = np.ascontiguousarray(np.asarray(array))
        h.update(f"{array.dtype}|{array.shape}|".encode())
        h.update(array.tobytes())
    return h.hexdigest()


def _dtype(name: str) -> np.dtype:
    try:
        dtype = np.dtype(name)
    except TypeError:
        raise ChannelError(f"an output of unknown dtype {name[:40]!r}") from None
    if dtype.kind not in "biufc" and str(dtype) not in EXTRA_DTYPES:
        raise ChannelError(f"an output of dtype {name[:40]!r}, which is not a numeric array")
    return dtype


def _shape(shape: Sequence[int]) -> tuple[int, ...]:
    if len(shape) > MAX_RANK or any(not isinstance(n, int) or n < 0 for n in shape):
        raise ChannelError(f"an output of impossible shape {tuple(shape)[: MAX_RANK + 1]}")
    return tuple(shape)


def _bytes(data: str, want: int) -> bytes:
    if len(data) > 4 * (want // 3 + 1):  # before decoding: never read more than the header allows
        raise ChannelError("an output with more bytes than its shape and dtype hold")
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise ChannelError("an output whose bytes are not valid base64") from None
    if len(raw) != want:
        raise ChannelError(f"an output of {len(raw):,} bytes where its shape and dtype hold {want:,}")
    return raw


def _too_big(total: int) -> str:
    return (
        f"the outputs of one case are {total / 2**20:.1f} MiB; the checker takes at most "
        f"{MAX_CASE_ARRAY_BYTES >> 20} MiB per case: check with smaller shapes"
    )
