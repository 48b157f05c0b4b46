"""JAX's own TPU test kernels (rebuilt in `conformance_kernels.py`) through the user's path: what passes
on a TPU passes here, or gets the exact honest message and the `unsupported` status."""

from __future__ import annotations

import pytest

from sandbox.jobs.build import make_job
from sandbox.protocol import RunResult, RunStatus
from tests.sandbox.conformance_kernels import ROWS, Conformance
from tests.sandbox.conftest import assert_nothing_internal, run_jobs

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def results() -> dict[str, RunResult]:
    jobs = [make_job(row.source, chip=row.chip, timing_budget_seconds=0.05, trace=False) for row in ROWS]
    return {row.name: result for row, result in zip(ROWS, run_jobs(jobs), strict=True)}


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.name)
def test_a_jax_tpu_test_kernel_passes_or_is_honestly_unsupported(row: Conformance, results):
    result = results[row.name]
    assert result.status == row.status, result.summary
    assert result.summary.startswith(row.headline), result.summary
    if row.status is RunStatus.PASSED:
        assert result.lowering is not None and result.lowering.lowers is True, result.summary
    assert_nothing_internal(row.name, result)


def test_each_row_follows_a_distinct_jax_test():
    assert len({row.jax_test for row in ROWS}) == len(ROWS)


def test_the_readme_states_the_suites_size_and_pass_share():
    from pathlib import Path

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    passing = sum(row.status is RunStatus.PASSED for row in ROWS)
    assert f"**{len(ROWS)} kernels, {passing} pass ({passing / len(ROWS):.0%})**".replace("%", " %") in readme
