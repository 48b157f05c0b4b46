"""One job inside the child: set the target, import the code, check every case, time, account memory.

Catalog mode (`job.entry` set): the entry's reference makes inputs and expected outputs; the user's
module supplies `entry.entry_point`. Scratch mode: the user's module supplies `make_inputs(seed)`,
optionally `reference(*inputs)`, and `kernel(*inputs)`; without a reference the outputs are only
summarised (status `ran`).
"""

from __future__ import annotations

import contextlib
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from sandbox.harness import calls, usercode
from sandbox.harness.checks import races, timing
from sandbox.harness.checks.compare import compare, tolerance_for
from sandbox.harness.checks.memory import kernel_memory
from sandbox.harness.lowering import check as lowering
from sandbox.harness.model.runs import estimate_call
from sandbox.harness.process import peak_rss_bytes
from sandbox.harness.target import Target, TargetError, configure
from sandbox.harness.trace import capture as trace
from sandbox.protocol import (
    Case,
    CaseResult,
    Chip,
    EventWriter,
    MemoryUse,
    Race,
    Stats,
    Timing,
    Tolerance,
    Trace,
    chip_info,
)

SCRATCH_CASE = Case(name="scratch", dtype="", seed=0)


class Failed(Exception):
    """Raised after an `error` event was emitted: stops the session, nothing more to report."""


@dataclass
class CheckPlan:
    """What to run, whichever mode the job is in."""

    kernel: Callable[..., Any]
    make_inputs: Callable[[Case], Any]
    reference: Callable[..., Any] | None
    cases: tuple[Case, ...]
    tolerances: dict[str, Tolerance]
    mutable: tuple[int, ...]
    files: tuple[str, ...]


@dataclass
class _FirstCall:
    """The first case's prepared call and results, reused for timing and memory accounting."""

    call: calls.Call
    inputs: list[Any]
    outputs: list[tuple[str, np.ndarray]]
    seconds: float


