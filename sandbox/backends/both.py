"""Mode `both`, on a TPU host: one run, the kernel's job natively and simulated as the host's chip.

The run's reference is computed once (the second job finds it kept). The chip's job runs first, and
its result is the run's (its cases, timing, memory); the simulator's job then runs on a CPU slot with
the same inputs, and the result carries both verdicts side by side (`SideBySide`): whether they
agree, each simulated output checked against the chip's at the run's tolerance, the element where
they differ most, and the time model's estimate beside the chip's measured time. What a kernel author
on a TPU VM wants before trusting either: the simulator is what every student without a chip sees.

Followers see the chip's run live; the simulator's is announced by one progress event and shown in
the result. The outputs compared are what each kernel's process sent the checker (`case_outputs`),
decoded here on the host like any verdict (`sandbox.verdict`), never in a process that ran user code.
They are kept until the run ends: at most two jobs' reports, each capped at `MAX_REPORT_BYTES`
(`sandbox.backends.watch` ends a job that writes more).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from sandbox.protocol import CaseDiff, Event, Job, OutputCheck, RunResult, RunStatus, SideBySide, Tolerance
from sandbox.protocol.events import CaseRan, payload
from sandbox.verdict import arrays, digests
from sandbox.verdict.compare import compare
from sandbox.verdict.tolerances import output_tolerance

# `execute`'s one run: the job, where to forward its events, and where to keep its raw outputs.
Forward = Callable[[str, dict[str, Any]], None]
RunOne = Callable[[Job, Forward, list[Event]], tuple[RunResult, bool]]
Outputs = dict[int, list[tuple[str, np.ndarray]]]  # per case index: each output's name and values
# A case index a kernel's process may report: a catalog entry has a handful of cases, a scratch file one.
MAX_CASES = 1024

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Side:
    """One of the two runs: its result, and the outputs its kernel's process sent, per case index."""

    result: RunResult
    outputs: Outputs


def run_both(job: Job, forward: Forward, run_one: RunOne) -> tuple[RunResult, bool]:
    """The chip's result with the simulator's beside it, and whether it may be served again."""
    chip_events: list[Event] = []
    chip_result, chip_reusable = run_one(replace(job, mode="tpu"), forward, chip_events)
    if chip_result.status is RunStatus.CANCELLED:
        return chip_result, False
    # A progress event as the harness sends them (`ProgressReported`): the page says what runs now.
    forward("progress", {"phase": f"simulating it as a {job.chip}", "case": "", "seconds": 0.0, "t": 0.0})
    sim_events: list[Event] = []
    # An id of its own (the backends name a job's files and cgroup by it), within the pool's 64 characters.
    simulated_job = replace(job, id=f"{job.id[:56]}-sim", mode="interpret")
    sim_result, sim_reusable = run_one(simulated_job, _quiet, sim_events)
    chip = Side(chip_result, _outputs(chip_events))
    simulated = Side(sim_result, _outputs(sim_events))
    try:
        both = side_by_side(chip, simulated, job)
    except Exception:  # ours: the chip's result stands without the comparison, never a raise
        log.exception("job %s: the two runs' outputs could not be compared", job.id)
        return chip_result, False
    return replace(chip_result, both=both), chip_reusable and sim_reusable


def side_by_side(chip: Side, simulated: Side, job: Job) -> SideBySide:
    declared = job.entry.tolerances if job.entry is not None else {}
    cases: list[CaseDiff] = []
    for index in sorted(set(chip.outputs) & set(simulated.outputs)):
        got, want = simulated.outputs[index], chip.outputs[index]
        checks = tuple(
            compare(name, got[i][1], w, _tolerance(name, w, declared, chip.result, index))
            for i, (name, w) in enumerate(want)
            if i < len(got)
        )
        name = chip.result.cases[index].name if 0 <= index < len(chip.result.cases) else f"case {index}"
        cases.append(CaseDiff(name=name, outputs=checks))
    largest, amount = _largest(cases, chip, simulated)
    unsimulated = len(chip.result.cases) - len(cases)
    if unsimulated > 0 and cases:  # a catalog case at TPU size, run on the chip only
        largest += f"; {unsimulated} case(s) ran on the chip only (TPU-only sizes)"
    timed = chip.result.timing.case if chip.result.timing is not None else ""
    return SideBySide(
        chip_status=chip.result.status,
        chip_summary=chip.result.summary,
        simulated_status=simulated.result.status,
        simulated_summary=simulated.result.summary,
        agree=chip.result.status is simulated.result.status,
        cases=tuple(cases),
        largest=largest,
        largest_abs_difference=amount,
        estimated_seconds=_estimate_of(timed, chip.result, simulated.result),
        measured_seconds=chip.result.timing.device_seconds if chip.result.timing is not None else None,
        simulated_wall_seconds=simulated.result.wall_seconds,
        timed_case=timed,
    )


