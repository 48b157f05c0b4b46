"""Mode `both` (`sandbox.backends.both`): one run natively and in the simulator, both verdicts in one
result. On this CPU machine the native half runs in a chip slot whose chip is not here (the local
backend gives it libtpu's environment, and libtpu says no TPU started), so the two verdicts differ
for real; the comparison of outputs is tried with a second simulated run standing in for the chip.
On the lent v5e the whole path runs on the chip (tests/tpu)."""

from __future__ import annotations

import threading
from dataclasses import replace

import numpy as np

from sandbox.backends import both
from sandbox.backends.execute import _execute
from sandbox.backends.local import LocalBackend
from sandbox.catalog.entries import load_catalog
from sandbox.jobs.build import make_job
from sandbox.protocol import Job, RunResult, RunStatus, Tolerance
from sandbox.results.text_report import render
from tests.backends import suite_backend
from tests.sandbox.conftest import run_job_on
from tests.sandbox.test_local_chip_slot import SLOT

# Reads one element of a scratch buffer it never wrote: zero-filled memory gives the reference's
# answer, NaN-filled memory (the simulator's default fill) a NaN in that element only.
READS_UNWRITTEN = """
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _body(x_ref, o_ref, scratch):
    rows = jax.lax.broadcasted_iota(jnp.int32, x_ref.shape, 0)
    cols = jax.lax.broadcasted_iota(jnp.int32, x_ref.shape, 1)
    unwritten = jnp.where((rows == 3) & (cols == 5), scratch[...], 0.0)
    o_ref[...] = x_ref[...] * 2 + unwritten


def kernel(x):
    return pl.pallas_call(
        _body,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        scratch_shapes=[pltpu.VMEM(x.shape, x.dtype)],
    )(x)


def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (8, 128), jnp.float32),)


def reference(x):
    return x * 2
"""


def test_a_run_in_both_modes_has_the_chips_result_and_the_simulators_beside_it():
    entry = load_catalog().get("tiled_matmul_pallas_call")
    backend = LocalBackend(tpu_slots=(SLOT,))
    seen: list = []
    try:
        job = make_job(entry.solution_source, entry=entry, chip="v5e", mode="both")
        result = run_job_on(backend, job, seen.append)
    finally:
        backend.close()
    # Followers see the chip's run, then one line saying the simulator runs; its own events stay in the result.
    said = [e.data["phase"] for e in seen if e.kind == "progress" and "simulating" in e.data["phase"]]
    assert said == ["simulating it as a v5e"] and not [e for e in seen if e.kind == "case"]
    # The chip's half: libtpu found no TPU here. The simulator's: every case passed.
    assert result.mode == "tpu" and result.status is RunStatus.ERROR
    assert result.both is not None
    assert result.both.chip_status is RunStatus.ERROR and result.both.simulated_status is RunStatus.PASSED
    assert not result.both.agree and result.both.cases == () and result.both.largest == ""
    assert result.both.simulated_summary.startswith("passed: ")
    assert (
        result.both.estimated_seconds is None and result.both.measured_seconds is None
    )  # the chip timed nothing
    report = render(result)
    assert "chip and simulator: DIFFERENT verdicts: chip error, simulated passed" in report


def run_with_a_stand_in_chip(job: Job) -> RunResult:
    """`both.run_both` as `execute` runs it, the chip's half simulated with zero-filled memory."""
    backend = suite_backend()

    def run_one(one: Job, sink, outputs) -> tuple[RunResult, bool]:  # type: ignore[no-untyped-def]
        if one.mode == "tpu":
            one = replace(one, mode="interpret", options=replace(one.options, uninitialized_memory="zero"))
        finished = _execute(backend, one, threading.Event(), sink, None, outputs)
        return finished.result, finished.reusable

    result, reusable = both.run_both(job, lambda kind, data: None, run_one)
    assert reusable
    return result


def test_the_outputs_of_both_runs_are_compared_element_by_element():
    result = run_with_a_stand_in_chip(make_job(READS_UNWRITTEN, chip="v5e", mode="both"))
    side = result.both
    assert side is not None and result.status is RunStatus.PASSED
    assert side.simulated_status is RunStatus.MISMATCH and not side.agree
    (case,) = side.cases
    (check,) = case.outputs
    assert check.mismatch_count == 1 and check.nonfinite_mismatches == 1 and check.total == 8 * 128
    assert side.largest == "1 elements differ (NaN or Inf on one side) in 1 case(s)"


def test_the_largest_difference_names_its_element_and_both_values():
    chip_out = np.zeros((4, 6), np.float32)
    simulated_out = chip_out.copy()
    simulated_out[2, 5] = 0.25
    simulated_out[1, 1] = 0.125
    job = make_job("x = 1", chip="v5e", mode="both")
    tolerance = Tolerance(atol=0.2, rtol=0.0)
    chip = both.Side(_result_with_case(tolerance), {0: [("out", chip_out)]})
    simulated = both.Side(_result_with_case(tolerance), {0: [("out", simulated_out)]})
    side = both.side_by_side(chip, simulated, job)
    assert side.largest_abs_difference == 0.25
    assert side.largest == (
        "largest difference 0.25 in out of case c0 at (2, 5): chip 0.0, simulated 0.25; "
        "1 output(s) outside the run's tolerance"
    )
    assert side.cases[0].outputs[0].mismatch_count == 1  # 0.125 is within atol 0.2


def _result_with_case(tolerance: Tolerance) -> RunResult:
    from sandbox.protocol import CaseResult, InterpretOptions
    from sandbox.verdict.compare import compare

    check = compare("out", np.zeros((4, 6), np.float32), np.zeros((4, 6), np.float32), tolerance)
    case = CaseResult("c0", "float32", {}, ((4, 6),), tolerance, True, (check,), 0.0)
    return RunResult(RunStatus.PASSED, "passed", "v5e", "tpu", InterpretOptions(), cases=(case,))


def test_a_machine_without_a_tpu_refuses_mode_both_in_one_line(capsys, tmp_path):
    from sandbox.__main__ import main

    source = tmp_path / "k.py"
    source.write_text("def kernel(x):\n    return x\n")
    assert main(["run", str(source), "--chip", "v5e", "--mode", "both"]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: mode both runs the kernel on this machine's v5e chip too, but there is no TPU on this machine"
    )
