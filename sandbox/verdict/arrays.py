"""Arrays across the job ↔ checker channel: encode in a job's process, decode and vet in the checker.

Decoding trusts nothing a job sent, and bounds every field of a header before it is used: at most
`MAX_ARRAYS` arrays, a short name, a dtype named exactly as one of the plain numeric types (no
objects, records, strings or sub-arrays), at most `MAX_RANK` dimensions each an int in
[0, `MAX_CASE_ARRAY_BYTES`] (a zero-size array with a dimension of 10**30 is refused too, not left
to numpy), the byte count exactly what dtype and shape imply, and a case's arrays within
`MAX_CASE_ARRAY_BYTES`. Beside outputs sampled to fit, one table of per-group sums (`SUMS_NAME`,
`sandbox.verdict.digests`) may come too, bounded the same way before its bytes are read: float64, two
dimensions, `SUMS_COLUMNS` columns and at most `MAX_SUMS_ROWS` rows. Whatever fails is a
`ChannelError`, which the checker turns into the user's `error` result: a process that lies about its
outputs never gets `passed`, and never breaks the checker.
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
MAX_ARRAYS = 64  # outputs (or inputs) of one case; a catalog entry has a handful
MAX_NAME_CHARS = 200
# The table of sums over every element of the outputs too large to send whole: its name is no
# output's (an output's name begins with "out" or "input["), its layout is `digests`'.
SUMS_NAME = "#sums"
SUMS_COLUMNS = 33
MAX_SUMS_ROWS = 4096
SUMS_BYTES = MAX_SUMS_ROWS * SUMS_COLUMNS * 8
# ml_dtypes' low-precision types (numpy kind "V"), by name; everything else must be bool/int/float/complex.
# Every one JAX can return (a float8 "fnuz", a float4 or an int2 output was an unknown dtype: an error
# however right it was); each compares through float32, which holds all of its values exactly.
EXTRA_DTYPES = frozenset(
    name
    for name in (
        "bfloat16",
        *(
            f"float8_{kind}"
            for kind in ("e4m3fn", "e5m2", "e4m3b11fnuz", "e4m3fnuz", "e5m2fnuz", "e4m3", "e3m4")
        ),
        "float8_e8m0fnu",
        "float6_e2m3fn",
        "float6_e3m2fn",
        "float4_e2m1fn",
        "int4",
        "uint4",
        "int2",
        "uint2",
    )
    if hasattr(ml_dtypes, name)
)
# The only dtype names a header may carry: as `str(dtype)` writes them, looked up, never parsed.
PLAIN_DTYPES = (
    "bool",
    *(f"{kind}{bits}" for kind in ("int", "uint") for bits in (8, 16, 32, 64)),
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
)
DTYPES: dict[str, np.dtype] = {
    **{name: np.dtype(name) for name in PLAIN_DTYPES},
    **{name: np.dtype(getattr(ml_dtypes, name)) for name in EXTRA_DTYPES},
}


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
    """The arrays of one case, each checked against its header before it is read; the sums table,
    if one came, among them under its name."""
    if not isinstance(records, Sequence) or len(records) > MAX_ARRAYS + 1:
        raise ChannelError(f"more than {MAX_ARRAYS} outputs in one case")
    tables = sum(1 for record in records if getattr(record, "name", None) == SUMS_NAME)
    if len(records) - tables > MAX_ARRAYS or tables > 1:
        raise ChannelError(f"more than {MAX_ARRAYS} outputs, or more than one table of sums, in one case")
    total = 0
    arrays = []
    for record in records:
        name = _name(record.name)
        dtype = _dtype(record.dtype)
        shape = _shape(record.shape)
        if name == SUMS_NAME:
            _sums_header(dtype, shape)
        want = math.prod(shape) * dtype.itemsize
        total += want
        if total > MAX_CASE_ARRAY_BYTES:
            raise ChannelError(_too_big(total))
        raw = _bytes(record.data, want)
        if dtype == np.bool_ and raw.translate(None, b"\x00\x01"):
            # JAX writes a bool as 0 or 1; numpy would read any other byte as True, so such an output
            # would pass for the reference's True without being it.
            raise ChannelError(f"output {name!r}: a bool array with bytes other than 0 and 1")
        try:
            arrays.append((name, np.frombuffer(raw, dtype=dtype).reshape(shape)))
        except (ValueError, TypeError, OverflowError, MemoryError):  # bounded above; numpy has the last word
            raise ChannelError(f"an output of impossible shape {shape}") from None
    return arrays


def digest(arrays: Iterable[np.ndarray]) -> str:
    """A digest of arrays' dtypes, shapes and bytes: two processes made the same inputs iff equal."""
    h = hashlib.sha256()
    for array in arrays:
        array = np.ascontiguousarray(np.asarray(array))
        h.update(f"{array.dtype}|{array.shape}|".encode())
        h.update(array.tobytes())
    return h.hexdigest()


def _name(name: object) -> str:
    if not isinstance(name, str) or len(name) > MAX_NAME_CHARS:
        raise ChannelError("an output whose name is not a short string")
    return name


def _dtype(name: object) -> np.dtype:
    dtype = DTYPES.get(name) if isinstance(name, str) else None
    if dtype is None:
        shown = name[:40] if isinstance(name, str) else type(name).__name__
        raise ChannelError(f"an output of dtype {shown!r}: an unknown dtype, or not a numeric array")
    return dtype


def _shape(shape: object) -> tuple[int, ...]:
    """Every dimension bounded by the case's byte cap (no dtype is smaller than a byte here)."""
    if (
        not isinstance(shape, Sequence)
        or len(shape) > MAX_RANK
        or any(type(n) is not int or not 0 <= n <= MAX_CASE_ARRAY_BYTES for n in shape)
    ):
        shown = tuple(shape)[: MAX_RANK + 1] if isinstance(shape, Sequence) else type(shape).__name__
        raise ChannelError(f"an output of impossible shape {str(shown)[:120]}")
    return tuple(shape)


def _sums_header(dtype: np.dtype, shape: tuple[int, ...]) -> None:
    if (
        dtype != np.float64
        or len(shape) != 2
        or shape[1] != SUMS_COLUMNS
        or not 0 < shape[0] <= MAX_SUMS_ROWS
    ):
        raise ChannelError(
            f"a table of sums of dtype {dtype} and shape {shape}: it must be float64, of at most "
            f"{MAX_SUMS_ROWS} rows of {SUMS_COLUMNS}"
        )


def _bytes(data: object, want: int) -> bytes:
    if not isinstance(data, str):
        raise ChannelError("an output whose bytes are not a base64 string")
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