class Session:
    def __init__(self, job: Any, events: EventWriter) -> None:
        self.job = job
        self.events = events
        self.race_log: races.RaceLog | None = None
        self.capture: trace.Capture | None = None

    def run(self) -> None:
        job = self.job
        try:
            target = self._phase("target", lambda: configure(job.chip, job.mode, job.options, job.devices))
            if target.interpret and target.options.detect_races:
                self.race_log = races.RaceLog().attach()
            self.capture = _capture(job.trace, target)
            self.events.emit("versions", versions=target.versions(), interpret=target.interpret)
            plan = self._load()
            self.events.emit("imported")
            self._check(target, plan)
        except Failed:
            return

    # -- phases ------------------------------------------------------------------------------

    def _phase(
        self, phase: str, step: Callable[[], Any], files: tuple[str, ...] = (usercode.USER_FILE,)
    ) -> Any:
        try:
            return step()
        except TargetError as exc:
            self.events.emit("error", error=usercode.error_info(exc, phase, files), fault="request")
            raise Failed from exc
        except BaseException as exc:
            if isinstance(exc, (KeyboardInterrupt, SystemExit)) and phase != "kernel":
                raise
            self.events.emit(
                "error", error=usercode.error_info(exc, phase, files), memory=_is_memory_error(exc)
            )
            raise Failed from exc

    def _load(self) -> CheckPlan:
        entry = self.job.entry
        if entry is None:
            module = self._phase(
                "import", lambda: usercode.load_module("kernel", self.job.source, usercode.USER_FILE)
            )
            return self._scratch_plan(module)
        ref_files = (usercode.REFERENCE_FILE,)
        reference = self._phase(
            "reference import",
            lambda: usercode.load_module("reference", entry.reference_source, usercode.REFERENCE_FILE),
            ref_files,
        )
        module = self._phase(
            "import", lambda: usercode.load_module("kernel", self.job.source, usercode.USER_FILE)
        )
        kernel = self._phase("import", lambda: _require(module, entry.entry_point, "your code"))
        cases = tuple(c for c in entry.cases if not (c.tpu_only and self.job.mode != "tpu"))
        return CheckPlan(
            kernel,
            reference.make_inputs,
            reference.reference,
            cases,
            entry.tolerances,
            entry.mutable_inputs,
            (usercode.USER_FILE, usercode.REFERENCE_FILE),
        )

    def _scratch_plan(self, module: types.ModuleType) -> CheckPlan:
        kernel = self._phase("import", lambda: _require(module, "kernel", "a scratch file"))
        make_inputs = self._phase("import", lambda: _require(module, "make_inputs", "a scratch file"))
        reference = getattr(module, "reference", None)
        return CheckPlan(
            kernel,
            lambda case: make_inputs(case.seed),
            reference,
            (SCRATCH_CASE,),
            {},
            (),
            (usercode.USER_FILE,),
        )

    def _check(self, target: Target, plan: CheckPlan) -> None:
        first: _FirstCall | None = None
        for index, case in enumerate(plan.cases):
            call, inputs, got, seconds = self._run_case(target, plan, index, case)
            if first is None:
                first = _FirstCall(call, list(inputs), got, seconds)
                self._check_lowering(target, plan, call)
        if first is not None:
            self._measure(target, plan, first)

    def _check_lowering(self, target: Target, plan: CheckPlan, call: calls.Call) -> None:
        """Lower for the job's chip (and `lower_chips`) with interpret mode off; on a TPU it compiles anyway."""
        if not target.interpret:
            return
        wanted = tuple(dict.fromkeys(self.job.lower_chips))
        chips = dict.fromkeys((self.job.chip, *wanted))
        checks = {c: lowering.check(plan.kernel, call.args, target, c) for c in chips}
        mine = checks[self.job.chip]
        listed = [checks[c] for c in wanted]
        self.events.emit("lowering", check=mine, warnings=mine.warnings, checks=listed)

    def _run_case(
        self, target: Target, plan: CheckPlan, index: int, case: Case
    ) -> tuple[calls.Call, tuple[Any, ...], list[tuple[str, np.ndarray]], float]:
        inputs = self._phase("make_inputs", lambda: tuple(plan.make_inputs(case)), plan.files)
        expected = None
        if plan.reference is not None:
            reference = plan.reference
            expected = self._phase("reference", lambda: calls.flatten("out", reference(*inputs)), plan.files)
        self._take_race_texts()
        with target.chip_context():
            call = self._phase("kernel", lambda: calls.prepare(plan.kernel, inputs, plan.mutable))
            with self._tracing(index == 0, case):
                got, seconds = self._phase("kernel", lambda: calls.timed(call.run))
        race_texts = self._take_race_texts()
        if index == 0:
            self.events.emit("compiled", first_call_seconds=seconds)
        if expected is None:
            self.events.emit("outputs", outputs=[calls.summarize_output(n, a) for n, a in got])
        else:
            result = self._case_result(case, inputs, got, expected, plan, seconds, target, race_texts)
            self.events.emit("case", index=index, of=len(plan.cases), result=result)
        return call, inputs, got, seconds

    @contextlib.contextmanager
    def _tracing(self, first: bool, case: Case) -> Iterator[None]:
        """Record the kernel trace around the first call of the first case; report it even if it fails."""
        capture = self.capture if first else None
        if capture is None:
            yield
            return
        try:
            with capture.recording():
                yield
        finally:
            self.events.emit("trace", trace=_trace_result(capture, case, self.job.chip))

    def _take_race_texts(self) -> list[str]:
        return self.race_log.take() if self.race_log is not None else []

    def _case_result(
        self,
        case: Case,
        inputs: tuple[Any, ...],
        got: list[tuple[str, np.ndarray]],
        expected: list[tuple[str, np.ndarray]],
        plan: CheckPlan,
        seconds: float,
        target: Target,
        race_texts: list[str],
    ) -> CaseResult:
        checks = []
        tolerance = None
        for i, (name, want) in enumerate(expected):
            tolerance = tolerance_for(str(want.dtype), plan.tolerances)
            if i < len(got):
                checks.append(compare(name, got[i][1], want, tolerance))
        outputs = tuple(checks)
        passed = len(got) == len(expected) and all(c.passed for c in outputs)
        found = races.parse_all(race_texts)
        # The detector's own flag covers only the last kernel call, but catches reports we missed.
        raced = bool(race_texts) or (target.options.detect_races and target.interpret and _races_found())
        if raced:
            passed = False
        return CaseResult(
            name=case.name,
            dtype=case.dtype,
            dims=dict(case.dims),
            input_shapes=tuple(tuple(np.shape(x)) for x in inputs),
            tolerance=tolerance,
            passed=passed,
            outputs=outputs,
            seconds=seconds,
            note=_case_note(len(got), len(expected), raced, len(race_texts), found),
            races=found,
        )

    def _measure(self, target: Target, plan: CheckPlan, first: _FirstCall) -> None:
        call, inputs, outputs, first_seconds = first.call, first.inputs, first.outputs, first.seconds
        budget = self.job.timing_budget_seconds
        with target.chip_context():
            kernel_stats = self._phase("timing", lambda: timing.measure(call.run_quietly, budget))
            closed = self._phase("memory", lambda: jax.make_jaxpr(call.fn)(*call.args))
        ref_stats, flops, bytes_accessed = None, None, None
        if plan.reference is not None:
            entry = self.job.entry
            ref = jax.jit(plan.reference)
            self._phase("reference timing", lambda: jax.block_until_ready(ref(*inputs)), plan.files)
            ref_stats = timing.measure(lambda: jax.block_until_ready(ref(*inputs)), budget / 3)
            flops, bytes_accessed = calls.reference_cost(plan.reference, inputs)
            if entry is not None and entry.flops is not None:
                flops, bytes_accessed = entry.flops, entry.bytes_accessed
        self.events.emit(
            "timing",
            timing=self._timing(target, plan, first_seconds, kernel_stats, ref_stats, flops, bytes_accessed),
        )
        self.events.emit("memory", memory=self._memory(target, closed, inputs, outputs))
        estimate = estimate_call(call.fn, call.args, target)  # the TPU time model (sandbox.harness.model)
        if estimate is not None:
            self.events.emit("estimate", estimate=estimate)

    def _timing(
        self,
        target: Target,
        plan: CheckPlan,
        first: float,
        kernel: Stats,
        ref: Stats | None,
        flops: int | None,
        bytes_accessed: int | None,
    ) -> Timing:
        chip = chip_info(target.chip)
        roofline = chip.roofline_seconds(flops, bytes_accessed) if flops and bytes_accessed else None
        return Timing(
            first_call_seconds=first,
            compile_seconds=max(first - kernel.median, 0.0),
            kernel=kernel,
            reference=ref,
            ratio_to_reference=kernel.median / ref.median if ref and ref.median > 0 else None,
            simulated=target.interpret,
            roofline_seconds=roofline,
            flops=flops,
            bytes_accessed=bytes_accessed,
            case=plan.cases[0].name,
            note=(
                "CPU simulation (TPU interpret mode): wall times are host times, not TPU performance; "
                "compile time is estimated as first call minus the median run."
            )
            if target.interpret
            else "",
        )

    def _memory(
        self, target: Target, closed: Any, inputs: list[Any], outputs: list[tuple[str, np.ndarray]]
    ) -> MemoryUse:
        chip = chip_info(target.chip)
        demand = kernel_memory(closed)
        warnings = []
        if demand.vmem_bytes > chip.vmem_bytes:
            warnings.append(
                f"VMEM: the kernel allocates {demand.vmem_bytes:,} bytes, more than the "
                f"{chip.vmem_bytes:,} bytes of one {chip.device_kind} TensorCore"
            )
        if demand.smem_bytes > chip.smem_bytes:
            warnings.append(
                f"SMEM: the kernel allocates {demand.smem_bytes:,} bytes, more than the "
                f"{chip.smem_bytes:,} bytes of one {chip.device_kind} TensorCore"
            )
        return MemoryUse(
            peak_rss_bytes=peak_rss_bytes(),
            hbm_input_bytes=calls.nbytes(inputs),
            hbm_output_bytes=calls.nbytes([a for _, a in outputs]),
            vmem_bytes=demand.vmem_bytes if demand.kernels else None,
            smem_bytes=demand.smem_bytes if demand.kernels else None,
            semaphores=demand.semaphores if demand.kernels else None,
            vmem_capacity_bytes=chip.vmem_bytes,
            smem_capacity_bytes=chip.smem_bytes,
            hbm_capacity_bytes=chip.hbm_bytes,
            warnings=tuple(warnings),
            note="" if demand.kernels else "no Pallas kernel found in the traced function",
        )


