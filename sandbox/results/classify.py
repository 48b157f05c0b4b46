"""`classify()`: the one pure function from raw process facts to a user-visible `RunResult`.

The order of the checks is the contract: our own stops (cancel, wall clock, output flood) explain a
run better than whatever the child managed to report before it was killed; then kernel-enforced
limits (CPU and memory always; processes and scratch disk only when the run did not finish
cleanly, since a program may try a fork or a write, be refused and carry on); then what the
harness itself said; then how the process ended.

A run `passed` only when the simulator and the TPU compiler both accept it: a kernel whose outputs
match but that the lowering check for the job's chip rejects is `rejected`, and one whose process
never sent that check is an `error` that says the compiler's verdict was not reported
(`sandbox.results.compiler`). A timeout says how far the kernel got (the harness's last `progress`
event) and what interpret mode costs per step. Where the kernel ran, the result's mode and whether
its times are a chip's, is the host's word (`sandbox.results.placement`), never the process's.
"""

from __future__ import annotations

import re
import signal
from dataclasses import replace
from typing import Any

from sandbox.jobs import sweeps
from sandbox.protocol import (
    CaseResult,
    ConfigResult,
    ErrorInfo,
    Estimate,
    Event,
    Execution,
    Job,
    LoweringCheck,
    MemoryUse,
    OutputCheck,
    OutputSummary,
    RunResult,
    RunStatus,
    Timing,
    Trace,
    Versions,
)
from sandbox.protocol.events import Failed, LoweringChecked, ProgressReported, payload
from sandbox.results import checked_by as by
from sandbox.results import compiler, placement
from sandbox.results.host_timing import host_timing

# CSI / OSC escape sequences and C0 controls other than tab and newline: shown as text, never obeyed.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)?|\x1b.|[\x00-\x08\x0b-\x1f\x7f]"
)


def sanitize(text: str) -> str:
    return _ESCAPES.sub("", text.replace("\r\n", "\n"))


NO_KERNEL_SUMMARY = (
    "correct, but no Pallas kernel ran: the outputs match the reference ({n}/{n} cases), but the code "
    "computed them without a pallas_call or pl.kernel, and this exercise asks for a Pallas kernel"
)


def classify(job: Job, execution: Execution) -> RunResult:
    facts = _Facts(execution.events)
    facts.nan_fill = job.options.uninitialized_memory == "nan"
    facts.unreported = compiler.unreported(job, execution)
    status, summary, limit = _verdict(job, execution, facts)
    sweep = sweeps.gather(job, facts.configs)
    if sweep is not None:
        status, summary = sweeps.verdict(sweep, status, summary)
    missing = job.chip if facts.unreported else ""
    summary += compiler.lowering_suffix(status, facts.lowering, facts.lowerings, missing=missing)
    error = (
        compiler.unreported_error(job.chip) if facts.unreported and status is RunStatus.ERROR else facts.error
    )
    memory = facts.memory
    if memory is not None and execution.peak_rss_bytes > memory.peak_rss_bytes:
        memory = _with_rss(memory, execution.peak_rss_bytes)
    return RunResult(
        status=status,
        summary=summary,
        chip=job.chip,
        mode=placement.mode(job, execution, started=facts.started),
        options=job.options,
        cases=facts.cases,
        outputs=facts.outputs,
        error=error,
        timing=placement.timing(facts.timing, on_chip=execution.on_chip),
        memory=memory,
        stdout=sanitize(execution.stdout),
        stderr=sanitize(execution.stderr),
        stdout_truncated=execution.stdout_truncated,
        stderr_truncated=execution.stderr_truncated,
        versions=placement.versions(facts.versions, job, on_chip=execution.on_chip),
        limit=limit,
        wall_seconds=round(execution.wall_seconds, 4),
        lowering=facts.lowering,
        lowerings=facts.lowerings,
        chip_warnings=facts.chip_warnings,
        trace=facts.trace,
        estimate=facts.estimate,
        sweep=sweep,
        checked_by=_checked_by(job, facts, kept=execution.reference_kept),
        ran_on_chip=execution.on_chip,
        host_timing=host_timing(job, execution.events),
    )


