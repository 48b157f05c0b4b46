"""A sweep ("Tune") inside one child: every config of `job.sweep`, judged one after another.

One process for many configs saves a fresh interpreter and JAX import per config (~1 s each). Per
config, cheapest first, so that a config already ruled out costs little:
1. trace the kernel at the target size with `jax.ShapeDtypeStruct` inputs (nothing is allocated);
   a kernel that refuses the size (blocks that do not divide it) is an `error`;
2. count its VMEM from that trace (`checks.memory`): over the chip's capacity is `over_vmem`;
3. estimate its time at the target size (`model`);
4. lower it for each chosen chip with interpret mode off: a compiler error is `rejected`;
5. run it in interpret mode at the check size (grown to fit its blocks) against the reference:
   a mismatch is `wrong`, an exception `error`; only configs still in the running get here;
6. on a TPU host, time it for real at the target size (`measured_seconds`).
Each config goes out as a `config` event as soon as it is judged (the page fills its table live).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import time
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import jax
from jax.experimental.pallas import tpu as pltpu

from sandbox.harness import calls, usercode
from sandbox.harness.checks import timing
from sandbox.harness.checks.memory import kernel_memory
from sandbox.harness.errors import Scene, translate
from sandbox.harness.lowering import check as lowering
from sandbox.harness.model.estimate import estimate_jaxpr, known_values, target_inputs, trace
from sandbox.harness.target import Target, TargetError, configure
from sandbox.protocol import Case, ConfigResult, EventWriter, Job, LoweringVerdict, Tolerance, chip_info
from sandbox.protocol.result import ErrorInfo
from sandbox.protocol.sweep import ParamValue
from sandbox.verdict.compare import compare, tolerance_for

MEASURE_BUDGET_SECONDS = 0.5  # per config, on a TPU host
# `force_tpu_interpret_mode(True)`: pallas_call and pl.kernel get `interpret=True`, the generic
# interpreter (the stubs type the parameter as InterpretParams only).
_GENERIC: Any = True


class Stop(Exception):
    """An `error` event was emitted: the sweep as a whole cannot go on."""


@dataclass
class SweepPlan:
    kernel: Callable[..., Any]
    make_inputs: Callable[[dict[str, int]], Any]  # a problem size → the kernel's inputs
    reference: Callable[..., Any] | None
    tolerances: dict[str, Tolerance]
    mutable: tuple[int, ...]
    check_base: dict[str, int]  # the correctness size before it is fitted to a config's blocks
    files: tuple[str, ...]
    expected: dict[tuple[tuple[str, int], ...], Any] = field(default_factory=dict)  # per check size


class SweepSession:
    def __init__(self, job: Job, events: EventWriter) -> None:
        assert job.sweep is not None
        self.job, self.spec, self.events = job, job.sweep, events

    def run(self) -> None:
        job = self.job
        try:
            target = self._phase("target", lambda: configure(job.chip, job.mode, job.options, job.devices))
            self.events.emit("versions", versions=target.versions(), interpret=target.interpret)
            plan = self._phase("import", self._load)
            self.events.emit("imported")
            target_args = self._phase(
                "make_inputs", lambda: _abstract_inputs(plan, self.spec.size), plan.files
            )
        except Stop:
            return
        selected = self.spec.configs()
        for done, (index, params) in enumerate(selected, start=1):
            result = self._config(target, plan, target_args, index, params)
            self.events.emit("config", result=result, done=done, of=len(selected))

    def _phase(
        self, phase: str, step: Callable[[], Any], files: tuple[str, ...] = (usercode.USER_FILE,)
    ) -> Any:
        try:
            return step()
        except TargetError as exc:
            self.events.emit("error", error=self._explain(exc, phase, files), fault="request")
            raise Stop from exc
        except Exception as exc:
            self.events.emit("error", error=self._explain(exc, phase, files))
            raise Stop from exc

    def _explain(self, exc: BaseException, phase: str, files: tuple[str, ...]) -> ErrorInfo:
        """The user's message for a failure, by the same translator as a run (`sandbox.harness.errors`)."""
        scene = Scene(files=files, devices=self.job.devices, jax_version=jax.__version__)
        translation = translate(exc, phase, scene)
        self.events.emit("log", text=translation.log)
        return translation.error

    # -- what the user's file provides ----------------------------------------------------------

    def _load(self) -> SweepPlan:
        entry = self.job.entry
        module = usercode.load_module("kernel", self.job.source, usercode.USER_FILE)
        if entry is None:
            return _scratch_plan(module)
        reference = usercode.load_module("reference", entry.reference_source, usercode.REFERENCE_FILE)
        base = _base_case(entry.cases, self.spec.case)
        check = next((c for c in entry.cases if not c.tpu_only), base)
        return SweepPlan(
            kernel=_require(module, entry.entry_point),
            make_inputs=lambda dims: reference.make_inputs(
                Case(base.name, base.dtype, base.seed, {**base.dims, **dims})
            ),
            reference=reference.reference,
            tolerances=entry.tolerances,
            mutable=entry.mutable_inputs,
            check_base=dict(check.dims),
            files=(usercode.USER_FILE, usercode.REFERENCE_FILE),
        )

    # -- one config ------------------------------------------------------------------------------

    def _config(
        self, target: Target, plan: SweepPlan, target_args: Any, index: int, params: dict[str, ParamValue]
    ) -> ConfigResult:
        chip = chip_info(self.job.chip)
        spent: dict[str, float] = {}
        dims = self.spec.check_dims(params, plan.check_base)
        result = ConfigResult(index=index, params=params, status="ok", reason="", check_size=dims)
        fn = _bound(plan.kernel, params, plan.mutable)
        t0 = time.perf_counter()
        try:
            closed = trace(fn, target_args, target.chip_context())
        except Exception as exc:
            return _replace(result, status="error", reason=f"at the target size: {_first_line(exc)}")
        spent["trace"] = time.perf_counter() - t0
        demand = kernel_memory(closed)
        result = _replace(result, vmem_bytes=demand.vmem_bytes, vmem_capacity_bytes=chip.vmem_bytes)
        if demand.vmem_bytes > chip.vmem_bytes:
            reason = f"needs {demand.vmem_bytes / 2**20:.1f} MiB of VMEM; a {chip.title} has {chip.vmem_bytes / 2**20:.0f} MiB"
            result = _replace(result, status="over_vmem", reason=reason)
        result = self._estimate(result, closed, target_args, spent)
        result = self._lower(result, target, fn, target_args, spent)
        if result.status == "ok":
            result = self._check(result, target, plan, params, dims, spent)
        if result.status == "ok" and not target.interpret:
            result = self._measure(result, target, plan, params, spent)
        if result.status == "ok" and result.estimated_seconds is None and result.measured_seconds is None:
            result = _replace(result, status="unestimated")
        return _replace(result, host_seconds={k: round(v, 4) for k, v in spent.items()})

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
            estimate=estimate,
        )

    def _lower(
        self, result: ConfigResult, target: Target, fn: Callable[..., Any], args: Any, spent: dict[str, float]
    ) -> ConfigResult:
        if not target.interpret:
            return result  # on a TPU the real compile happens when the config is measured
        t0 = time.perf_counter()
        verdicts = []
        for chip in dict.fromkeys((self.job.chip, *self.spec.chips)):
            checked = lowering.check(fn, args, target, chip, ir=False)
            message = checked.error.message[:1000] if checked.error else ""
            verdicts.append(
                LoweringVerdict(chip=chip, lowers=checked.lowers, message=message, warnings=checked.warnings)
            )
        spent["lower"] = time.perf_counter() - t0
        result = _replace(result, lowering=tuple(verdicts))
        rejected = [v for v in verdicts if v.lowers is False]
        if rejected and result.status == "ok":
            first = rejected[0]
            chips = ", ".join(v.chip for v in rejected)
            result = _replace(
                result,
                status="rejected",
                reason=f"rejected by the TPU compiler for {chips}: {_sentence(first.message)}",
            )
        return result

    def _check(
        self,
        result: ConfigResult,
        target: Target,
        plan: SweepPlan,
        params: dict[str, ParamValue],
        dims: dict[str, int],
        spent: dict[str, float],
    ) -> ConfigResult:
        """Run the config at `dims` against the reference.

        In the simulator, JAX's generic Pallas interpreter goes first: it is several times faster
        than TPU interpret mode (no simulated DMAs, semaphores or cores). TPU interpret mode, the
        authority, decides whenever the generic one fails or disagrees with the reference.
        """
        t0 = time.perf_counter()
        where = ", ".join(f"{k}={v}" for k, v in dims.items())
        try:
            inputs = tuple(plan.make_inputs(dims))
            expected = self._expected(plan, inputs, dims)
        except Exception as exc:
            spent["check"] = time.perf_counter() - t0
            return _replace(result, status="error", reason=f"at {where}: {_first_line(exc)}")
        verdict: tuple[str, Any] = ("error", None)
        how = "on the TPU"
        for generic in (True, False) if target.interpret else (False,):
            verdict = self._compare(target, plan, params, inputs, expected, generic)
            how = "generic interpreter" if generic else "TPU interpret mode" if target.interpret else how
            if verdict[0] == "ok":
                break
        spent["check"] = time.perf_counter() - t0
        kind, found = verdict
        if kind == "error":
            return _replace(result, status="error", reason=f"at {where}: {found}")
        if expected is None:
            return _replace(
                result, reason=_ok_reason(result, f"ran at {where} ({how}; no reference to check)")
            )
        worst = max((c.max_abs_error or 0.0 for c in found), default=0.0)
        bad = next((c for c in found if not c.passed), None)
        if kind == "wrong":
            detail = f"{bad.mismatch_count:,} of {bad.total:,} elements differ" if bad else "outputs missing"
            reason = f"wrong at {where}: {detail} (max abs error {worst:.3g})"
            return _replace(result, status="wrong", correct=False, max_abs_error=worst, reason=reason)
        return _replace(
            result,
            correct=True,
            max_abs_error=worst,
            reason=_ok_reason(result, f"correct at {where} ({how})"),
        )

    def _compare(
        self,
        target: Target,
        plan: SweepPlan,
        params: dict[str, ParamValue],
        inputs: tuple[Any, ...],
        expected: Any,
        generic: bool,
    ) -> tuple[str, Any]:
        """("ok" | "wrong", output checks) or ("error", what went wrong)."""
        try:
            with target.chip_context(), _generic_interpreter(generic):
                got = calls.prepare(functools.partial(plan.kernel, **params), inputs, plan.mutable).run()
        except Exception as exc:
            return "error", _first_line(exc)
        if expected is None:
            return "ok", []
        checks = [
            compare(name, got[i][1], want, tolerance_for(str(want.dtype), plan.tolerances))
            for i, (name, want) in enumerate(expected)
            if i < len(got)
        ]
        good = len(checks) == len(expected) and all(c.passed for c in checks)
        return ("ok" if good else "wrong"), checks

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
            inputs = tuple(plan.make_inputs(self.spec.size))
            with target.chip_context():
                call = calls.prepare(functools.partial(plan.kernel, **params), inputs, plan.mutable)
                call.run_quietly()
                stats = timing.measure(call.run_quietly, MEASURE_BUDGET_SECONDS)
        except Exception as exc:
            spent["measure"] = time.perf_counter() - t0
            return _replace(
                result, status="error", reason=f"on the TPU at the target size: {_first_line(exc)}"
            )
        spent["measure"] = time.perf_counter() - t0
        return _replace(result, measured_seconds=stats.median)


