"""The one way a job becomes a result: run it on a backend, forward what its followers may see,
classify the raw facts, and decide whether the result may be served again for an identical job.

Every caller goes through here: the in-process run queue (`server.queue.engine`), the Redis workers
(`sandbox.worker.loop`), the Redis web side for runs ended before they ran, and the CLI. So a
status, a forwarded event and a cached answer mean the same thing whichever queue a run took
(`tests/unit/test_architecture.py` checks that no other module classifies).

Also here, because they are part of "finishing a run": which protocol events are forwarded and in
what shape (the harness's own `done` is replaced by the queue's, which carries the whole result,
and the trace is folded into the result only), how much of it (every queue keeps what it forwards
while a run is kept, so a job's events are capped per string, per event and per run: a job cannot
fill the web server or Redis through its report), and the results of runs that could not end
normally (our faults, told apart from the user's code).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from sandbox.backends import both, checking, pairing, references, reported, rerun
from sandbox.backends.base import Backend, StopJob
from sandbox.backends.pairing import RunSlots
from sandbox.backends.phases import PhaseClock, with_phases
from sandbox.protocol import FORWARDED_KINDS, Event, Execution, Job, RunResult, RunStatus, never_ran
from sandbox.results import compiler
from sandbox.results.classify import classify

log = logging.getLogger(__name__)

# The kinds a follower sees while a run runs: the protocol's one list (`sandbox.protocol.events`).
FORWARDED = FORWARDED_KINDS
# IR texts can be hundreds of KB per chip: forwarded events carry verdicts only, the result has the texts.
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
        RunStatus.NO_KERNEL,
        RunStatus.UNSUPPORTED,
    }
)

# A progress event's strings (a phase, a case name) are a few words; the harness's own are far shorter.
PROGRESS_CHARS = 200
# Any other forwarded string (an error message, a mismatch text): the result keeps the whole text.
EVENT_CHARS = 4000
# A forwarded event larger than this after clipping is not forwarded (the result carries it).
EVENT_BYTES = 64 << 10
# What one run may forward in all, and of it in `progress` events; later ones are dropped (the
# `done` event is the queue's own), so a flood of progress still leaves room for the milestones.
RUN_BYTES = 1 << 20
PROGRESS_BYTES = 256 << 10

# Called with (kind, data) for every event a follower may see, from the backend's thread.
Forward = Callable[[str, dict[str, Any]], None]


@dataclass(frozen=True)
class Finished:
    """A job's end as every queue needs it: the result, whether it may be reused, whose fault."""

    result: RunResult
    reusable: bool  # an identical job may be answered with this result
    failure: bool  # the sandbox failed to run it (counted in the metrics)
    wall_seconds: float


def execute(
    backend: Backend, job: Job, cancel: threading.Event, forward: Forward, slots: RunSlots | None = None
) -> Finished:
    """Run `job` to its end on `backend`; never raises for anything the job or the backend does.

    A job that checks outputs has a reference's job too (`sandbox.backends.checking`), and its
    verdicts are made here, outside both jobs' processes. `slots`: the calling queue's slots; the
    run holds one, and its reference's job borrows a second if one is free right now
    (`sandbox.backends.pairing`). Without them the two jobs run one after the other.
    """
    if slots is not None and not slots.hold(cancel):
        return finish(job, never_ran(None, cancelled=True), cancelled=True)
    try:
        if job.mode == "both":
            return _execute_both(backend, job, cancel, forward, slots)
        return _execute(backend, job, cancel, forward, slots)
    finally:
        if slots is not None:
            slots.give()


