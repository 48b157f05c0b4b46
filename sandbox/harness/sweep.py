"""A sweep ("Tune") inside one child: every config of `job.sweep`, judged one after another.

One process for many configs saves a fresh interpreter and JAX import per config (~1 s each). Per
config, cheapest first, so that a config already ruled out costs little:
1. trace the kernel at the target size with `jax.ShapeDtypeStruct` inputs (nothing is allocated,
   except where `make_inputs` needs concrete values: it then runs once on the CPU, `target_inputs`);
   a kernel that refuses the size (blocks that do not divide it) is an `error`;
2. count its VMEM from that trace (`checks.memory`): over the chip's capacity, or over the compiler's
   default scoped limit where the kernel sets no `vmem_limit_bytes` (`ChipInfo.scoped_vmem_bytes`),
   is `over_vmem`;
3. estimate its time at the target size (`model`);
4. lower it for each chosen chip with interpret mode off, and compile it with the chip's own compiler
   where libtpu is here (`sweep_compile`): a compiler error is `rejected`, its VMEM refusal `over_vmem`
   (its compile overrules the count's `over_vmem`);
5. run it in interpret mode at the check size (grown to fit its blocks); an exception is `error`;
   only configs still in the running get here;
6. on a TPU host, time it for real at the target size (`measured_seconds`). There the kernel is
   compiled natively when it first runs (step 4 compiles off a chip only): a scoped-VMEM refusal (E1001)
   in step 5 or 6 is `over_vmem` with the compiler's figures, the verdict the off-chip compile gives.
Each config goes out as a `config_outputs` event as soon as it is done, with its outputs at the check
size: the checker, outside this process, compares them with the reference's and makes the `config`
event the page shows (`sandbox.verdict.configs`). The comparison made here is only a hint: it picks
which interpreter's outputs to send and skips timing a plainly wrong config on a TPU.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from jax.experimental.pallas import tpu as pltpu

from sandbox.harness import calls, devicetime, measure, sweep_compile, sweep_plan, usercode
from sandbox.harness.checks.kernels import count_kernels
from sandbox.harness.errors.chip import scoped_vmem_refusal
from sandbox.harness.given import made_inputs
from sandbox.harness.lowering.chip_checks import facts as chip_facts
from sandbox.harness.lowering.chip_checks import vmem_refusal
from sandbox.harness.model.estimate import estimate_jaxpr, known_values, target_inputs, trace
from sandbox.harness.model.runs import xla_baseline
from sandbox.harness.phases import USER_FILES, JobSession
from sandbox.harness.target import Target
from sandbox.protocol import ConfigResult, EventWriter, Job, Tolerance, chip_info
from sandbox.protocol.arrays import MAX_JOB_ARRAY_BYTES, ArrayBytes
from sandbox.protocol.sweep import ParamValue
from sandbox.verdict import arrays
from sandbox.verdict.compare import compare, tolerance_for

MEASURE_REPEATS, MEASURE_WARMUP = 10, 2  # traced calls per config, after untraced warm-up calls
# `force_tpu_interpret_mode(True)`: pallas_call and pl.kernel get `interpret=True`, the generic
# interpreter (the stubs type the parameter as InterpretParams only).
_GENERIC: Any = True


@dataclass(frozen=True)
class Ran:
    """A config that ran at its check size: how, on which inputs, and what it returned (encoded)."""

    how: str
    inputs_digest: str
    outputs: tuple[ArrayBytes, ...]
    kernels: int  # Pallas kernels in its program (`checks.kernels`), for the checker's no-kernel test


@dataclass
class SweepPlan:
    kernel: Callable[..., Any]
    make_inputs: Callable[[dict[str, int]], Any]  # a problem size → the kernel's inputs
    reference: Callable[..., Any] | None
    baseline: Callable[..., Any] | None  # XLA's own op (`usercode.xla_baseline`), estimated and timed once
    tolerances: dict[str, Tolerance]
    mutable: tuple[int, ...]
    check_base: dict[str, int]  # the correctness size before it is fitted to a config's blocks
    files: tuple[str, ...]
    expected: dict[tuple[tuple[str, int], ...], Any] = field(default_factory=dict)  # per check size


class SweepSession(JobSession):
    def __init__(self, job: Job, events: EventWriter) -> None:
        assert job.sweep is not None
        super().__init__(job, events)
        self.spec = job.sweep
        self.array_bytes_left = MAX_JOB_ARRAY_BYTES  # what the outputs of all configs may take
        self.xla_seconds: float | None = None
        self.xla_measured_seconds: float | None = None
        self.xla_not_measured = ""
        self.xla_validation = ""

    def _load(self) -> SweepPlan:
        entry = self.job.entry
        if entry is None:
            module = self._user_module()
            kernel = self._function(module, "kernel", "a scratch file")
            make_inputs = self._function(module, "make_inputs", "a scratch file")
            tolerances = self._tolerances(module)
            return self._phase(
                "import",
                lambda: SweepPlan(
                    kernel=kernel,
                    make_inputs=sweep_plan.scratch_inputs(make_inputs),
                    reference=getattr(module, "reference", None),
                    baseline=usercode.xla_baseline(module),
                    tolerances=tolerances,
                    mutable=(),
                    check_base=sweep_plan.scratch_check_base(make_inputs),
                    files=USER_FILES,
                ),
            )
        reference = self._reference_module(entry)
        kernel = self._function(self._user_module(), entry.entry_point, "your code")
        return self._phase(
            "import",
            lambda: SweepPlan(
                kernel=kernel,
                make_inputs=sweep_plan.catalog_inputs(entry, reference.make_inputs, self.spec),
                reference=reference.reference,
                baseline=reference.reference,
                tolerances=entry.tolerances,
                mutable=entry.mutable_inputs,
                check_base=sweep_plan.catalog_check_base(entry, self.spec),
                files=(usercode.USER_FILE, usercode.REFERENCE_FILE),
            ),
        )

    def _execute(self, target: Target, plan: SweepPlan) -> None:
        target_args = self._phase("make_inputs", lambda: self._target_inputs(plan), plan.files)
        # XLA's own op at the target size, the baseline every config is shown against: estimated
        # everywhere, and on a TPU host also timed, once, before the configs.
        if plan.baseline is not None:
            self.xla_seconds, self.xla_validation = xla_baseline(plan.baseline, target_args, target)
        if plan.baseline is not None and not target.interpret:
            self.xla_measured_seconds, self.xla_not_measured = self._measure_xla(target, plan)
        selected = self.spec.configs()
        for done, (index, params) in enumerate(selected, start=1):
            result, note, ran = self._config(target, plan, target_args, index, params)
            sent = {"ran": True, **dataclasses.asdict(ran)} if ran is not None else {}
            self.events.emit("config_outputs", result=result, done=done, of=len(selected), note=note, **sent)

    def _target_inputs(self, plan: SweepPlan) -> tuple[Any, ...]:
        """The inputs at the target size (`target_inputs`); what making them for real cost, where
        `make_inputs` needs concrete values, goes to the host's log."""
        log = functools.partial(self.events.emit, "log")
        return target_inputs(lambda: tuple(plan.make_inputs(self.spec.size)), lambda text: log(text=text))

    # -- one config ------------------------------------------------------------------------------

    def _config(
        self, target: Target, plan: SweepPlan, target_args: Any, index: int, params: dict[str, ParamValue]
    ) -> tuple[ConfigResult, str, Ran | None]:
        """This process's account of one config, its reason before the check, and what it returned there."""
        chip = chip_info(self.job.chip)
        spent: dict[str, float] = {}
        dims = self.spec.check_dims(params, plan.check_base)
        result = ConfigResult(index=index, params=params, status="ok", reason="", check_size=dims)
        fn = sweep_plan.bound(plan.kernel, params, plan.mutable)
        t0 = time.perf_counter()
        try:
            closed = trace(fn, target_args, target.chip_context())
        except Exception as exc:
            return (
                _replace(result, status="error", reason=f"at the target size: {_first_line(exc)}"),
                "",
                None,
            )
        spent["trace"] = time.perf_counter() - t0
        found = chip_facts(closed)
        result = _replace(result, vmem_bytes=found.memory.vmem_bytes, vmem_capacity_bytes=chip.vmem_bytes)
        if (reason := vmem_refusal(found, chip)) is not None:
            result = _replace(result, status="over_vmem", reason=reason)
        result = self._estimate(result, closed, target_args, spent)
        result = self._lower(result, target, fn, target_args, spent)
        note, ran = result.reason, None
        if result.status == "ok":
            result, ran = self._check(result, target, plan, params, dims, spent)
        if result.status == "ok" and not target.interpret:
            result = self._measure(result, target, plan, params, spent)
        return (
            _replace(
                result,
                xla_measured_seconds=self.xla_measured_seconds,
                xla_not_measured=self.xla_not_measured,
                host_seconds={k: round(v, 4) for k, v in spent.items()},
            ),
            note,
            ran,
        )

    def _estimate(
        self, result: ConfigResult, closed: Any, args: Any, spent: dict[str, float]
    ) -> ConfigResult:
        t0 = time.perf_counter()
        try:
            estimate = estimate_jaxpr(closed, known_values(args), chip_info(self.job.chip), timeline=False)
        except Exception as exc:  # the model's limit, not the user's fault: the config stays in the running
            spent["model"] = time.perf_counter() - t0
            return _replace(result, reason=f"no estimate: {_first_line(exc)}")
        spent["model"] = time.perf_counter() - t0
        return _replace(
            result,
            estimated_seconds=estimate.seconds,
            bound=estimate.bound,
            roofline_fraction=estimate.roofline_fraction,
            steps=sum(k.steps for k in estimate.kernels),
            estimate=dataclasses.replace(
                estimate, xla_seconds=self.xla_seconds, xla_validation=self.xla_validation
            ),
        )

    def _lower(
        self, result: ConfigResult, target: Target, fn: Callable[..., Any], args: Any, spent: dict[str, float]
    ) -> ConfigResult:
        if not target.interpret:
            return result  # on a TPU the real compile happens when the config is measured
        t0 = time.perf_counter()
        chips = tuple(dict.fromkeys((self.job.chip, *self.spec.chips)))
        result = sweep_compile.judged(result, target, chips, fn, args)
        spent["lower"] = time.perf_counter() - t0
        return result

    def _check(
        self,
        result: ConfigResult,
        target: Target,
        plan: SweepPlan,
        params: dict[str, ParamValue],
        dims: dict[str, int],
        spent: dict[str, float],
    ) -> tuple[ConfigResult, Ran | None]:
        """Run the config at `dims`; its outputs go to the checker, which alone says if they are right.
        In the simulator the generic Pallas interpreter goes first (several times faster: no simulated
        DMAs, semaphores or cores); if it fails or disagrees with the reference here, TPU interpret
        mode, the authority, runs it and its outputs are sent. The status returned is that hint only.
        """
        t0 = time.perf_counter()
        where = ", ".join(f"{k}={v}" for k, v in dims.items())
        try:
            inputs = made_inputs(lambda: plan.make_inputs(dims), native=not target.interpret)
            digest = arrays.digest(calls.leaves(inputs))  # before the kernel could change them
            expected = self._expected(plan, inputs, dims)
        except Exception as exc:
            spent["check"] = time.perf_counter() - t0
            return _replace(result, status="error", reason=f"at {where}: {_first_line(exc)}"), None
        verdict: tuple[str, Any] = ("error", None)
        how = "on the TPU"
        for generic in (True, False) if target.interpret else (False,):
            verdict = self._compare(target, plan, params, inputs, expected, generic)
            how = "generic interpreter" if generic else "TPU interpret mode" if target.interpret else how
            if verdict[0] == "ok":
                break
        spent["check"] = time.perf_counter() - t0
        kind, found = verdict
        if kind in ("error", "over_vmem"):
            return _replace(
                result, status=kind, reason=found if kind == "over_vmem" else f"at {where}: {found}"
            ), None
        try:
            outputs = self._encode(found)
        except arrays.ChannelError as exc:
            return _replace(result, status="error", reason=f"at {where}: {exc}"), None
        with target.chip_context():
            call = calls.prepare(functools.partial(plan.kernel, **params), inputs, plan.mutable)
            kernels = count_kernels(call.fn, call.args)
        return _replace(result, status="wrong" if kind == "wrong" else "ok"), Ran(
            how, digest, outputs, kernels
        )

    def _encode(self, got: list[tuple[str, Any]]) -> tuple[ArrayBytes, ...]:
        """The outputs for the checker, within what one config and all of this job's may take."""
        size = sum(int(a.nbytes) for _, a in got)
        if size > self.array_bytes_left:
            raise arrays.ChannelError(
                f"the outputs of this sweep's configs at their check sizes pass the "
                f"{MAX_JOB_ARRAY_BYTES >> 20} MiB the checker takes per sweep job: "
                "sweep fewer configs or choose a smaller check size"
            )
        encoded = arrays.encode(got)
        self.array_bytes_left -= size
        return encoded

    def _compare(
        self,
        target: Target,
        plan: SweepPlan,
        params: dict[str, ParamValue],
        inputs: tuple[Any, ...],
        expected: Any,
        generic: bool,
    ) -> tuple[str, Any]:
        """("ok" | "wrong", the outputs) by this process's own comparison, or ("error", what went wrong)."""
        try:
            with target.chip_context(), _generic_interpreter(generic):
                got = calls.prepare(functools.partial(plan.kernel, **params), inputs, plan.mutable).run()
        except Exception as exc:
            refusal = vmem_refused(exc)
            return ("over_vmem", refusal) if refusal else ("error", _first_line(exc))
        if expected is None:
            return "ok", got
        checks = [
            compare(name, got[i][1], want, tolerance_for(str(want.dtype), plan.tolerances))
            for i, (name, want) in enumerate(expected)
            if i < len(got)
        ]
        good = len(checks) == len(expected) and all(c.passed for c in checks)
        return ("ok" if good else "wrong"), got

    def _expected(self, plan: SweepPlan, inputs: tuple[Any, ...], dims: dict[str, int]) -> Any:
        if plan.reference is None:
            return None
        key = tuple(sorted(dims.items()))
        if key not in plan.expected:
            plan.expected[key] = calls.flatten("out", plan.reference(*inputs))
        return plan.expected[key]

    def _measure(
        self,
        result: ConfigResult,
        target: Target,
        plan: SweepPlan,
        params: dict[str, ParamValue],
        spent: dict[str, float],
    ) -> ConfigResult:
        t0 = time.perf_counter()
        try:
            inputs = made_inputs(lambda: plan.make_inputs(self.spec.size), native=not target.interpret)
            with target.chip_context():
                call = calls.prepare(functools.partial(plan.kernel, **params), inputs, plan.mutable)
                call.run_quietly()
                found = devicetime.device_or_wall(call.run_quietly, MEASURE_REPEATS, MEASURE_WARMUP)
        except Exception as exc:
            spent["measure"] = time.perf_counter() - t0
            if refusal := vmem_refused(exc):
                return _replace(result, status="over_vmem", reason=refusal)
            return _replace(
                result, status="error", reason=f"on the TPU at the target size: {_first_line(exc)}"
            )
        spent["measure"] = time.perf_counter() - t0
        return _replace(result, measured_seconds=found[0], measured_host_seconds=found[1])

    def _measure_xla(self, target: Target, plan: SweepPlan) -> tuple[float | None, str]:
        """XLA's own op at the target size, timed on the chip as a run's reference is
        (`measure.reference_device_time`); None where it does not run there (an eager-only reference,
        too large a size) or its timing is one the chip cannot make, and why (every config row and the
        log say it), and the sweep goes on without a measured baseline."""
        assert plan.baseline is not None
        try:
            inputs = made_inputs(lambda: plan.make_inputs(self.spec.size), native=True)
        except Exception as exc:
            why_not = f"its inputs were not made: {_first_line(exc)}"
            self.events.emit("log", text=f"XLA's own op was not timed at the target size: {why_not}")
            return None, why_not
        found, why_not = measure.reference_device_time(target, plan.baseline, inputs)
        if found is None:
            self.events.emit("log", text=f"XLA's own op was not timed at the target size: {why_not}")
        return found, why_not


@contextlib.contextmanager
def _generic_interpreter(on: bool) -> Iterator[None]:
    """Kernels built inside run under JAX's generic Pallas interpreter (`interpret=True`)."""
    if not on:
        yield
        return
    with pltpu.force_tpu_interpret_mode(_GENERIC):
        yield


def vmem_refused(exc: BaseException) -> str:
    """The compiler's scoped-VMEM refusal (E1001) in words with its figures, as the compile check off the
    chip gives it (`sweep_compile`), where a run on the TPU raised it: on a chip the kernel is compiled
    natively when it first runs, so the refusal comes there. '' for any other error."""
    return scoped_vmem_refusal(f"{exc}")


def _first_line(exc: BaseException) -> str:
    text = (str(exc).strip() or type(exc).__name__).splitlines()[0][:300]
    return f"{type(exc).__name__}: {text}"


def _replace(result: ConfigResult, **changes: Any) -> ConfigResult:
    return dataclasses.replace(result, **changes)