def _estimate_of(case: str, chip: RunResult, simulated: RunResult) -> float | None:
    """The model's estimate of the case the chip timed: the chip run's own, or the simulated run's when
    it timed the same case (a run estimates the case it times); None rather than another case's."""
    for result in (chip, simulated):
        if result.estimate is not None and result.timing is not None and result.timing.case == case:
            return result.estimate.seconds
    return None


def _tolerance(
    name: str, chip_output: np.ndarray, declared: dict[str, Tolerance], chip: RunResult, index: int
) -> Tolerance:
    """The tolerance the run checked this output with (the chip's case says), else the declared one."""
    if 0 <= index < len(chip.cases):
        for check in chip.cases[index].outputs:
            if check.name == name and check.tolerance is not None:
                return check.tolerance
    return output_tolerance(name, str(chip_output.dtype), declared)


def _largest(cases: list[CaseDiff], chip: Side, simulated: Side) -> tuple[str, float | None]:
    """Where the two runs' outputs differ most: the case, the output, the element and both values."""
    if not cases:
        return "", None
    best: tuple[float, str, int, OutputCheck] | None = None
    for case in cases:
        for number, check in enumerate(case.outputs):
            amount = check.max_abs_error
            if amount is not None and (best is None or amount > best[0]):
                best = (amount, case.name, number, check)
    if best is None:
        shapes = all(c.shape == c.expected_shape for case in cases for c in case.outputs)
        return ("no finite element to compare" if shapes else "the outputs' shapes differ"), None
    amount, case_name, number, check = best
    if amount == 0:
        differ = sum(c.mismatch_count for case in cases for c in case.outputs)
        same = "identical outputs" if not differ else f"{differ} elements differ (NaN or Inf on one side)"
        return same + f" in {len(cases)} case(s)", 0.0
    at = [i for i, c in enumerate(chip.result.cases) if c.name == case_name]
    where = _argmax(chip.outputs, simulated.outputs, at[0] if at else None, number)
    return (
        f"largest difference {amount:.3g} in {check.name} of case {case_name}{where}; "
        f"{sum(not c.passed for case in cases for c in case.outputs)} output(s) outside the run's tolerance",
        amount,
    )


def _argmax(chip: Outputs, simulated: Outputs, index: int | None, number: int) -> str:
    if index is None or index not in chip or index not in simulated:
        return ""
    want, got = chip[index][number][1], simulated[index][number][1]
    if want.shape != got.shape or want.dtype.kind not in "biuf" or got.dtype.kind not in "biuf":
        return ""
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    diff[~np.isfinite(diff)] = -1.0
    at = np.unravel_index(int(np.argmax(diff)), want.shape) if want.size else ()
    place = tuple(int(i) for i in at)
    return f" at {place}: chip {want[at].item()!r}, simulated {got[at].item()!r}"


def _outputs(events: list[Event]) -> Outputs:
    """The outputs a kernel's process sent, per case index; unreadable ones are left out (that run's own
    verdict already says so)."""
    found: Outputs = {}
    for event in events:
        if event.kind != "case_outputs":
            continue
        try:
            ran: CaseRan = payload(event)
            if not 0 <= ran.index < MAX_CASES:  # a made-up index (-1 named the last case, or none)
                continue
            found.setdefault(ran.index, digests.split(arrays.decode(ran.outputs))[0])  # not the sums
        except Exception:  # the kernel process's word: its own run already reported what was wrong
            continue
    return found


def _quiet(kind: str, data: dict[str, Any]) -> None:
    """The simulated run's events: shown in the result only (followers see the chip's run)."""