def _execute_both(
    backend: Backend, job: Job, cancel: threading.Event, forward: Forward, slots: RunSlots | None
) -> Finished:
    """Mode `both` (`sandbox.backends.both`): the chip's run, then the simulator's, in this run's slot."""
    started, failed = time.monotonic(), False

    def run_one(one: Job, sink: Forward, outputs: list[Event]) -> tuple[RunResult, bool]:
        nonlocal failed
        if cancel.is_set():
            finished = finish(one, never_ran(None, cancelled=True), cancelled=True)
        else:
            finished = _execute(backend, one, cancel, sink, slots, outputs)
        failed = failed or finished.failure
        return finished.result, finished.reusable

    result, reusable = both.run_both(job, forward, run_one)
    return Finished(result=result, reusable=reusable, failure=failed, wall_seconds=time.monotonic() - started)


def _execute(
    backend: Backend,
    job: Job,
    cancel: threading.Event,
    forward: Forward,
    slots: RunSlots | None,
    outputs: list[Event] | None = None,
) -> Finished:
    """One job to its end; `outputs`, when given, also gets the outputs its kernel's process sent."""
    started = time.monotonic()
    clock = PhaseClock(started)
    try:
        on_disk = references.recall(backend, job)  # a kept reference file, into the backend's memory
        earlier = checking.kept(backend, job)  # looked up once: whether the reference is this run's own
        reference = pairing.start_reference(backend, job, cancel, slots, earlier)
        clock.reference_done()
        if isinstance(reference, checking.ReferenceFailed):
            return _reference_failed(job, reference, cancelled=cancel.is_set())
        checker = pairing.checker_for(job, reference)
        budget = Budget(job.id)

        def deliver(seen: Event) -> None:
            data = forwarded(seen.kind, seen.data, seen.t)
            if data is not None and budget.allows(seen.kind, data):
                forward(seen.kind, data)

        def sink(event: Event) -> None:
            if event.kind == "log":  # internal text (raw tracebacks): the host's log only
                log.info("job %s: job log: %s", job.id, str(event.data.get("text", ""))[:20000])
            if outputs is not None and event.kind == "case_outputs":
                outputs.append(event)
            for seen in checker.see(event):
                clock.saw(seen.kind)
                deliver(seen)
            if checker.broken:  # no verdict can come of the rest: end the job, free its slot now
                raise StopJob(checker.broken)

        # A computed reference's inputs: none to make (a kept one's printed text is not this run's).
        given = references.with_inputs(job, reference, reused=earlier is not None and reference is earlier)
        ran = backend.run(given, sink, pairing.kernel_cancel(reference, cancel))
        failed = checker.settle()
        if failed is not None:
            return _reference_failed(job, failed, cancelled=cancel.is_set())
        for seen in checker.flush():  # outputs that waited for a reference computed beside them
            clock.saw(seen.kind)
            deliver(seen)
        execution = replace(checker.rewrite(ran), reference_kept=earlier is not None and reference is earlier)
        execution = rerun.timed_by_host(backend, job, execution, cancel)  # a class run's time, by the host
        if not on_disk:
            references.remember(backend, job)
    except Exception as exc:  # a backend fault: the run fails cleanly, the caller carries on
        log.exception("sandbox backend failed for job %s", job.id)
        execution = never_ran(
            f"the sandbox failed ({type(exc).__name__})", wall_seconds=time.monotonic() - started
        )
    finished = finish(job, execution, cancelled=cancel.is_set())
    return replace(finished, result=with_phases(finished.result, clock.phases()))


def _reference_failed(job: Job, failed: checking.ReferenceFailed, *, cancelled: bool) -> Finished:
    """A scratch file's reference that failed is the user's result; a catalog reference's, our fault."""
    if job.entry is None or cancelled or failed.execution.timed_out:
        return finish(job, failed.execution, cancelled=cancelled)  # the kernel's job never ran
    log.error("job %s: the catalog reference failed: %s", job.id, facts(failed.execution))
    return Finished(
        result=internal_error(
            job, f"the catalog entry's reference could not run: {_reference_cause(failed)}"
        ),
        reusable=False,
        failure=True,
        wall_seconds=failed.execution.wall_seconds,
    )


# Lines of a failed catalog reference's stderr shown with its cause (it ran our reference and JAX only).
REFERENCE_LOG_LINES, REFERENCE_LOG_CHARS = 3, 600


