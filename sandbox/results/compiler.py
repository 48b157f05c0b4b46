"""What the TPU compiler's verdict (the kernel job's lowering checks) makes of a run's status and summary.

A simulated run's kernel job checks, after its cases, that the kernel lowers for the job's chip with
interpret mode off (`sandbox.harness.session`): a kernel whose outputs match but that the compiler
rejects is `rejected`, and a construct the simulator cannot run is `unsupported` or `rejected` by
the same check. That verdict is the kernel process's own report (`lowering` event), so a process
can withhold it: one that owed it and ended without it is an `error` saying so (issue 41), never a
`passed` the cache could serve again or the class board rank. A process can still send a made-up
"lowers: true"; that, like its timings, is its word.
"""

from __future__ import annotations

from sandbox.protocol import ErrorInfo, Execution, Job, LoweringCheck, RunStatus
from sandbox.protocol.events import payload

UNREPORTED_TYPE = "UnreportedVerdict"
UNREPORTED = (
    "the TPU compiler's verdict was not reported: the kernel's process ended without sending the "
    "lowering check for {chip}, so whether this kernel compiles for a TPU is not known"
)
UNREPORTED_SUMMARY = (
    f"error: {UNREPORTED}; in the simulator the outputs match the reference ({{n}}/{{n}} cases)"
)


def owed(job: Job, execution: Execution) -> bool:
    """Whether the job's process was to send the TPU compiler's verdict: a run's kernel job (a sweep
    reports it per config; a reference's or a rerun's job lowers nothing) that the harness ran in the
    simulator, where it checks lowering after the cases (on a chip the compile is the verdict). The
    harness says which before it imports any user code: the first `versions` event is its own, and
    the host's `on_chip` overrules it."""
    if job.role != "kernel" or job.sweep is not None or execution.on_chip:
        return False
    first = next((e for e in execution.events if e.kind == "versions"), None)
    return first is not None and payload(first).interpret is True


def unreported(job: Job, execution: Execution) -> bool:
    """The verdict was owed, the job's report ended well (its `done`, no error, nothing stopped it)
    after a case was checked, and no `lowering` came: the harness sends it whenever the first case
    ran (`Session._after_cases`)."""
    ex = execution
    stopped = ex.infra_error or ex.report_error or ex.cancelled or ex.timed_out or ex.output_limit_hit
    if stopped or ex.cpu_limit_hit or ex.memory_limit_hit:
        return False
    kinds = {e.kind for e in ex.events}
    ended_well = "done" in kinds and "error" not in kinds and bool(kinds & {"case", "outputs"})
    return ended_well and "lowering" not in kinds and owed(job, ex)


def unreported_error(chip: str) -> ErrorInfo:
    message = UNREPORTED.format(chip=chip)
    return ErrorInfo(type=UNREPORTED_TYPE, message=message, traceback="", phase="check")


def rejected_summary(check: LoweringCheck, cases: int, simulated: bool = True) -> str:
    error = check.error
    why = f": {error.type}: {error.message}" if error else ""
    where = f" (line {error.line})" if error and error.line else ""
    if not simulated:
        return (
            f"rejected by the TPU compiler for {check.chip}{why}{where}; the simulator cannot run it "
            "either, so this kernel would not compile for a TPU"
        )
    return (
        f"rejected by the TPU compiler for {check.chip}{why}{where}; in the simulator the outputs match "
        f"the reference ({cases}/{cases} cases), but this kernel would not compile for a TPU"
    )


def lowering_suffix(
    status: RunStatus,
    mine: LoweringCheck | None,
    listed: tuple[LoweringCheck, ...],
    *,
    missing: str = "",
) -> str:
    """What the lowering checks add to the summary (the job's chip decides `rejected`; see
    `classify._checked`); `missing`: the chip whose verdict was owed and not reported."""
    if missing and status is not RunStatus.ERROR:  # an error says so itself
        return f"; {UNREPORTED.format(chip=missing)}"
    reports = {r.chip: r for r in (*listed, mine) if r is not None}
    rejected = [c for c, r in reports.items() if r.lowers is False]
    unchecked = [c for c, r in reports.items() if r.lowers is None]
    warned = {c: len(r.warnings) for c, r in reports.items() if r.warnings}
    parts = []
    if status is RunStatus.REJECTED:
        rejected = [c for c in rejected if mine is None or c != mine.chip]
        if rejected:
            parts.append(f"also rejected for {', '.join(rejected)}")
    elif rejected:
        parts.append(f"rejected by the TPU compiler for {', '.join(rejected)}")
    if len(warned) == 1:
        ((chip, count),) = warned.items()
        parts.append(f"{count} chip-check warning{'s' if count > 1 else ''} for {chip}")
    elif warned:
        parts.append(f"chip-check warnings for {', '.join(warned)}")
    if unchecked:
        parts.append(f"TPU lowering not checked for {', '.join(unchecked)}")
    return "".join(f"; {p}" for p in parts)


def unsupported(error: ErrorInfo, check: LoweringCheck | None) -> tuple[RunStatus, str, str | None]:
    """A construct the simulator cannot run: whose problem it is, the TPU compiler (lowering check) decides."""
    where = f" (line {error.line})" if error.line else ""
    if check is not None and check.lowers is False:
        return RunStatus.REJECTED, rejected_summary(check, 0, simulated=False), None
    if check is not None and check.lowers:
        verdict = f"the TPU compiler accepts it for {check.chip}"
    else:
        verdict = "the TPU lowering check could not tell whether it compiles for a TPU"
    return (
        RunStatus.UNSUPPORTED,
        f"unsupported by the simulator: {error.type}: {error.message}{where}; {verdict}",
        None,
    )
