"""A class run's time as the host measures it: the kernel's exported program, rerun where no user code runs.

The class board (`server.classroom.board`) believes a time only if the trusted side made it. On a
chip, the kernel's job of a class run (`Job.rerun`) exports the program of the case it timed; here,
after the checker passed every case, the host runs a rerun job on the same backend and chip
(`sandbox.harness.rerun`): the lesson's reference on inputs of a fresh seed, the program checked
against it and timed. Its one `rerun` event becomes the run's `host_timing`; a `rerun` event the
kernel's own process writes is dropped by the checker (`checking.CHECKER_KINDS`).

Where no rerun can be made on a chip, the event says why (the run did not pass, the program could not
be exported, was refused, or was wrong on the new inputs), and the run does not rank. A simulated run
gets no event: the board ranks it by the estimate its process reported, labelled as such.
"""

from __future__ import annotations

import logging
import math
import secrets
import threading
from dataclasses import replace

from sandbox.backends import checking
from sandbox.backends.base import Backend
from sandbox.limits import for_rerun
from sandbox.protocol import Event, Execution, Job, new_event
from sandbox.protocol.events import CaseChecked, ProgramExported, ProgramRerun, payload
from sandbox.protocol.job import SCRATCH_CASE_NAME

log = logging.getLogger(__name__)

NOT_PASSED = "not measured by the host: the run did not pass"
NOT_EXPORTED = "not measured by the host: the kernel's process sent no program"


def timed_by_host(backend: Backend, job: Job, execution: Execution, cancel: threading.Event) -> Execution:
    """`execution` without the kernel's `exported` event, with the host's `rerun` event for a class
    run whose lesson checks it (see the module doc)."""
    sent = [payload(e) for e in execution.events if e.kind == "exported"]
    execution = replace(execution, events=tuple(e for e in execution.events if e.kind != "exported"))
    lessons = job.entry is not None or job.reference_source is not None  # never a student's own reference
    asked = job.rerun and job.role == "kernel" and job.sweep is None and lessons
    # A simulated run has no time to measure: the board takes its (reported) estimate, and says so.
    if not asked or not execution.on_chip or cancel.is_set():
        return execution
    report = _rerun(backend, job, execution, sent[-1] if sent else None, cancel)
    return replace(execution, events=(*execution.events, new_event("rerun", **vars(report))))


def _rerun(
    backend: Backend, job: Job, execution: Execution, sent: ProgramExported | None, cancel: threading.Event
) -> ProgramRerun:
    if not _passed(execution):
        return _not(NOT_PASSED)
    if sent is None or not sent.program:
        reason = f"its program could not be exported: {sent.error}" if sent and sent.error else ""
        return _not(f"not measured by the host: {reason}" if reason else NOT_EXPORTED)
    timed = timed_case(job)
    if sent.case != timed:  # the host says which case is timed, never the kernel's process
        return _not(f"not measured by the host: its program is for another case than {timed!r}")
    rerun = rerun_job(job, sent, secrets.randbelow(2**31 - 2) + 1)
    if rerun is None:
        return _not("not measured by the host: the run has no reference to check its program against")
    found: list[Event] = []
    ran = backend.run(rerun, found.append, cancel)
    reports = [payload(e) for e in found if e.kind == "rerun"]
    if not reports:
        log.warning("job %s: the rerun ended without a report: %s", job.id, _facts(ran))
        return _not(f"not measured by the host: its rerun ended without a report ({_ending(ran)})")
    return _bounded(reports[-1])


def timed_case(job: Job) -> str:
    """The case a kernel's job on a chip times (`sandbox.harness.session`): the last it runs, the
    TPU-size one where the entry has one; a scratch file's only case."""
    if job.entry is None:
        return SCRATCH_CASE_NAME
    cases = job.entry.cases_for(job.mode)
    return cases[-1].name if cases else ""


def rerun_job(job: Job, sent: ProgramExported, seed: int) -> Job | None:
    """The rerun job of `job`: its reference's job (the lesson's code, never the student's) on the
    chip, with the program, the case and the seed; None for a job whose outputs nothing checks."""
    reference = checking.reference_job(job)
    if reference is None:
        return None
    return replace(
        reference,
        id=f"{job.id}-rerun",
        role="rerun",
        mode="tpu",
        limits=for_rerun(job.limits),
        inputs=(),
        rerun=False,
        program=sent.program,
        rerun_case=sent.case,
        rerun_seed=seed,
    )


def _passed(execution: Execution) -> bool:
    cases: list[CaseChecked] = [payload(e) for e in execution.events if e.kind == "case"]
    ended = any(e.kind == "done" for e in execution.events) and not any(
        e.kind == "error" for e in execution.events
    )
    return ended and bool(cases) and all(c.result.passed for c in cases)


def _bounded(report: ProgramRerun) -> ProgramRerun:
    """The rerun's report with times a kernel can take, else not passed: the rerun process runs no user
    Python, but what it reports is read like every job's report."""
    times = [t for t in (report.device_seconds, report.wall_median_seconds) if t is not None]
    if report.passed and (not times or not all(math.isfinite(t) and 0 < t < 3600 for t in times)):
        return replace(report, passed=False, reason="its rerun reported no usable time")
    return replace(report, reason=report.reason[:500], case=report.case[:200])


def _not(reason: str) -> ProgramRerun:
    return ProgramRerun(case="", seed=0, passed=False, reason=reason)


def _ending(execution: Execution) -> str:
    if execution.timed_out:
        return "it ran out of time"
    if execution.signal:
        return f"signal {execution.signal}"
    return f"exit code {execution.exit_code}"


def _facts(execution: Execution) -> str:
    return f"exit={execution.exit_code} signal={execution.signal} stderr={execution.stderr[-500:]!r}"
