"""A class run's rerun job: the kernel's exported program, checked and timed again where no user code runs.

The class board ranks times (`server.classroom.board`). What a kernel's own process reports is its
word, and it can say anything; so on a chip the kernel's job also exports the program of the case it
timed (`jaxapi.exported`), and the host gives that program to this job (`sandbox.backends.rerun`).
It loads the lesson's reference as the reference's job does (the catalog entry's, or the lesson step's
file without the kernel's bodies: never the student's code), and for the named case:

1. makes the inputs on the CPU, with a seed the kernel's job never saw (`Job.rerun_seed`): a program
   that carries the first seed's answer as a constant is wrong here;
2. computes the reference's outputs on the CPU, in exact arithmetic, as the reference's job does;
3. loads the program (refused unless it is a TPU program of Pallas kernels and StableHLO on exactly
   these inputs) and runs it on the chip; compares each output with the run's own tolerances;
4. times it, as the kernel's job times a kernel: the wall-clock loop, then the profiler's device time.

One `rerun` event says what came of it. Every failure, the program's refusal included, is a reason in
that event, not an error of the run: the run was judged already; only its time for the board is at
stake here.
"""

from __future__ import annotations

import contextlib
import io
import time
from dataclasses import replace
from typing import Any

import jax

from sandbox.harness import calls, measure
from sandbox.harness.checks import timing
from sandbox.harness.jaxapi.exported import ProgramRefused, load_program
from sandbox.harness.reference import Expectation, ReferenceSession
from sandbox.harness.target import Target
from sandbox.protocol import Case, Mode
from sandbox.protocol.events import ProgramRerun
from sandbox.verdict.compare import compare
from sandbox.verdict.tolerances import output_tolerance


class RerunSession(ReferenceSession):
    """The reference's job's loading; instead of sending expected outputs, the program rerun."""

    _since = 0.0  # when the step `_took` times began (set as the rerun starts)

    def _mode(self) -> Mode:
        return "tpu"  # the program runs on the chip; its inputs and reference on the CPU, below

    def _execute(self, target: Target, plan: Expectation | None) -> None:
        self.events.emit("rerun", **vars(self._rerun(target, plan)))

    def _rerun(self, target: Target, plan: Expectation | None) -> ProgramRerun:
        job, self._since = self.job, time.monotonic()
        case = _named(plan, job.rerun_case)
        if plan is None or case is None:
            return ProgramRerun(job.rerun_case, job.rerun_seed, False, "the lesson has no such case to check")
        case = replace(case, seed=job.rerun_seed)
        try:
            return self._checked_and_timed(target, plan, case)
        except ProgramRefused as exc:
            return ProgramRerun(case.name, case.seed, False, f"the program was refused: {exc}")
        except Exception as exc:  # the program failed on the chip, or the lesson's code on new inputs
            first = (str(exc).strip().splitlines() or [""])[0][:300]
            return ProgramRerun(
                case.name, case.seed, False, f"the rerun failed: {type(exc).__name__}: {first}"
            )

    def _checked_and_timed(self, target: Target, plan: Expectation, case: Case) -> ProgramRerun:
        with contextlib.redirect_stdout(io.StringIO()), jax.default_device(jax.devices("cpu")[0]):
            inputs = tuple(plan.make_inputs(case))
            expected = calls.flatten("out", calls.run_reference(plan.reference, inputs))
        self._took("the inputs and the reference's outputs")
        program = jax.jit(load_program(self.job.program, inputs))
        self._took("the program loaded and checked")
        chip = jax.devices()[0]
        on_chip = tuple(jax.device_put(x, chip) for x in inputs)
        got = calls.flatten("out", jax.block_until_ready(program(*on_chip)))
        self._took("the program's first call")
        wrong = self._wrong(got, expected, plan)
        self._took("the comparison")
        if wrong:
            return ProgramRerun(case.name, case.seed, False, f"on new inputs the program's {wrong}")

        def run() -> None:
            jax.block_until_ready(program(*on_chip))

        stats = timing.measure(run, self.job.timing_budget_seconds)
        device = measure.device_time(target, run)
        self._took("the timing")
        return ProgramRerun(
            case.name,
            case.seed,
            True,
            device_seconds=device.device_seconds if device else None,
            wall_median_seconds=stats.median,
            runs=stats.n,
        )

    def _took(self, step: str) -> None:
        """Where a rerun's time goes, for the host's log (a rerun has the wall-clock limit of a job)."""
        now = time.monotonic()
        self.events.emit("log", text=f"rerun: {step} took {now - self._since:.2f} s")
        self._since = now

    def _wrong(self, got: list[tuple[str, Any]], expected: list[tuple[str, Any]], plan: Expectation) -> str:
        """What is wrong with the program's outputs ("" when they match the reference's), compared in
        order as the checker compares a kernel's (an in-place entry's mutated inputs come first)."""
        if len(got) != len(expected):
            return f"{len(got)} outputs are not the reference's {len(expected)}"
        declared = self.job.entry.tolerances if self.job.entry is not None else plan.tolerances
        for (_, g), (name, e) in zip(got, expected, strict=True):
            check = compare(name, g, e, output_tolerance(name, str(e.dtype), declared))
            if not check.passed:
                return f"{name} does not match the reference's ({check.mismatch_count:,} of {check.total:,} elements)"
        return ""


def _named(plan: Expectation | None, name: str) -> Case | None:
    if plan is None or plan.configs is not None:
        return None
    return next((c for c in plan.cases if c.name == name), None)