def _checked_by(job: Job, facts: _Facts, *, kept: bool) -> str:
    if not facts.cases:
        return ""
    if job.entry is not None:
        return by.CHECKED_BY_CATALOG
    if job.reference_source is not None:
        return by.CHECKED_BY_LESSON
    return by.CHECKED_BY_AUTHOR_KEPT if kept else by.CHECKED_BY_AUTHOR


class _Facts:
    """What the child reported, from its protocol events (each already checked against its schema)."""

    def __init__(self, events: tuple[Event, ...]) -> None:
        by_kind: dict[str, list[Any]] = {}
        for event in events:
            by_kind.setdefault(event.kind, []).append(payload(event))
        self.started = "started" in by_kind
        self.done = "done" in by_kind
        self.cases: tuple[CaseResult, ...] = tuple(e.result for e in by_kind.get("case", []))
        self.outputs: tuple[OutputSummary, ...] = tuple(
            o for e in by_kind.get("outputs", []) for o in e.outputs
        )
        errors: list[Failed] = by_kind.get("error", [])
        self.error: ErrorInfo | None = errors[0].error if errors else None
        self.memory_error = bool(errors and errors[0].memory)
        self.timing: Timing | None = _last(by_kind, "timing", "timing")
        self.memory: MemoryUse | None = _last(by_kind, "memory", "memory")
        self.versions: Versions | None = _last(by_kind, "versions", "versions")
        self.trace: Trace | None = _last(by_kind, "trace", "trace")
        self.estimate: Estimate | None = _last(by_kind, "estimate", "estimate")
        self.configs: tuple[ConfigResult, ...] = tuple(e.result for e in by_kind.get("config", []))
        checked: list[LoweringChecked] = by_kind.get("lowering", [])
        self.lowering: LoweringCheck | None = checked[-1].check if checked else None
        self.lowerings: tuple[LoweringCheck, ...] = checked[-1].checks if checked else ()
        self.chip_warnings: tuple[str, ...] = checked[-1].warnings if checked else ()
        self.nan_fill = True  # the simulator fills uninitialised memory with NaN (the job's option)
        self.unreported = False  # the TPU compiler's verdict was owed and never came (`compiler.unreported`)
        progress: list[ProgressReported] = by_kind.get("progress", [])
        self.progress: ProgressReported | None = progress[-1] if progress else None


def _last(by_kind: dict[str, list[Any]], kind: str, attribute: str) -> Any:
    found = by_kind.get(kind, [])
    return getattr(found[-1], attribute) if found else None


