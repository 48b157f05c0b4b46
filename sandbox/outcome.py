"""The results of runs that could not end normally: our faults, told apart from the user's code."""

from __future__ import annotations

from sandbox.protocol import Job, RunResult, RunStatus


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
