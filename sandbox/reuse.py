"""Which results may be served again for an identical job: only what the job's own code decided.

Not timeouts, limits or cancellations (they depend on the machine's load at the time), not our own
faults (an infrastructure error, an unreadable report, a broken harness). The in-process run queue
and the Redis workers both ask here, so a cached answer means the same thing in either.
"""

from __future__ import annotations

from sandbox.protocol import Execution, RunResult, RunStatus

CACHEABLE = frozenset(
    {RunStatus.PASSED, RunStatus.MISMATCH, RunStatus.ERROR, RunStatus.RAN, RunStatus.REJECTED}
)


def reusable_result(result: RunResult) -> bool:
    """A status the code itself determines, not a fault of the harness."""
    return result.status in CACHEABLE and not (result.error and result.error.phase == "harness")


def trusted_execution(execution: Execution, *, cancelled: bool) -> bool:
    """The job ran to its own end: not stopped by us, not failed by the sandbox, its report readable."""
    return not (cancelled or execution.infra_error or execution.report_error)


def reusable(result: RunResult, execution: Execution, *, cancelled: bool) -> bool:
    return trusted_execution(execution, cancelled=cancelled) and reusable_result(result)