def _verdict(job: Job, ex: Execution, facts: _Facts) -> tuple[RunStatus, str, str | None]:
    limits = job.limits
    if ex.infra_error:
        return RunStatus.ERROR, f"internal error: {ex.infra_error}", None
    if ex.report_error:
        return RunStatus.ERROR, f"error: the job's report could not be read ({ex.report_error})", None
    if ex.cancelled:
        return RunStatus.CANCELLED, f"cancelled after {ex.wall_seconds:.1f} s", None
    if ex.timed_out:
        return (
            RunStatus.TIMEOUT,
            f"timeout: stopped after the {limits.wall_seconds:g} s wall-clock limit {_timeout_progress(facts)}",
            "wall_seconds",
        )
    if ex.output_limit_hit:
        return (
            RunStatus.RESOURCE_LIMIT,
            f"output limit: stopped after printing more than {_size(limits.output_kill_bytes)}",
            "output_bytes",
        )
    if ex.cpu_limit_hit:
        return (
            RunStatus.RESOURCE_LIMIT,
            f"CPU limit: used more than {limits.cpu_seconds} s of CPU",
            "cpu_seconds",
        )
    if ex.memory_limit_hit or facts.memory_error:
        return (
            RunStatus.RESOURCE_LIMIT,
            f"memory limit: the job needed more than {_size(limits.memory_bytes)}" + _because(facts),
            "memory_bytes",
        )
    clean = facts.done and facts.error is None
    if ex.pids_limit_hit and not clean:
        return (
            RunStatus.RESOURCE_LIMIT,
            f"process limit: the job tried to run more than {limits.processes} processes and threads"
            + _because(facts),
            "processes",
        )
    if ex.disk_limit_hit and not clean:
        return (
            RunStatus.RESOURCE_LIMIT,
            f"disk limit: the job filled its {_size(limits.scratch_bytes)} of scratch space"
            + _because(facts),
            "scratch_bytes",
        )
    if facts.error is not None:
        if facts.error.limitation:
            return compiler.unsupported(facts.error, facts.lowering)
        if facts.error.type == "VmemLimitExceeded":  # the chip's E1001 (`harness.errors.chip`): as simulated
            refused = f"rejected by the TPU compiler for {job.chip}: {_error_summary(facts.error)}"
            return RunStatus.REJECTED, refused, None
        return RunStatus.ERROR, _error_summary(facts.error), None
    if not facts.started:
        return RunStatus.ERROR, f"internal error: the sandbox harness did not start ({_ending(ex)})", None
    if not facts.done:
        return RunStatus.ERROR, f"the job ended before finishing: {_ending(ex)} ({_progress(facts)})", None
    return _checked(job, facts)


def _checked(job: Job, facts: _Facts) -> tuple[RunStatus, str, str | None]:
    if not facts.cases:
        return RunStatus.RAN, f"ran: {len(facts.outputs)} output(s), no reference to check against", None
    failed = [c for c in facts.cases if not c.passed]
    if not failed:
        n = len(facts.cases)
        expects = job.entry.expects_kernel if job.entry is not None else job.expects_kernel
        if expects and any(c.kernels == 0 for c in facts.cases):
            return RunStatus.NO_KERNEL, NO_KERNEL_SUMMARY.format(n=n), None
        mine = facts.lowering
        if mine is not None and mine.lowers is False:
            return RunStatus.REJECTED, compiler.rejected_summary(mine, n), None
        if facts.unreported:
            return RunStatus.ERROR, compiler.UNREPORTED_SUMMARY.format(chip=job.chip, n=n), None
        worst = max((o.max_abs_error or 0.0 for c in facts.cases for o in c.outputs), default=0.0)
        # A passing output's note says how it was checked (one too large to send whole: `verdict.sums`).
        how = next((f"; {o.name}: {o.note}" for c in facts.cases for o in c.outputs if o.note), "")
        return (
            RunStatus.PASSED,
            f"passed: {n}/{n} cases match the reference (max abs error {worst:.3g}){how}",
            None,
        )
    summary = _mismatch_summary(failed[0], len(failed), len(facts.cases))
    return RunStatus.MISMATCH, summary + _nan_hint(failed[0], facts.nan_fill), None


def _nan_hint(case: CaseResult, nan_fill: bool) -> str:
    """Where the simulator fills unwritten memory with NaN, NaN in an output means "never written"."""
    bad = next((o for o in case.outputs if not o.passed), None)
    if not nan_fill or bad is None or not bad.nonfinite_where.startswith("NaN") or case.races:
        return ""
    return (
        ". NaN marks memory the kernel never wrote (the simulator fills it with NaN), or values computed "
        "from it, such as an accumulator that was never zeroed"
    )