@contextlib.contextmanager
def _generic_interpreter(on: bool) -> Iterator[None]:
    """Kernels built inside run under JAX's generic Pallas interpreter (`interpret=True`)."""
    if not on:
        yield
        return
    with pltpu.force_tpu_interpret_mode(_GENERIC):
        yield


def _scratch_plan(module: types.ModuleType) -> SweepPlan:
    make_inputs = _require(module, "make_inputs")
    defaults = {
        name: p.default
        for name, p in inspect.signature(make_inputs).parameters.items()
        if isinstance(p.default, int) and not isinstance(p.default, bool)
    }
    return SweepPlan(
        kernel=_require(module, "kernel"),
        make_inputs=lambda dims: make_inputs(0, **dims),
        reference=getattr(module, "reference", None),
        tolerances={},
        mutable=(),
        check_base=defaults,
        files=(usercode.USER_FILE,),
    )


def _base_case(cases: tuple[Case, ...], name: str) -> Case:
    if name:
        for case in cases:
            if case.name == name:
                return case
        raise ValueError(f"the entry has no case {name!r}")
    return next((c for c in reversed(cases) if c.tpu_only), cases[-1])


def _abstract_inputs(plan: SweepPlan, size: dict[str, int]) -> tuple[Any, ...]:
    """The inputs at the target size: shapes and dtypes, small integer ones as values (`target_inputs`)."""
    return target_inputs(lambda: tuple(plan.make_inputs(size)))


