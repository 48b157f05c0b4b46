"""Arrays on the wire between a job's processes and its checker: a header and the raw bytes.

A kernel's process sends what its kernel returned, a reference's process what the reference
returned; the checker (`sandbox.verdict`) decodes both and compares them outside either process.
Stdlib only, like all of the protocol: the bytes travel base64-encoded inside the JSON event, and
the header (dtype, shape) is checked against the byte count before anything reads them.
"""

from __future__ import annotations

from dataclasses import dataclass

# Per case, what one process may send (before base64): a catalog case's outputs are a few MiB at
# most; a bigger output is an error the user is told about, never a truncated comparison.
MAX_CASE_ARRAY_BYTES = 8 << 20
# A sweep job's configs (or its reference's check sizes) together: base64 makes it a third more on
# the channel (~43 MiB), and the whole report must stay within the event reader's 48 MiB cap
# (`reading.MAX_REPORT_BYTES`), estimates and all. A 27-config sweep of 4096-row blocks takes ~26 MiB.
MAX_JOB_ARRAY_BYTES = 32 << 20
# Inputs given to a kernel's job travel inside the job (stdin, or the job-runner service's one line,
# at most 4 MiB): larger ones are made again by the job, and a reference's job does not send them.
GIVEN_INPUT_BYTES = 2 << 20


@dataclass(frozen=True)
class ArrayBytes:
    """One named array: `data` is base64 of its C-order bytes (`shape` and `dtype` say how to read them)."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    data: str