def _mismatch_summary(case: CaseResult, failed: int, total: int) -> str:
    if case.races:
        # Outputs of a racy kernel may well match on the simulator; the race is the finding.
        return (
            f"mismatch: data race detected ({failed}/{total} cases failed); "
            f"case {case.name!r}: {case.races[0].summary}"
        )
    head = f"mismatch: {failed}/{total} cases differ from the reference; case {case.name!r}"
    bad = next((o for o in case.outputs if not o.passed), None)
    if bad is None:
        return f"{head}: {case.note or 'outputs missing'}"
    if bad.note and bad.mismatch_count == 0:
        return f"{head}: {bad.name}: {bad.note}"
    extra = f"; {case.note}" if case.note else ""
    dtype = f" ({bad.note})" if bad.note else ""
    return f"{head}: {bad.name} differs in {bad.mismatch_count:,} of {bad.total:,} elements{_errors(bad)}{dtype}{extra}"


def _errors(bad: OutputCheck) -> str:
    """How an output's mismatches split between NaN/Inf (and where) and finite errors."""
    finite = bad.mismatch_count - bad.nonfinite_mismatches
    err = f"max abs error {bad.max_abs_error:.3g}" if bad.max_abs_error is not None else ""
    if not bad.nonfinite_mismatches:
        return f", {err}" if err else ""
    where = bad.nonfinite_where or "NaN or Inf"
    if finite <= 0:
        return f": all {where}"
    return f": {bad.nonfinite_mismatches:,} of them {where}; the other {finite:,}: {err or 'finite'}"


def _error_summary(error: ErrorInfo) -> str:
    where = f" (line {error.line})" if error.line else ""
    phase = f" in {error.phase}" if error.phase else ""
    return f"error{phase}: {error.type}: {error.message}{where}"


def _because(facts: _Facts) -> str:
    return f" ({facts.error.message})" if facts.error else ""


def _timeout_progress(facts: _Facts) -> str:
    """How far the kernel got, with interpret mode's cost per step and what to change."""
    p = facts.progress
    if not p or p.phase not in ("kernel", "timing"):
        return f"({_progress(facts)})"
    steps, dmas, seconds = p.grid_steps, p.dmas, p.seconds
    ops = p.ref_ops + p.semaphore_ops + p.block_copies
    what = "running the kernel" if p.phase == "kernel" else "timing the kernel"
    if not (steps or dmas or ops):
        return f"while compiling and starting the kernel (case {p.case!r}): no step had run {seconds:.1f} s into it"
    done = [f"{steps:,} grid steps" if steps else "", f"{dmas:,} DMAs" if dmas else ""]
    done.append(f"{ops:,} ref and semaphore operations")
    unit, count = ("grid step", steps) if steps else (("DMA", dmas) if dmas else ("operation", ops))
    return (
        f"while {what} (case {p.case!r}): {', '.join(d for d in done if d)} in {seconds:.1f} s, "
        f"about {seconds / count * 1e3:.3g} ms per {unit}. Interpret mode runs every ref access, DMA "
        "and semaphore operation as a host callback of about 1–2 ms, so the run time grows with the "
        "number of steps: bigger blocks mean fewer steps"
    )


def _progress(facts: _Facts) -> str:
    if facts.cases:
        return f"{len(facts.cases)} case(s) checked"
    return "user code was running" if facts.started else "before the harness started"


def _ending(ex: Execution) -> str:
    if ex.signal is not None:
        name = (
            signal.Signals(ex.signal).name
            if ex.signal in signal.Signals._value2member_map_
            else str(ex.signal)
        )
        hint: dict[int, str] = {
            signal.SIGSEGV: "a crash",
            signal.SIGABRT: "an abort",
            signal.SIGKILL: "killed, e.g. out of memory",
            signal.SIGSYS: "a system call the sandbox forbids",
        }
        return f"killed by signal {name}" + (f" ({hint[ex.signal]})" if ex.signal in hint else "")
    return f"exit code {ex.exit_code}"


def _with_rss(memory: MemoryUse, rss: int) -> MemoryUse:
    return replace(memory, peak_rss_bytes=rss)


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:g} {unit}"
    return f"{n} bytes"
