"""A run's kernel job inside the child: watch the simulator, check every case, time, account memory.

The phases it shares with every job (target, versions, loading the code) are `phases.JobSession`'s.

Catalog mode (`job.entry` set): the entry's reference makes inputs and expected outputs; the user's
module supplies `entry.entry_point`. Scratch mode: the user's module supplies `make_inputs(seed)`,
optionally `reference(*inputs)` and `TOLERANCE`, and `kernel(*inputs)`; without a reference the
outputs are only summarised (status `ran`).

Every failure goes through the error translator (`sandbox.harness.errors`): the user gets an
`error` event in their own terms, the server log a `log` event with the raw text. A kernel that
fails in the simulator still gets its TPU lowering check, whenever tracing it succeeds.
"""

from __future__ import annotations

import contextlib
import os
import threading
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import jax
import numpy as np

from sandbox.harness import calls, measure, precision, sampled, usercode
from sandbox.harness.checks import races, timing
from sandbox.harness.checks.kernels import count_kernels
from sandbox.harness.errors import notes, translate
from sandbox.harness.given import case_inputs
from sandbox.harness.jaxapi import exported
from sandbox.harness.lowering import check as lowering
from sandbox.harness.model.runs import estimate_call, xla_baseline
from sandbox.harness.monitor import hooks as monitor_hooks
from sandbox.harness.monitor.core import UnfinishedKernelError
from sandbox.harness.monitor.deadlock import Deadlock, DeadlockError
from sandbox.harness.monitor.progress import Progress
from sandbox.harness.phases import SCRATCH_CASE, Failed, JobSession
from sandbox.harness.target import Target
from sandbox.harness.trace import first_call
from sandbox.harness.trace.first_call import FirstCallTrace
from sandbox.protocol import (
    Case,
    Chip,
    ErrorInfo,
    EventWriter,
    Job,
    LoweringCheck,
    Tolerance,
    chip_info,
)
from sandbox.verdict import arrays

# After a deadlock is declared the stuck kernel normally unwinds within a poll (0.1 s); if it has not
# come back after this long, the verdict is reported and the job ends without it.
UNWIND_SECONDS = 4.0


@dataclass
class CheckPlan:
    """What to run, whichever mode the job is in."""

    kernel: Callable[..., Any]
    make_inputs: Callable[[Case], Any]
    reference: Callable[..., Any] | None
    baseline: Callable[..., Any] | None  # XLA's own op, timed and estimated beside the kernel
    cases: tuple[Case, ...]
    tolerances: dict[str, Tolerance]
    mutable: tuple[int, ...]
    files: tuple[str, ...]


@dataclass
class _FirstCall:
    """A case's prepared call and results, reused for timing and memory accounting."""

    call: calls.Call
    inputs: list[Any]
    outputs: list[tuple[str, np.ndarray]]
    seconds: float
    case: str


