"""Building a `Job` from what a caller (the server or the CLI) asked for."""

from __future__ import annotations

import uuid

from sandbox.catalog import CatalogEntry
from sandbox.limits import default_limits
from sandbox.protocol import Chip, InterpretOptions, Job, Limits, Mode


class JobError(ValueError):
    """The request cannot become a job (e.g. a chip the entry does not support)."""


def make_job(
    source: str,
    *,
    entry: CatalogEntry | None = None,
    chip: Chip = "v5p",
    mode: Mode = "auto",
    options: InterpretOptions | None = None,
    limits: Limits | None = None,
    timing_budget_seconds: float = 1.5,
    job_id: str | None = None,
) -> Job:
    limits = limits or default_limits()
    if len(source.encode()) > limits.source_bytes:
        raise JobError(f"source is {len(source.encode()):,} bytes; the limit is {limits.source_bytes:,}")
    if entry is not None and chip not in entry.chips:
        raise JobError(f"entry {entry.slug!r} supports chips {', '.join(entry.chips)}, not {chip!r}")
    return Job(
        id=job_id or uuid.uuid4().hex,
        source=source,
        chip=chip,
        mode=mode,
        options=options or InterpretOptions(),
        limits=limits,
        entry=entry.spec() if entry is not None else None,
        timing_budget_seconds=timing_budget_seconds,
        devices=entry.devices if entry is not None else 1,
    )