def _bound(
    kernel: Callable[..., Any], params: dict[str, ParamValue], mutable: tuple[int, ...]
) -> Callable[..., Any]:
    """`kernel` with this config's parameters; mutable inputs become fresh refs inside the trace."""
    fn = functools.partial(kernel, **params)
    if not mutable:
        return fn

    def with_refs(*args: Any) -> Any:
        refs = [jax.new_ref(a) if i in mutable else a for i, a in enumerate(args)]
        out = fn(*refs)
        return out, [refs[i][...] for i in mutable]

    return with_refs


def _require(module: types.ModuleType, name: str) -> Callable[..., Any]:
    fn = getattr(module, name, None)
    if not callable(fn):
        raise NameError(f"the file must define a function `{name}`")
    return fn


def _ok_reason(result: ConfigResult, checked: str) -> str:
    if result.estimated_seconds is None:
        return f"{checked}; {result.reason}" if result.reason else checked
    fraction = f", {result.roofline_fraction:.0%} of roofline" if result.roofline_fraction is not None else ""
    return f"{result.estimated_seconds * 1e3:.3g} ms, {result.bound}-bound{fraction}; {checked}"


def _sentence(text: str, limit: int = 200) -> str:
    """The first sentence of a compiler message (they run on with shapes and index maps)."""
    first = text.split(". ", 1)[0].rstrip(".")
    return first if len(first) <= limit else first[: limit - 1] + "…"


def _first_line(exc: BaseException) -> str:
    text = (str(exc).strip() or type(exc).__name__).splitlines()[0][:300]
    return f"{type(exc).__name__}: {text}"


def _replace(result: ConfigResult, **changes: Any) -> ConfigResult:
    return dataclasses.replace(result, **changes)