def _capture(wanted: bool, target: Target) -> trace.Capture | None:
    """The trace recorder, installed before user code is imported (kernels look the hooks up then)."""
    if not wanted:
        return None
    if not target.interpret:
        return trace.Capture("the kernel trace is recorded in TPU interpret mode only; this run was on a TPU")
    try:
        return trace.install()
    except Exception as exc:  # the trace is an extra: it never stops a run
        return trace.Capture(f"the trace could not be set up: {exc!r}")


def _trace_result(capture: trace.Capture, case: Case, chip: Chip) -> Trace:
    try:
        return capture.result(case.name, chip_info(chip).hbm_bandwidth)
    except Exception as exc:  # a fault of ours: say so in the result, keep the run
        return Trace(available=False, reason=f"the trace could not be assembled: {exc!r}")


def _require(module: types.ModuleType, name: str, where: str) -> Callable[..., Any]:
    fn = getattr(module, name, None)
    if not callable(fn):
        raise NameError(f"{where} must define a function `{name}`")
    return fn


def _races_found() -> bool:
    from jax._src.pallas.mosaic.interpret import interpret_pallas_call as ipc

    state = getattr(ipc, "races", None)
    return bool(state is not None and state.races_found)


def _case_note(got: int, expected: int, raced: bool, reported: int, found: tuple[Race, ...]) -> str:
    notes = []
    if got != expected:
        notes.append(f"the kernel returned {got} output(s), the reference {expected}")
    if raced:
        count = f"{reported} data race(s)" if reported else "a data race"
        shown = f" (the first {len(found)} listed)" if reported > len(found) else ""
        notes.append(f"{count} detected by the interpret-mode race detector{shown}")
    return "; ".join(notes)


def _is_memory_error(exc: BaseException) -> bool:
    # XLA reports allocation failures with the RESOURCE_EXHAUSTED status code.
    return isinstance(exc, MemoryError) or str(exc).startswith("RESOURCE_EXHAUSTED")
