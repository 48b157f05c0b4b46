"""The one way a job becomes a result: run it on a backend, forward what its followers may see,
classify the raw facts, and decide whether the result may be served again for an identical job.

Every caller goes through here: the in-process run queue (`server.queue.engine`), the Redis workers
(`sandbox.worker.loop`), the Redis web side for runs ended before they ran, and the CLI. So a
status, a forwarded event and a cached answer mean the same thing whichever queue a run took
(`tests/unit/test_architecture.py` checks that no other module classifies).

Also here, because they are part of "finishing a run": which protocol events are forwarded and in
what shape (the harness's own `done` is replaced by the queue's, which carries the whole result,
and the trace is folded into the result only), and the results of runs that could not end
normally (our faults, told apart from the user's code).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sandbox.backends.base import Backend
from sandbox.protocol import FORWARDED_KINDS, Event, Execution, Job, RunResult, RunStatus, never_ran
from sandbox.results.classify import classify

log = logging.getLogger(__name__)

# The kinds a follower sees while a run runs: the protocol's one list (`sandbox.protocol.events`).
FORWARDED = FORWARDED_KINDS
# IR texts can be hundreds of KB per chip: progress events carry verdicts only, the result has the texts.
IR_FIELDS = ("jaxpr", "mosaic", "stablehlo")
# Not timeouts, limits or cancellations (they depend on the machine's load at the time), not our own
# faults (an infrastructure error, an unreadable report, a broken harness).
CACHEABLE = frozenset(
    {
        RunStatus.PASSED,
        RunStatus.MISMATCH,
        RunStatus.ERROR,
        RunStatus.RAN,
        RunStatus.REJECTED,
        RunStatus.UNSUPPORTED,
    }
)

# Called with (kind, data) for every event a follower may see, from the backend's thread.
Forward = Callable[[str, dict[str, Any]], None]


@dataclass(frozen=True)
class Finished:
    """A job's end as every queue needs it: the result, whether it may be reused, whose fault."""

    result: RunResult
    reusable: bool  # an identical job may be answered with this result
    failure: bool  # the sandbox failed to run it (counted in the metrics)
    wall_seconds: float


def execute(backend: Backend, job: Job, cancel: threading.Event, forward: Forward) -> Finished:
    """Run `job` to its end on `backend`; never raises for anything the job or the backend does."""

    def sink(event: Event) -> None:
        if event.kind == "log":  # internal text (raw tracebacks): the host's log only
            log.info("job %s: job log: %s", job.id, str(event.data.get("text", ""))[:20000])
        data = progress(event.kind, event.data, event.t)
        if data is not None:
            forward(event.kind, data)

    started = time.monotonic()
    try:
        execution = backend.run(job, sink, cancel)
    except Exception as exc:  # a backend fault: the run fails cleanly, the caller carries on
        log.exception("sandbox backend failed for job %s", job.id)
        execution = never_ran(
            f"the sandbox failed ({type(exc).__name__})", wall_seconds=time.monotonic() - started
        )
    return finish(job, execution, cancelled=cancel.is_set())


def finish(job: Job, execution: Execution, *, cancelled: bool) -> Finished:
    """Classify raw facts; a classifier fault is our error, logged with the facts, never raised."""
    try:
        result = classify(job, execution)
    except Exception:
        log.exception("job %s: the result could not be classified; raw facts: %s", job.id, facts(execution))
        result = internal_error(job, "the job's report could not be read")
    if execution.report_error:
        log.warning(
            "job %s: unreadable report (%s); raw facts: %s", job.id, execution.report_error, facts(execution)
        )
    return Finished(
        result=result,
        reusable=trusted_execution(execution, cancelled=cancelled) and reusable_result(result),
        failure=bool(execution.infra_error),
        wall_seconds=execution.wall_seconds,
    )


def cancelled_before_start(job: Job) -> RunResult:
    """The result of a run cancelled while it still waited in a queue."""
    return finish(job, never_ran(None, cancelled=True), cancelled=True).result


# -- what followers see ------------------------------------------------------------------------


def slim(data: dict[str, Any]) -> dict[str, Any]:
    """A lowering event without its IR texts."""

    def strip(check: Any) -> Any:
        return {k: v for k, v in check.items() if k not in IR_FIELDS} if isinstance(check, dict) else check

    return {
        **data,
        "check": strip(data.get("check")),
        "checks": [strip(r) for r in data.get("checks", [])],
    }


def progress(kind: str, data: dict[str, Any], t: float) -> dict[str, Any] | None:
    """The data a follower sees for one harness event, or None if it is not forwarded."""
    if kind not in FORWARDED:
        return None
    return {**(slim(data) if kind == "lowering" else data), "t": t}


# -- what may be served again ------------------------------------------------------------------


def reusable_result(result: RunResult) -> bool:
    """A status the code itself determines, not a fault of the harness."""
    return result.status in CACHEABLE and not (result.error and result.error.phase == "harness")


def trusted_execution(execution: Execution, *, cancelled: bool) -> bool:
    """The job ran to its own end: not stopped by us, not failed by the sandbox, its report readable."""
    return not (cancelled or execution.infra_error or execution.report_error)


# -- runs that could not end normally ----------------------------------------------------------


def internal_error(job: Job, reason: str) -> RunResult:
    """A run that failed through no fault of its code: status `error`, summary `internal error: …`."""
    return RunResult(
        status=RunStatus.ERROR,
        summary=f"internal error: {reason}",
        chip=job.chip,
        mode=job.mode,
        options=job.options,
    )


def lost_result(job: Job, losses: int) -> RunResult:
    """A run whose runner was lost (killed, or its host gone) `losses` times: not tried again."""
    times = "once" if losses == 1 else "twice" if losses == 2 else f"{losses} times"
    return internal_error(
        job,
        f"the runner executing this run was lost {times} (a runner host stopped mid-run); "
        "it was not tried again: run it once more",
    )


def no_runner_result(job: Job, pool: str) -> RunResult:
    """A run whose pool was left without a live runner."""
    return internal_error(
        job, f"no runner for pool {pool!r} is live any more, so this run could not finish; try again later"
    )


def facts(execution: Execution) -> str:
    """The raw facts of an execution, short enough for one log line."""
    kinds = [e.kind for e in execution.events]
    return (
        f"exit={execution.exit_code} signal={execution.signal} timed_out={execution.timed_out} "
        f"events={kinds[:40]} report_error={execution.report_error!r} stderr={execution.stderr[-500:]!r}"
    )
