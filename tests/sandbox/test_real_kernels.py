"""JAX's own Pallas TPU kernels (`jax/experimental/pallas/ops/tpu`), unmodified, as a user would run them.

Each file in `real_kernels/` is a scratch file that imports a shipped kernel and checks it against a
plain-JAX reference at small shapes; every row runs through a real backend and the harness, like a
user's run. A row passes (some only through the harness's fixes), or, where the simulator cannot run
the kernel correctly, asserts the exact explanation the user gets.

The everyday suite runs the matmul (one bf16 MXU pass, as on a chip) and the ring all-gather in both
DMA modes (several devices, interpret options); the other kernels take the same path and run with
`--long` (`tests.matrices`; CI passes it), and so does the test that reads the ragged kernel's fixes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from sandbox.jobs.build import make_job
from sandbox.protocol import Chip, InterpretOptions, RunResult, RunStatus
from tests.matrices import LONG, running, split
from tests.sandbox.conftest import assert_nothing_internal, run_jobs

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent / "real_kernels"
PASSED = RunStatus.PASSED


# JAX's shipped kernels checked in f32 at an f32 tolerance: their dots run at the default precision,
# one bf16 MXU pass on a TPU and in the simulator, so they mismatch as they do on a chip (issue #39).
BF16_PASS = "mismatch: 1/1 cases differ from the reference; case 'scratch'"
ONE_BF16_PASS = (
    "matmul",
    "flash_attention_forward",
    "flash_attention_backward",
    "splash_attention",
    "megablox_gmm",
    "ragged_paged_attention",
)


@dataclass(frozen=True)
class Real:
    name: str
    status: RunStatus = PASSED
    # For a kernel interpret mode cannot run: the start of the summary the user gets.
    headline: str = ""
    chip: Chip = "v5p"
    options: InterpretOptions | None = None
    label: str = ""

    @property
    def id(self) -> str:
        return self.label or self.name

    @property
    def source(self) -> str:
        return (HERE / f"{self.name}.py").read_text()


OVERTAKEN = "returned for a later copy while an earlier one on the same semaphore was still in flight"
SUITE = (
    Real("matmul", RunStatus.MISMATCH, BF16_PASS),
    Real("flash_attention_forward", RunStatus.MISMATCH, BF16_PASS),
    Real("flash_attention_backward", RunStatus.MISMATCH, BF16_PASS),
    Real("paged_attention"),
    Real("splash_attention", RunStatus.MISMATCH, BF16_PASS),
    Real("megablox_gmm", RunStatus.MISMATCH, BF16_PASS),
    Real("prng_threefry"),
    Real("rows_split_by_core_index"),
    # Interpret mode runs a DMA when it is waited on, queued copies last-in first-out; the ring's
    # waits can then return for the next step's copy while the rows they forward are still NaN
    # (whether they do depends on how the device threads interleave: see the test below).
    Real("all_gather", RunStatus.MISMATCH, "mismatch: 1/1 cases differ from the reference; case 'scratch'"),
    Real("all_gather", options=InterpretOptions(dma_execution_mode="eager"), label="all_gather-eager"),
    # Plain interpret mode stops it twice: a read through a reshaped ref, then a masked store into a
    # rank-3 ref it wrongly calls out of bounds; both are fixed (see the test below).
    Real("ragged_paged_attention", RunStatus.MISMATCH, BF16_PASS),
)
SUITE_PARAMS = split(SUITE, ("matmul", "all_gather", "all_gather-eager"), id=lambda row: row.id)


@pytest.fixture(scope="module")
def results(request: pytest.FixtureRequest) -> dict[str, RunResult]:
    """Each row this session runs, keyed by its id."""
    rows = running(SUITE_PARAMS, request.config)
    jobs = [
        make_job(row.source, chip=row.chip, options=row.options, timing_budget_seconds=0.05, trace=False)
        for row in rows
    ]
    return {row.id: result for row, result in zip(rows, run_jobs(jobs), strict=True)}


@pytest.mark.parametrize("row", SUITE_PARAMS)
def test_a_shipped_kernel_runs_unmodified(row: Real, results: dict[str, RunResult]):
    result = results[row.id]
    if row.id == "all_gather" and result.status is PASSED:
        pytest.skip("this time no copy overtook another: the ring gathered correctly")
    assert result.status == row.status, result.summary
    assert result.summary.startswith(row.headline), result.summary
    if row.status is PASSED:
        assert result.lowering is not None and result.lowering.lowers is True, result.summary
        assert result.memory is not None and result.memory.vmem_bytes, "memory figures for every kernel"


def test_a_shipped_f32_kernel_mismatches_as_on_a_chip_and_says_why(results: dict[str, RunResult]):
    for row in SUITE:
        if row.name in ONE_BF16_PASS and row.id in results:
            (case,) = results[row.id].cases
            assert "one bf16 MXU pass (the default precision), as on a real TPU" in case.note, row.id


def test_interpret_mode_says_why_the_ring_all_gather_goes_wrong(results: dict[str, RunResult]):
    (case,) = results["all_gather"].cases
    if case.passed:
        pytest.skip("this time no copy overtook another: the ring gathered correctly")
    assert OVERTAKEN in case.note and OVERTAKEN in results["all_gather"].summary
    assert "DMA execution mode 'eager' runs every copy at .start()" in case.note


@LONG
def test_ragged_paged_attention_runs_through_the_harness_fixes(results: dict[str, RunResult]):
    from sandbox.harness.jaxapi import interpret_fixes as fixes

    versions = results["ragged_paged_attention"].versions
    assert versions is not None
    # It finds its TPU generation through `jax.devices()[0].device_kind`, reads through reshaped refs,
    # and masks stores into a (16, 2, 128) ref.
    needed = {fixes.DEVICE_KIND, fixes.REF_VIEWS, fixes.MASKED_STORE_BOUNDS}
    assert needed <= set(versions.interpret_fixes)


def test_nothing_internal_reaches_a_user(results: dict[str, RunResult]):
    for name, result in results.items():
        assert_nothing_internal(name, result)


def test_the_shipped_kernels_are_all_here():
    assert {p.stem for p in HERE.glob("*.py")} == {row.name for row in SUITE}
