"""One kernel on several JAX runtimes: a row per runtime, and where the outcome changes.

Pure (results in, rows and sentences out), so the server's "Run on all versions", the catalog's
per-version record and the tests all read the same verdict: "passes up to 0.11.2, fails from
0.12.0.1: error in kernel: …". Rows run oldest to newest, as the sentence reads.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

from sandbox.host.runtimes import version_key
from sandbox.protocol import RunResult, RunStatus

# How a status reads in a sentence about versions.
VERBS = {
    RunStatus.PASSED: "passes",
    RunStatus.MISMATCH: "mismatches",
    RunStatus.ERROR: "fails",
    RunStatus.TIMEOUT: "times out",
    RunStatus.RESOURCE_LIMIT: "hits a limit",
    RunStatus.RAN: "runs",
    RunStatus.CANCELLED: "was cancelled",
    RunStatus.REJECTED: "is rejected by the TPU compiler",
    RunStatus.NO_KERNEL: "matches without a Pallas kernel",
    RunStatus.UNSUPPORTED: "cannot be simulated",
}


@dataclass(frozen=True)
class MatrixRow:
    """One runtime's outcome (`status` None: not finished yet)."""

    runtime: str
    run_id: str
    status: RunStatus | None = None
    summary: str = ""
    error: str = ""
    max_abs_error: float | None = None
    kernel_seconds: float | None = None
    simulated: bool = True
    peak_rss_bytes: int | None = None
    vmem_bytes: int | None = None
    smem_bytes: int | None = None
    # The TPU compiler's verdict per chip: True (lowers), False (rejected), None (could not check).
    compiler: dict[str, bool | None] = field(default_factory=dict)
    unavailable: tuple[str, ...] = ()


@dataclass(frozen=True)
class Change:
    """Between two neighbouring runtimes the outcome differs."""

    older: str
    newer: str
    text: str


def verb(status: RunStatus | None) -> str:
    return VERBS[status] if status is not None else "is still running"


def row(runtime: str, run_id: str, result: RunResult | None) -> MatrixRow:
    if result is None:
        return MatrixRow(runtime, run_id)
    errors = [o.max_abs_error for c in result.cases for o in c.outputs if o.max_abs_error is not None]
    checks = [c for c in (result.lowering, *result.lowerings) if c is not None]
    versions = result.versions
    return MatrixRow(
        runtime=runtime,
        run_id=run_id,
        status=result.status,
        summary=result.summary,
        error=result.error.message if result.error else "",
        max_abs_error=max(errors) if errors else None,
        kernel_seconds=result.timing.kernel.median if result.timing and result.timing.kernel else None,
        simulated=result.timing.simulated if result.timing else result.mode != "tpu",
        peak_rss_bytes=result.memory.peak_rss_bytes if result.memory else None,
        vmem_bytes=result.memory.vmem_bytes if result.memory else None,
        smem_bytes=result.memory.smem_bytes if result.memory else None,
        compiler={c.chip: c.lowers for c in checks},
        unavailable=tuple(f"{u.feature}: {u.reason}" for u in versions.unavailable) if versions else (),
    )


def ordered(rows: Sequence[MatrixRow]) -> list[MatrixRow]:
    return sorted(rows, key=lambda r: version_key(r.runtime))


def judged(rows: Sequence[MatrixRow]) -> list[MatrixRow]:
    """The finished rows that say something of their version, oldest first: not a cancelled one
    (someone stopped it, whatever the version would have done)."""
    return [r for r in ordered(rows) if r.status is not None and r.status is not RunStatus.CANCELLED]


def changes(rows: Sequence[MatrixRow]) -> list[Change]:
    """Every place, oldest to newest, where the status differs from the previous judged runtime's
    (a cancelled runtime is read across: "passes up to 0.10.2, fails from 0.12.0.1")."""
    done = judged(rows)
    found = []
    for before, after in itertools.pairwise(done):
        if before.status != after.status:
            detail = after if after.status is not RunStatus.PASSED else before
            text = (
                f"{verb(before.status)} up to {before.runtime}, {verb(after.status)} from {after.runtime}: "
                f"{detail.summary}"
            )
            found.append(Change(before.runtime, after.runtime, text))
    return found


def verdict(rows: Sequence[MatrixRow]) -> str:
    """One sentence for the whole matrix ("" until every runtime has finished)."""
    done = ordered(rows)
    if not done or any(r.status is None for r in done):
        return ""
    cancelled = [r.runtime for r in done if r.status is RunStatus.CANCELLED]
    told = f" (cancelled on {', '.join(cancelled)}: no outcome there)" if cancelled else ""
    judged_rows = judged(done)
    if not judged_rows:
        return f"was cancelled on every JAX version here ({', '.join(cancelled)})"
    found = changes(judged_rows)
    if found:
        return "; ".join(c.text for c in found) + told
    first, last = judged_rows[0], judged_rows[-1]
    span = first.runtime if len(judged_rows) == 1 else f"{first.runtime} to {last.runtime}"
    where = "every JAX version that finished" if cancelled else "every JAX version here"
    return f"{verb(first.status)} on {where} ({span}): {first.summary}{told}"