class Session(JobSession):
    """A run's kernel job: the simulator watched, every case run, then lowering, timing and memory."""

    def __init__(self, job: Job, events: EventWriter) -> None:
        super().__init__(job, events)
        self.race_log: races.RaceLog | None = None
        self.progress: Progress | None = None
        self._unwound = threading.Event()
        self.trace = FirstCallTrace(None, events, job.chip)
        self.compiled: bool | None = None  # the chip's compiler's verdict on the first call (lowering check)

    def _watch(self, target: Target) -> None:
        """The interpreter monitor (before the trace capture: both wrap the interpreter, this one
        inside), the race log, and the first call's trace."""
        if target.interpret:
            files = (usercode.USER_FILE, usercode.REFERENCE_FILE)
            self.monitor = monitor_hooks.install(files, chip_info(target.chip))
            self.scene = replace(self.scene, monitor=self.monitor, chip=chip_info(target.chip))
            if self.monitor.available:
                self.progress = Progress(self.monitor, self.events)
                self.monitor.on_deadlock = self._deadlocked
        if target.interpret and target.options.detect_races:
            self.race_log = races.RaceLog().attach()
        self.capture = first_call.install(self.job.trace, target)
        self.trace = FirstCallTrace(self.capture, self.events, self.job.chip)

    def _step_ended(self) -> None:
        self._unwound.set()

    def _deadlocked(self, deadlock: Deadlock) -> None:
        """Declared by the watchdog: normally the kernel unwinds and `_phase` reports; if not, report here."""
        self._unwound.clear()

        def report_if_stuck() -> None:
            if not self._unwound.wait(UNWIND_SECONDS):
                self._report(DeadlockError(deadlock), "kernel", self.scene.files)
                os._exit(3)

        threading.Thread(target=report_if_stuck, daemon=True).start()

    def _load(self) -> CheckPlan:
        entry = self.job.entry
        if entry is None:
            return self._scratch_plan(self._user_module())
        reference = self._reference_module(entry)
        kernel = self._function(self._user_module(), entry.entry_point, "your code")
        return CheckPlan(
            kernel,
            reference.make_inputs,
            reference.reference,
            reference.reference,
            self._cases(entry),
            entry.tolerances,
            entry.mutable_inputs,
            (usercode.USER_FILE, usercode.REFERENCE_FILE),
        )

    def _scratch_plan(self, module: types.ModuleType) -> CheckPlan:
        kernel = self._function(module, "kernel", "a scratch file")
        make_inputs = self._function(module, "make_inputs", "a scratch file")
        return CheckPlan(
            kernel,
            lambda case: make_inputs(case.seed),
            getattr(module, "reference", None),
            usercode.xla_baseline(module),
            (SCRATCH_CASE,),
            self._tolerances(module),
            (),
            (usercode.USER_FILE,),
        )

    def _execute(self, target: Target, plan: CheckPlan) -> None:
        """Every case's outputs first (the verdict), then what the verdict does not need: the trace's
        assembly, the lowering checks, timing, memory and the estimate."""
        first: _FirstCall | None = None
        timed: _FirstCall | None = None
        try:
            for index, case in enumerate(plan.cases):
                call, inputs, got, seconds = self._run_case(target, plan, index, case)
                first = first or _FirstCall(call, list(inputs), got, seconds, case.name)
                # On a chip the last case (the TPU-size one, where the catalog has one) is timed: there
                # a run costs microseconds; in the simulator the first and smallest.
                timed = first if target.interpret else _FirstCall(call, list(inputs), got, seconds, case.name)
        except Failed:
            self._after_cases(target, plan, first)  # a later case failed: the first call's reports
            raise
        self._after_cases(target, plan, first)
        if timed is not None:
            self._measure(target, plan, timed)
            if self.job.rerun and not target.interpret:
                self._export(target, timed)

    def _export(self, target: Target, timed: _FirstCall) -> None:
        """A class run on a chip: the timed case's program, for the host to check and time again
        where no user code runs (`sandbox.harness.rerun`)."""
        try:
            with target.chip_context():
                program = exported.export_for_tpu(*timed.call.of_arrays())
        except Exception as exc:  # refused, or inputs that are not arrays (no shape to export for)
            why = str(exc) if isinstance(exc, exported.ProgramRefused) else f"{type(exc).__name__}: {exc}"
            self.events.emit("exported", case=timed.case, error=why[:500])
            return
        self.events.emit("exported", case=timed.case, program=program)

    def _after_cases(self, target: Target, plan: CheckPlan, first: _FirstCall | None) -> None:
        """The first call's trace (recorded during it), then its lowering checks."""
        self.trace.send_pending()
        if first is not None:
            self._check_lowering(target, plan, first.call)

    def _check_lowering(
        self, target: Target, plan: CheckPlan, call: calls.Call, *, failed: bool = False
    ) -> None:
        """Lower for the job's chip (and `lower_chips`) with interpret mode off; on a TPU it compiles anyway.

        After a failed simulated run the check is reported only if it got past tracing: a kernel that
        cannot even be traced has nothing for the compiler to judge, and its error is already said.
        """
        if not target.interpret:
            return
        wanted = tuple(dict.fromkeys(self.job.lower_chips))
        chips = dict.fromkeys((self.job.chip, *wanted))
        checks = {c: self._lowering_check(plan, call, target, c) for c in chips}
        mine = checks[self.job.chip]
        self.compiled = mine.compiled
        if failed and mine.jaxpr is None:
            return
        listed = [checks[c] for c in wanted]
        self.events.emit("lowering", check=mine, warnings=mine.warnings, checks=listed)

    def _lowering_check(self, plan: CheckPlan, call: calls.Call, target: Target, chip: Chip) -> LoweringCheck:
        def explain(exc: BaseException, phase: str) -> ErrorInfo:
            translation = translate(exc, phase, self.scene)
            self.events.emit("log", text=translation.log)
            return translation.error

        return lowering.check(plan.kernel, call.args, target, chip, explain)

    def _run_case(
        self, target: Target, plan: CheckPlan, index: int, case: Case
    ) -> tuple[calls.Call, tuple[Any, ...], list[tuple[str, np.ndarray]], float]:
        inputs = self._phase(
            "make_inputs",
            lambda: case_inputs(self.job, index, case, plan.make_inputs, native=not target.interpret),
            plan.files,
        )
        inputs_digest = arrays.digest(calls.leaves(inputs))  # before the kernel could change them
        self._take_race_texts()
        with target.chip_context():
            call = self._phase("kernel", lambda: calls.prepare(plan.kernel, inputs, plan.mutable))
            lowering_after = (
                (lambda: self._check_lowering(target, plan, call, failed=True)) if index == 0 else None
            )
            with self.trace.recording(index == 0, case):
                got, seconds = self._phase(
                    "kernel", lambda: self._kernel_call(call, case), after_error=lowering_after
                )
            kernel_count = count_kernels(call.fn, call.args)
        race_texts = self._take_race_texts()
        said = notes(self.monitor.take_notes(), self.scene) if self.monitor is not None else []
        if index == 0:
            self.events.emit("compiled", first_call_seconds=seconds)
        raced = bool(race_texts) or (target.options.detect_races and target.interpret and _races_found())
        # The verdict is not made here: the outputs go to the checker, outside this process.
        outputs = self._phase("outputs", lambda: arrays.encode(sampled.fit(got)))
        self.events.emit(
            "case_outputs",
            index=index,
            case=case.name,
            seconds=seconds,
            inputs_digest=inputs_digest,
            outputs=outputs,
            kernels=kernel_count,
            raced=raced,
            race_count=len(race_texts),
            races=races.parse_all(race_texts),
            notes=tuple(said),
            mismatch_hint=precision.mismatch_hint(target, call),
            chip_bands=precision.chip_bands(target, call),
        )
        return call, inputs, got, seconds

    def _kernel_call(self, call: calls.Call, case: Case) -> tuple[list[tuple[str, np.ndarray]], float]:
        """Run the kernel once; a kernel that ends with DMAs in flight or semaphores left raised fails."""
        if self.monitor is not None:
            self.monitor.reset()
        with self._running("kernel", case.name):
            got, seconds = calls.timed(call.run)
        findings = self.monitor.take_findings() if self.monitor is not None else []
        if findings:
            raise UnfinishedKernelError(findings)
        return got, seconds

    @contextlib.contextmanager
    def _running(self, phase: str, case: str) -> Iterator[None]:
        with self.progress.running(phase, case) if self.progress is not None else contextlib.nullcontext():
            yield

    def _take_race_texts(self) -> list[str]:
        return self.race_log.take() if self.race_log is not None else []

    def _measure(self, target: Target, plan: CheckPlan, first: _FirstCall) -> None:
        call, inputs, outputs, first_seconds = first.call, first.inputs, first.outputs, first.seconds
        budget = self.job.timing_budget_seconds
        with target.chip_context():
            with self._running("timing", first.case):
                kernel_stats = self._phase("timing", lambda: timing.measure(call.run_quietly, budget))
                device = measure.device_time(target, call.run_quietly)  # TPU only: profiler traces
            closed = self._phase("memory", lambda: jax.make_jaxpr(call.fn)(*call.args))
        ref_stats, ref_note, flops, bytes_accessed, ref_device = None, "", None, None, None
        if plan.baseline is not None:
            ref_stats, ref_note = measure.time_reference(plan.baseline, inputs, budget / 3)
            ref_device, ref_device_note = measure.reference_device_time(target, plan.baseline, inputs)
            if ref_device is None and ref_device_note and not ref_note:  # else its note says why (eager)
                ref_note = f"its device time is not given: {ref_device_note}"
        if plan.reference is not None:
            flops, bytes_accessed = calls.reference_cost(plan.reference, inputs)
            entry = self.job.entry
            if entry is not None and entry.flops is not None:
                flops, bytes_accessed = entry.flops, entry.bytes_accessed
        self.events.emit(
            "timing",
            timing=measure.timing_result(
                target,
                first.case,
                first_seconds,
                kernel_stats,
                ref_stats,
                flops,
                bytes_accessed,
                ref_note,
                device,
                ref_device,
            ),
        )
        self.events.emit(
            "memory",
            memory=self._phase(
                "memory", lambda: measure.memory_result(target, closed, inputs, outputs, self.compiled)
            ),
        )
        estimate = estimate_call(call.fn, call.args, target)  # the TPU time model (sandbox.harness.model)
        if estimate is not None and plan.baseline is not None:
            xla_seconds, validation = xla_baseline(plan.baseline, inputs, target)
            estimate = replace(estimate, xla_seconds=xla_seconds, xla_validation=validation)
        if estimate is not None:
            self.events.emit("estimate", estimate=estimate)


def _races_found() -> bool:
    from sandbox.harness.jaxapi import interpret

    return interpret.races_found()
