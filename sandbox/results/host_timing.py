"""A class run's `HostTiming`, from the host's `rerun` event (`sandbox.backends.rerun`)."""

from __future__ import annotations

from sandbox.protocol import Event, HostTiming, Job
from sandbox.protocol.events import ProgramRerun, payload

MEASURED = (
    "measured by the host: the program your kernel's process exported, checked again against the "
    "lesson's reference on new inputs and timed on a {chip} by a process that runs no user code"
)


def host_timing(job: Job, events: tuple[Event, ...]) -> HostTiming | None:
    """The run's host timing; None for a run that did not ask for one (`Job.rerun`)."""
    reports: list[ProgramRerun] = [payload(e) for e in events if e.kind == "rerun"]
    if not reports:
        return None
    report = reports[-1]
    if not report.passed:
        return HostTiming(seconds=None, note=report.reason, chip=job.chip, case=report.case)
    return HostTiming(
        seconds=report.device_seconds if report.device_seconds is not None else report.wall_median_seconds,
        note=MEASURED.format(chip=job.chip),
        chip=job.chip,
        case=report.case,
        device_seconds=report.device_seconds,
        wall_median_seconds=report.wall_median_seconds,
        runs=report.runs,
    )
