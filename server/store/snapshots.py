"""The result a share keeps: a finished run's RunResult, trimmed to what a reader of the link needs.

Only the server's own results are kept (a share names a run by its id, and the run must be of
exactly the shared state), so a link can never show a result its code did not give. What is
kept: status, summary, cases, outputs, error, timing, memory, versions, the lowering verdict; not
the trace, the IR texts or other chips' lowerings, and at most `STREAM_CHARS` of stdout and stderr.
Whatever is left must fit in `SNAPSHOT_BYTES` of JSON.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from sandbox.catalog.entries import CatalogEntry
from sandbox.protocol import Job, RunResult, to_json_dict
from server import convert
from server.problems import ProblemError
from server.wire.schemas import ShareCreate

SNAPSHOT_BYTES = 96 * 1024
STREAM_CHARS = 4096


def trimmed(result: RunResult) -> dict[str, Any]:
    """`result` as JSON without what a share does not keep; 422 if it is still over the cap."""
    lowering = result.lowering
    if lowering is not None:
        lowering = dataclasses.replace(lowering, jaxpr=None, mosaic=None, stablehlo=None)
    kept = dataclasses.replace(
        result,
        trace=None,
        lowering=lowering,
        lowerings=(),
        cached_from=None,
        cached_at=None,
        stdout=result.stdout[:STREAM_CHARS],
        stderr=result.stderr[:STREAM_CHARS],
        stdout_truncated=result.stdout_truncated or len(result.stdout) > STREAM_CHARS,
        stderr_truncated=result.stderr_truncated or len(result.stderr) > STREAM_CHARS,
    )
    data = to_json_dict(kept)
    size = len(json.dumps(data).encode())
    if size > SNAPSHOT_BYTES:
        raise ProblemError(
            422,
            "Result too large",
            f"this run's result is {size:,} bytes even trimmed; a share keeps at most {SNAPSHOT_BYTES:,}",
            field="run",
        )
    return data


def check_same_state(job: Job, body: ShareCreate, entry: CatalogEntry | None) -> None:
    """Refuse (422) a run of another state than the one being shared."""
    options = convert.interpret_options(body.options, entry.options if entry else None)
    same = (
        job.source == body.source
        and job.chip == body.chip
        and (job.entry.slug if job.entry else None) == body.entry
        and job.options == options
    )
    if not same:
        raise ProblemError(
            422,
            "Run of other code",
            "the run's source, entry, chip or options differ from what is being shared; run it again",
            field="run",
        )