def _reference_cause(failed: checking.ReferenceFailed) -> str:
    """Why a catalog reference's job failed, in its classified words and the end of its log."""
    summary = finish(failed.job, failed.execution, cancelled=False).result.summary
    lines = [line.strip() for line in failed.execution.stderr.splitlines() if line.strip()]
    tail = " | ".join(lines[-REFERENCE_LOG_LINES:])[-REFERENCE_LOG_CHARS:]
    return summary + (f"; its log ends: {tail}" if tail else "")


def finish(job: Job, execution: Execution, *, cancelled: bool) -> Finished:
    """Classify raw facts; a classifier fault is our error, logged with the facts, never raised. Every
    string of the result is valid Unicode (a job's report may carry a lone surrogate)."""
    owed = False  # a result made without a report its process owed (the compiler's verdict): not reused
    try:
        result = reported.valid_unicode(classify(job, execution))
        owed = compiler.unreported(job, execution)
    except Exception:
        log.exception("job %s: the result could not be classified; raw facts: %s", job.id, facts(execution))
        result = internal_error(job, "the job's report could not be read")
    if execution.report_error:
        log.warning(
            "job %s: unreadable report (%s); raw facts: %s", job.id, execution.report_error, facts(execution)
        )
    return Finished(
        result=result,
        reusable=trusted_execution(execution, cancelled=cancelled) and reusable_result(result) and not owed,
        failure=bool(execution.infra_error),
        wall_seconds=execution.wall_seconds,
    )


def cancelled_before_start(job: Job) -> RunResult:
    """The result of a run cancelled while it still waited in a queue."""
    return finish(job, never_ran(None, cancelled=True), cancelled=True).result


# -- what followers see ------------------------------------------------------------------------


def slim(data: dict[str, Any]) -> dict[str, Any]:
    """A lowering event without its IR texts (in its lowering checks, one per chip)."""

    def strip(record: Any) -> Any:  # one chip's lowering check
        return {k: v for k, v in record.items() if k not in IR_FIELDS} if isinstance(record, dict) else record

    return {
        **data,
        "check": strip(data.get("check")),
        "checks": [strip(r) for r in data.get("checks", [])],
    }


def forwarded(kind: str, data: dict[str, Any], t: float) -> dict[str, Any] | None:
    """The data a follower sees for one harness event (its strings clipped), or None if not forwarded."""
    if kind not in FORWARDED:
        return None
    chars = PROGRESS_CHARS if kind == "progress" else EVENT_CHARS
    return {**clip(slim(data) if kind == "lowering" else data, chars), "t": reported.event_time(t)}


def clip(value: Any, chars: int) -> Any:
    """`value` (decoded JSON) with every string in it cut to `chars` characters (an ellipsis says where)."""
    if isinstance(value, str) and len(value) > chars:
        return value[: chars - 1] + "…"
    if isinstance(value, dict):
        return {k: clip(v, chars) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clip(v, chars) for v in value]
    return value


class Budget:
    """The bytes one run may still forward: an event over `EVENT_BYTES`, past `PROGRESS_BYTES` of
    progress or past `RUN_BYTES` in all is dropped (logged once); the run's result is whole anyway."""

    def __init__(self, job_id: str) -> None:
        self.job_id, self.left, self.progress_left, self.warned = job_id, RUN_BYTES, PROGRESS_BYTES, False

    def allows(self, kind: str, data: dict[str, Any]) -> bool:
        size = len(json.dumps(data))
        room = min(self.left, self.progress_left) if kind == "progress" else self.left
        if size <= min(EVENT_BYTES, room):
            self.left -= size
            self.progress_left -= size if kind == "progress" else 0
            return True
        if not self.warned:
            log.warning(
                "job %s: a %s event of %d bytes was not forwarded (over the caps)", self.job_id, kind, size
            )
            self.warned = True
        return False


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
